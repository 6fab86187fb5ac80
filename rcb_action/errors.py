"""Errors a user can cause and fix. Each prints as one line and exits with status 2."""


class RcbError(Exception):
    """A user-fixable problem: bad input, unknown model, missing key, no Docker.

    The message is one line that names the file, field or command to fix.
    """


class TaskError(RcbError):
    """A task folder is malformed (schema, tags or files)."""
