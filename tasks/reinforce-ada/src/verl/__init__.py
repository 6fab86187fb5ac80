# Stand-in written for the rcb task "reinforce-ada": NOT the authors' code (see notes.md).
# verl's package __init__ imports its DataProto (tensordict, ...), version files and logging
# set-up; the task needs only the name DataProto, from the stand-in protocol.py.
from .protocol import DataProto

__all__ = ["DataProto"]
