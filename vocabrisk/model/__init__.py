from vocabrisk.model.head import HeadInfo, locate_head, read_head
from vocabrisk.model.resolve import ModelFiles, resolve_model
from vocabrisk.model.vocabulary import Vocabulary, load_vocabulary

__all__ = ["HeadInfo", "ModelFiles", "Vocabulary", "load_vocabulary", "locate_head", "read_head", "resolve_model"]
