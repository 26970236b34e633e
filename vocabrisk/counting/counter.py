"""The counting hot path: documents in, exact per-token-id counts out.

Every document is encoded on its own, exactly as the model's tokenizer would, with
truncation and padding switched off whatever `tokenizer.json` configures (Pegasus's file
cuts every document at 192 tokens). A batch's ids are counted with one `bincount` over
their concatenation, so Python does no work per token; the same concatenation feeds the 2-gram sample
(`vocabrisk.counting.contexts`) the forecast reads predictability from.

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

from vocabrisk.counting import contexts
from vocabrisk.counting.counts import TokenCounts, utf8_size
from vocabrisk.counting.encoder import Encoded
from vocabrisk.counting.engines import load_encoder, trimmed_spec
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
    ACCELERATE_AFTER loads the accelerator only once a scan has had that many characters of text). SPECIAL_IDS:
    the special tokens' ids, where the caller knows them (the model's vocabulary facts); else they are read from
    the file, which takes a parse of it (0.1 s for a 150k vocabulary)."""

    def __init__(
        self,
        tokenizer_json: Path | str,
        vocab_size: int,
        policy: SpecialTokenPolicy,
        eos_id: int | None,
        engine: str = "tokenizers",
        accelerate_after: int = 0,
        special_ids: Sequence[int] | None = None,
    ):
        if policy.append_eos and eos_id is None:
            raise ValueError("append_eos needs the tokenizer's EOS token id")
        self.tokenizer_json = str(tokenizer_json)
        self.vocab_size = vocab_size
        self.policy = policy
        self.eos_id = eos_id
        self.engine_choice, self.accelerate_after = engine, accelerate_after
        self.special_ids = None if special_ids is None else tuple(special_ids)
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
        return (TokenCounter, (*arguments, self.engine_choice, self.accelerate_after, self.special_ids))

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

    def count(self, texts: Sequence[str], floor: int = 0) -> TokenCounts:
        """Exact counts of a batch of documents, to join counts whose 2-gram sample has reached level FLOOR
        (`contexts.sample`: the 2-grams of documents below it are left out, as joining would drop them)."""
        texts = list(texts)
        if not texts:
            return TokenCounts.zeros(self.vocab_size)
        # bincount's own array is the batch's counts: no zeroed vector of the vocabulary's size to add it into
        # (a fresh one per batch cost ~1.3 ms at 150k tokens, while the encoder's threads waited)
        encoded = self._encode(texts)
        counted = self._counts_of(texts, encoded, floor=floor)
        if self.policy.append_eos:
            counted.counts[self.eos_id] += len(texts)
        counted.documents, counted.text_bytes = len(texts), sum(map(utf8_size, texts))
        return counted

    def long_document(self, floor: int = 0) -> LongDocument:
        """A counter for one document that arrives in pieces (see `vocabrisk.counting.pieces`), to join counts
        at 2-gram level FLOOR (as `count`)."""
        return LongDocument(self, floor)

    def encode_plain(
        self, texts: Sequence[str], before: np.ndarray, bucket: int | None, floor: int = 0
    ) -> tuple[TokenCounts, np.ndarray]:
        """The counts of `texts`, encoded without special tokens whatever the policy, as consecutive parts of
        one document whose ids so far end in BEFORE and whose 2-gram bucket is BUCKET (None: not known yet,
        the 2-grams counted in bucket 0, to be moved; `vocabrisk.counting.contexts`); and the last id
        after them (no document counted). FLOOR: as `count`'s."""
        texts = list(texts)
        encoded = self._encode_plain(texts)
        counted = self._counts_of(texts, encoded, joined=before, bucket=bucket, floor=floor)
        return counted, np.concatenate([before, encoded.ids.astype(np.int64)])[-1:]

    @cached_property
    def _special_rows(self) -> np.ndarray:
        """Which ids are special tokens: 2-grams holding one are not the text's (`vocabrisk.counting.contexts`)."""
        special = np.zeros(self.vocab_size, dtype=bool)
        ids = self.special_ids
        if ids is None:
            ids = [t["id"] for t in trimmed_spec(self.tokenizer_json).get("added_tokens") or [] if t.get("special")]
        special[[i for i in ids if 0 <= i < self.vocab_size]] = True
        return special

    def _counts_of(
        self,
        texts: list[str],
        encoded: Encoded,
        joined: np.ndarray | None = None,
        bucket: int | None = None,
        floor: int = 0,
    ):
        """The token counts and 2-gram sample of encoded texts, refusing ids past the vocabulary.

        Each text is its own document for the sample; with JOINED (the ids just before), the texts are
        consecutive parts of one document, which those ids began, of 2-gram BUCKET.
        """
        ids = encoded.ids
        counts = np.bincount(ids, minlength=self.vocab_size).astype(np.int64, copy=False)
        if counts.size > self.vocab_size:
            raise self._unreadable(texts, encoded)
        special = self._special_rows  # passed on only where one occurs: marking every position costs
        if not counts[special].any() and (joined is None or not special[joined.astype(np.intp)].any()):
            special = None
        if joined is None:
            hashed = [contexts.bucket(t) for t in texts]
            pairs = contexts.sample(ids, encoded.lengths, hashed, special, floor)
        else:
            whole = np.concatenate([joined.astype(ids.dtype), ids])
            tail = whole[-len(ids) - 1 :]  # the 2-gram across the join, and those after it
            known = bucket is not None  # not yet: its 2-grams are all held, to be moved to it
            pairs = contexts.sample(tail, [len(tail)], [bucket or 0], special, floor if known else 0)
        return TokenCounts(counts, contexts=pairs)

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
