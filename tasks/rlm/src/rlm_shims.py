"""Stand-ins for the third-party imports the trimmed `rlm` package makes at import time.

Not the authors' code. The task's environment has numpy only: `python-dotenv` (read by
`rlm/clients/__init__.py`) and `rich` (used by `rlm/logger/verbose.py`, which prints only
when `verbose=True`, never in the cases) are replaced by inert modules registered in
`sys.modules`. Import this module before `rlm`. No provider client (openai, anthropic, ...)
is imported: the cases route `rlm.core.rlm.get_client` to a scripted mock LM.
"""

import sys
import types


def _module(name, **attrs):
    mod = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(mod, key, value)
    sys.modules.setdefault(name, mod)
    return sys.modules[name]


class _Inert:
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return self

    def __getattr__(self, name):
        return self


def _load_dotenv(*args, **kwargs):
    return False


def install():
    _module("dotenv", load_dotenv=_load_dotenv)
    _module("rich")
    _module("rich.console", Console=_Inert, Group=_Inert)
    _module("rich.panel", Panel=_Inert)
    _module("rich.rule", Rule=_Inert)
    _module("rich.style", Style=_Inert)
    _module("rich.table", Table=_Inert)
    _module("rich.text", Text=_Inert)


install()
