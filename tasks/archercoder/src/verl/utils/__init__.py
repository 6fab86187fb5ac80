# Stand-in written for the rcb task "archercoder": NOT the authors' code (see notes.md).
# verl's verl/utils/__init__.py imports its tokenizer helpers (transformers); nothing here
# needs them.
