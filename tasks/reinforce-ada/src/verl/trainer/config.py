# Stand-in written for the rcb task "reinforce-ada": NOT the authors' code (see notes.md).
# verl's AlgoConfig is a dataclass read through .get(key, default); a dict with attribute
# access does the same here.


class AlgoConfig(dict):
    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError as e:
            raise AttributeError(key) from e
