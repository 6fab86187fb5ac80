# Stand-in written for the rcb task "reinforce-ada": NOT Ray (see notes.md).
# The task's code only decorates a function with ray.remote(...) and calls ray.get on what
# its .remote(...) returns; here both run in-process.


class _RemoteFunction:
    def __init__(self, fn):
        self._fn = fn

    def remote(self, *args, **kwargs):
        return self._fn(*args, **kwargs)


def remote(*args, **kwargs):
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return _RemoteFunction(args[0])
    return _RemoteFunction


def get(value):
    return value
