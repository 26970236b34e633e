"""The byte-level BPE tokenizer that vocabrisk's own models use: the demo model and the benchmarks' GPT-2.

GPT-2's recipe: every byte is representable, merges need a pair seen at least twice, and
`<|endoftext|>` is id 0 (the models use it as BOS, EOS and document separator). Imported by
scripts/build_demo_model.py and benchmarks/validity/data.py. Deterministic: the same texts give
the same tokenizer.json.
"""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

EOT = "<|endoftext|>"


def train_tokenizer(texts: Iterable[str], vocab_size: int) -> Tokenizer:
    """A byte-level BPE tokenizer of `vocab_size` tokens trained on `texts`, `<|endoftext|>` at id 0."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=[EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    if tokenizer.token_to_id(EOT) != 0 or tokenizer.get_vocab_size() != vocab_size:
        raise RuntimeError(
            f"tokenizer training gave {tokenizer.get_vocab_size()} tokens with {EOT} at id"
            f" {tokenizer.token_to_id(EOT)}, not {vocab_size} with it at id 0 (too little text?)"
        )
    return tokenizer
