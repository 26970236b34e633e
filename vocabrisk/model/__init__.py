"""The base model: its files, tokenizer and vocabulary, its head, and what they say before any corpus is read.

`resolve` finds a model's files (folders, hub ids, GGUF via `gguf`), `tokenizer` loads its tokenizer,
`vocabulary` and `facts` describe its vocabulary (`groups`: what text each row stands for), `head` reads its
output head, `priors` the data-free priors they give, and `loaded` is the model of a run.
"""

from vocabrisk.model.head import HeadInfo, locate_head, read_head
from vocabrisk.model.resolve import ModelFiles, resolve_model
from vocabrisk.model.vocabulary import Vocabulary, load_vocabulary

__all__ = ["HeadInfo", "ModelFiles", "Vocabulary", "load_vocabulary", "locate_head", "read_head", "resolve_model"]
