"""rcb shim, not the authors' code: a stand-in for transformers.AutoTokenizer that
model/nlp/ebt.py asks for its length (the vocabulary size) and its eos token id.
A name "tiny-<V>" gives a vocabulary of V tokens with eos (the pad token) 0."""


class _TinyTokenizer:
    def __init__(self, vocab_size):
        self.vocab_size = vocab_size
        self.eos_token_id = 0

    def __len__(self):
        return self.vocab_size


class AutoTokenizer:
    @staticmethod
    def from_pretrained(name, **kwargs):
        return _TinyTokenizer(int(str(name).rsplit("-", 1)[1]))
