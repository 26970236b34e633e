"""The counting hot path: documents in, exact per-token-id counts out.

Every document is encoded on its own, exactly as the model's tokenizer would, with
truncation and padding switched off whatever `tokenizer.json` configures (Pegasus's file
cuts every document at 192 tokens). A batch's ids are counted with one `bincount` over
their concatenation, so Python does no work per token.

The ids come from a counting engine (`vocabrisk.counting.engines`): the reference, `tokenizers`, or an
accelerator checked against it; the counts are the same whichever counts. A document holding a byte the
vocabulary has no token for (`vocabrisk.model.tokenizer`) encodes to an id past the vocabulary: no count of
it would be the model's, so it is refused by name (`UnreadableText`), and the executors skip it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from vocabrisk.counting.counts import TokenCounts, utf8_size
from vocabrisk.counting.encoder import Encoded
from vocabrisk.counting.engines import load_encoder
from vocabrisk.counting.pieces import CannotCount, LongDocument, cut_rule, exact_cuts, matched_added_tokens
from vocabrisk.counting.policy import SpecialTokenPolicy
from vocabrisk.model.tokenizer import lacking_bytes


class UnreadableText(CannotCount):
    """Documents of a batch holding a byte the model's vocabulary has no token for: `reasons` by their index."""

    def __init__(self, reasons: dict[int, str]):
        super().__init__(next(iter(reasons.values())))
        self.reasons = reasons


class TokenCounter:
    """Counts documents with one tokenizer under one special-token policy, on the engine ENGINE names
    (`vocabrisk.counting.engines`: `tokenizers`, the default, `fastokens` or `auto`, which with
    ACCELERATE_AFTER loads the accelerator only once a scan has had that many characters of text)."""

    def __init__(
        self,
        tokenizer_json: Path | str,
        vocab_size: int,
        policy: SpecialTokenPolicy,
        eos_id: int | None,
        engine: str = "tokenizers",
        accelerate_after: int = 0,
    ):
        if policy.append_eos and eos_id is None:
            raise ValueError("append_eos needs the tokenizer's EOS token id")
        self.tokenizer_json = str(tokenizer_json)
        self.vocab_size = vocab_size
        self.policy = policy
        self.eos_id = eos_id
        self.engine_choice, self.accelerate_after = engine, accelerate_after
        self.engine = load_encoder(self.tokenizer_json, policy.split_special_tokens, engine, accelerate_after)

    def _encode(self, texts: list[str]) -> Encoded:
        return self.engine.encode(texts, self.policy.add_special_tokens)

    def begin_scan(self) -> None:
        """A new corpus: an accelerator is checked again on its first documents."""
        begin = getattr(self.engine, "begin", None)
        if begin is not None:
            begin()

    @property
    def engine_name(self) -> str:
        """The engine counting now, as a profile records it."""
        return self.engine.name

    @property
    def engine_note(self) -> str | None:
        """Why an accelerator asked for does not count: its disagreement with the reference, if any."""
        return getattr(self.engine, "note", None)

    # What counting long documents in pieces needs, made only when the first one arrives.
    @cached_property
    def _spec(self) -> str:
        return Path(self.tokenizer_json).read_text(encoding="utf-8")

    @cached_property
    def cut_rule(self) -> str | None:
        return cut_rule(self._spec)

    @cached_property
    def exact_cuts(self) -> frozenset[str]:
        return exact_cuts(self._spec)

    @cached_property
    def matched_tokens(self) -> tuple[str, ...]:
        return matched_added_tokens(self._spec, self.policy.split_special_tokens)

    def _encode_plain(self, texts: list[str]) -> Encoded:
        return self.engine.encode(texts, False)

    @cached_property
    def _document_specials(self) -> np.ndarray:
        specials = self._encode([""]).ids if self.policy.add_special_tokens else np.zeros(0, dtype=np.int64)
        return np.bincount(specials.astype(np.int64), minlength=self.vocab_size)

    def __reduce__(self):
        # Worker processes rebuild the tokenizer from its file rather than unpickling it.
        arguments = (self.tokenizer_json, self.vocab_size, self.policy, self.eos_id)
        return (TokenCounter, (*arguments, self.engine_choice, self.accelerate_after))

    def encode(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Token ids of each document (int64), as the model's tokenizer gives them under the policy."""
        texts = list(texts)
        encoded = self._encode(texts)
        if encoded.ids.size and encoded.ids.max() >= self.vocab_size:
            raise self._unreadable(texts, encoded)
        ids = [i.astype(np.int64) for i in encoded.documents()]
        if self.policy.append_eos:
            ids = [np.append(i, self.eos_id) for i in ids]
        return ids

    def count(self, texts: Sequence[str]) -> TokenCounts:
        """Exact counts of a batch of documents."""
        texts = list(texts)
        if not texts:
            return TokenCounts.zeros(self.vocab_size)
        # bincount's own array is the batch's counts: no zeroed vector of the vocabulary's size to add it into
        # (a fresh one per batch cost ~1.3 ms at 150k tokens, while the encoder's threads waited)
        encoded = self._encode(texts)
        counted = self._counts_of(texts, encoded)
        if self.policy.append_eos:
            counted.counts[self.eos_id] += len(texts)
        counted.documents, counted.text_bytes = len(texts), sum(map(utf8_size, texts))
        return counted

    def long_document(self) -> LongDocument:
        """A counter for one document that arrives in pieces (see `vocabrisk.counting.pieces`)."""
        return LongDocument(self)

    def encode_plain(self, texts: Sequence[str]) -> TokenCounts:
        """The counts of `texts`, encoded without special tokens whatever the policy (no document counted)."""
        texts = list(texts)
        return self._counts_of(texts, self._encode_plain(texts))

    def _counts_of(self, texts: list[str], encoded: Encoded) -> TokenCounts:
        """The token counts of encoded texts, refusing ids past the vocabulary."""
        counts = np.bincount(encoded.ids, minlength=self.vocab_size).astype(np.int64, copy=False)
        if counts.size > self.vocab_size:
            raise self._unreadable(texts, encoded)
        return TokenCounts(counts)

    def _unreadable(self, texts: list[str], encoded: Encoded) -> UnreadableText:
        """The error naming each document whose ids go past the vocabulary, and the character why."""
        lacking = lacking_bytes(self.tokenizer_json)
        reasons = {}
        for index, ids in enumerate(encoded.documents()):
            past = ids[ids >= self.vocab_size]
            if past.size:
                byte = lacking[int(past[0]) - self.vocab_size]
                char = next(c for c in texts[index] if byte in c.encode("utf-8"))
                reasons[index] = (
                    f"holds U+{ord(char):04X} (UTF-8 {char.encode('utf-8').hex(' ')}), and the model's vocabulary has"
                    f" no token for byte 0x{byte:02X}, so it cannot read this text; remove such characters to count it"
                )
        return UnreadableText(reasons)

    def document_extras(self) -> np.ndarray:
        """What one document adds beyond its text: the post-processor's special tokens, and EOS."""
        counts = self._document_specials.copy()
        if self.policy.append_eos:
            counts[self.eos_id] += 1
        return counts
