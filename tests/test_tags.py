import pytest

from rcb_action.tasks import TagError, code_lines, parse_tags

GOOD = """\
def f(x):
    # <paper2code name="outer">
    y = x + 1
    # <paper2code name="inner">
    z = y * 2  # trailing comment counts as code

    # a comment line does not count
    # </paper2code name="inner">
    # </paper2code name="outer">
    return z
"""


WHOLE_METHOD = '''\
class Scaler:
    """A class docstring outside the snippet."""

    # <paper2code name="scale">
    def scale(self, x):
        """Scale x.

        Its lines weigh nothing: no check reads them.
        """
        text = """a string that is not a docstring
        counts as code"""
        return 2 * x, text
    # </paper2code name="scale">
'''


def test_docstrings_weigh_nothing():
    parsed = parse_tags("m.py", WHOLE_METHOD)
    (snippet,) = parsed.snippets
    # def, the two lines of the assigned string, return; the docstring's three are out.
    assert parsed.weight(snippet) == 4
    assert snippet.weight(parsed.lines) == 7  # not told the file's docstrings: all count
    # The same text in a file that is not Python has no docstrings.
    assert parse_tags("m.txt", WHOLE_METHOD).docstrings == frozenset()


def test_nested_snippets_and_weights():
    parsed = parse_tags("m.py", GOOD)
    names = [s.name for s in parsed.snippets]
    assert names == ["outer", "inner"]
    outer, inner = parsed.snippets
    assert inner.parent == "outer" and outer.children == ["inner"]
    assert inner.weight(parsed.lines) == 1
    assert outer.weight(parsed.lines) == 2  # nested lines count in the enclosing snippet
    assert outer.body(parsed.lines) == [
        "    y = x + 1\n",
        "    z = y * 2  # trailing comment counts as code\n",
        "\n",
        "    # a comment line does not count\n",
    ]
    assert "paper2code" not in "".join(parsed.stripped())


def test_code_lines_skips_blank_comment_and_tags():
    assert code_lines(["a = 1\n", "\n", "  # c\n", '# <paper2code name="x">\n', "b = 2\n"]) == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('x = 1\n# <paper2code name="a">\ny = 2\n', 'm.py:2: snippet "a" is never closed'),
        (
            '# <paper2code name="a">\n# <paper2code name="b">\n# </paper2code name="a">\n',
            'm.py:3: end tag "a" does not match the innermost open snippet "b" (opened at line 2)',
        ),
        (
            'def f():\n    # <paper2code name="a">\n    x = 1\n# </paper2code name="a">\n',
            'm.py:4: end tag "a" is indented 0 columns but its start tag (line 2) is indented 4',
        ),
        (
            '# <paper2code name="a">\n# </paper2code name="a">\n# <paper2code name="a">\n# </paper2code name="a">\n',
            'm.py:3: duplicate snippet name "a" (first used at line 1)',
        ),
        (
            'x = 1\n# </paper2code name="a">\n',
            'm.py:2: end tag "a" closes nothing: no snippet is open',
        ),
        ("# <paper2code name=a>\n", "m.py:1: malformed paper2code tag"),
    ],
    ids=["unclosed", "mismatched", "misindented", "duplicate", "stray-end", "malformed"],
)
def test_tag_errors_are_one_located_line(text, expected):
    with pytest.raises(TagError) as info:
        parse_tags("m.py", text)
    message = str(info.value)
    assert message.startswith(expected)
    assert "\n" not in message
