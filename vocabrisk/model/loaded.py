"""A model loaded for a run: its files, its vocabulary's facts, where its head is, and its special tokens.

One `LoadedModel` serves every corpus of a run (each candidate of a `rank`), so what is
made from the model alone is made once: the vocabulary facts here, the prior in
`vocabrisk.prior.choose`, which keeps its choices on the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path

from vocabrisk.errors import ModelError
from vocabrisk.model.facts import VocabularyFacts, load_facts
from vocabrisk.model.head import HeadInfo, is_encoder, locate_head
from vocabrisk.model.identity import model_key, weights_key
from vocabrisk.model.resolve import ModelFiles, resolve_model
from vocabrisk.model.tokenizer import preload_tokenizer

BUNDLED_REFERENCE = "reference.txt.gz"


@dataclass(frozen=True)
class LoadedModel:
    """A resolved model: its files, vocabulary and (when it has weights) head location."""

    files: ModelFiles
    vocab: VocabularyFacts
    head: HeadInfo | None
    head_note: str | None  # why there is no head, or what to know about it
    # The priors chosen for this model in this run, by what decided them (`vocabrisk.prior.choose`).
    priors: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def eos_id(self) -> int | None:
        """The token that ends a document: tokenizer_config.json's eos_token, else config.json's id."""
        return self._special_id("eos")

    @property
    def start_id(self) -> int:
        """The token a document starts from, which sampling the model begins with: BOS, else EOS.

        A causal LM sees a document start after its BOS where it has one (Llama, Mistral and
        Gemma tokenizers put it before every document); without one, or where BOS is EOS (GPT-2,
        Pythia, SmolLM, Qwen, the demo), documents were packed one after another, each after the
        EOS that ended the one before.
        """
        start = next((i for i in (self._special_id("bos"), self.eos_id) if i is not None), None)
        if start is None:
            raise ModelError(
                f"{self.files.name}: no BOS or EOS token to start samples from "
                "(tokenizer_config.json bos_token/eos_token, or config.json bos_token_id/eos_token_id)",
                hint="give text in the model's own distribution with --reference",
            )
        return start

    def _special_id(self, kind: str) -> int | None:
        token = self.files.tokenizer_config().get(f"{kind}_token")
        if isinstance(token, dict):
            token = token.get("content")
        if isinstance(token, str):
            found = self.vocab.id_of(token)
            if found is not None:
                return found
        config_id = (self.files.config or {}).get(f"{kind}_token_id")
        return config_id if isinstance(config_id, int) else None

    @property
    def bundled_reference(self) -> Path | None:
        """A sample of the model's own pretraining distribution shipped with it (the demo model has one)."""
        path = self.files.folder / BUNDLED_REFERENCE
        return path if path.exists() else None

    def head_mismatch(self) -> dict:
        """Head rows no token maps to (padded vocabularies), and token ids with no head row."""
        if self.head is None:
            return {}
        rows, size = self.head.rows, self.vocab.size
        return {"head_rows_without_token": max(rows - size, 0), "tokens_without_head_row": max(size - rows, 0)}

    @cached_property
    def weights_key(self) -> str:
        """Which weights this model has (`vocabrisk.model.identity.weights_key`), read once a run: what running it
        measured is kept under it."""
        return weights_key(self.files)

    @property
    def calibration_key(self) -> str:
        """The key this model's saved calibration and measured old-text losses are kept under."""
        return model_key(self.metadata(), {"fingerprint": self.vocab.fingerprint})

    def metadata(self) -> dict:
        """What a profile records about the model (`Profile.model`); the head stays a HeadInfo until saved."""
        return {
            "name": self.files.name,
            "head": self.head,
            "head_note": self.head_note,
            "encoder": is_encoder(self.files.config),
            "weights_key": self.weights_key,
            **self.head_mismatch(),
        }


def load_model(name: str, *, counted_here: bool = False) -> LoadedModel:
    """Resolve `name` (`demo`, a folder, a GGUF file, a hub id in the local cache) and read what a scan needs.

    `counted_here`: this process will count with the model's tokenizer, so where its vocabulary
    facts must be computed, the tokenizer is loaded for counting meanwhile (`load_facts`).
    """
    files = resolve_model(name)
    meanwhile = partial(preload_tokenizer, files.tokenizer_json) if counted_here else None
    vocab = load_facts(files.tokenizer_json, meanwhile)
    head, note = locate_head(files)
    return LoadedModel(files, vocab, head, note)
