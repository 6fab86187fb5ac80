"""Helpers shared by the checks: normalising REPL error text and reading the call logs."""

import re

# A REPL error may be reported as the authors do ("\nZeroDivisionError: division by zero")
# or with a traceback before it: both are the same event for the transcripts.
_ERROR = re.compile(
    r"(?:Traceback \(most recent call last\):\n(?:[ \t][^\n]*\n)*)?"
    r"\b([A-Za-z_]*(?:Error|Exception)): [^\n]*"
)


def norm_text(text):
    if not isinstance(text, str):
        return text
    text = _ERROR.sub(lambda m: f"<{m.group(1)}>", text)
    return re.sub(r"\n{2,}", "\n", text).strip()


def norm_messages(messages):
    return [{"role": m["role"], "content": norm_text(m["content"])} for m in messages]


def calls(log):
    """The order of the LM calls: (model, kind, which RLM, which turn) or the sub-prompt."""
    out = []
    for entry in log:
        if entry["kind"] == "sub":
            out.append(("sub", entry["model"], entry["prompt"]))
        else:
            out.append(("rlm", entry["model"], entry["agent"], str(entry["turn"])))
    return out


def transcripts(log):
    return [norm_messages(e["messages"]) for e in log if e["kind"] == "rlm"]


def same_run(out, ref):
    """The same LM calls in the same order, each given the same messages."""
    assert calls(out["log"]) == calls(ref["log"])
    for got, want in zip(transcripts(out["log"]), transcripts(ref["log"]), strict=True):
        assert got == want


def norm_blocks(blocks):
    out = []
    for it in blocks:
        out.append(
            {
                "response": it["response"],
                "final_answer": it["final_answer"],
                "blocks": [
                    {**b, "code": b["code"].strip(), "stdout": norm_text(b["stdout"]), "sub_responses": [norm_text(r) for r in b["sub_responses"]]}
                    for b in it["blocks"]
                ],
            }
        )
    return out
