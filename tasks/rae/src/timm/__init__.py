# Stand-in for the parts of timm the RAE code imports (timm is not in this task's env).
# Not the authors' code and not timm's: see notes.md.
