"""Stand-in for pydantic (not in this task's environment), written for this task: not the
authors' code. trm.py uses only `BaseModel` as a typed config record; this keeps that use:
fields are the class annotations, a missing field takes the class default, keys that are
not fields are ignored (pydantic's default), and no type coercion is done (the cases pass
values of the annotated types)."""


class BaseModel:
    def __init__(self, **data):
        fields = {}
        for klass in reversed(type(self).__mro__):
            fields.update(getattr(klass, "__annotations__", {}))
        for name in fields:
            if name in data:
                value = data[name]
            elif hasattr(type(self), name):
                value = getattr(type(self), name)
            else:
                raise TypeError(f"{type(self).__name__}: missing field {name!r}")
            setattr(self, name, value)
