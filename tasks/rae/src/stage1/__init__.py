from .rae import RAE
