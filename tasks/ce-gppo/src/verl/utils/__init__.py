# Stand-in written for this task, not the authors' code: verl's verl/utils/__init__.py
# imports the tokenizer helpers (transformers), which nothing in this task uses.
