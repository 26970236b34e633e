"""A byte-level BPE tokenizer of 150k tokens, for benchmarks only (run in the 0.23 bench venv).

../shared/data has no tokenizer of 100k+ tokens, and the per-vocabulary costs a scan pays grow
with the vocabulary, so this trains one as an olmo2/Qwen-class stand-in: byte-level BPE with
GPT-2's pre-tokenizer, trained on the shared corpora plus "pseudo-words" (the first half of one
real word joined to the second half of another, from the same corpus), which the 6 MB of real
text alone runs out of at ~100k merges. The pieces therefore have the scripts and shapes of
real text. Seeded: the same file on every machine.

    python benchmarks/speed/big_tokenizer.py SHARED_DATA OUT_FOLDER [VOCAB_SIZE]
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from inputs import CORPORA
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

PSEUDO_WORDS_PER_CORPUS = 400_000


def texts(shared: Path):
    rng = random.Random(0)
    for name in CORPORA:
        text = (shared / "corpora" / name).read_text(encoding="utf-8")
        yield text
        words = text.split()
        for _ in range(PSEUDO_WORDS_PER_CORPUS // 10_000):  # in texts of 10,000 words
            pairs = ((rng.choice(words), rng.choice(words)) for _ in range(10_000))
            yield " ".join(a[: (len(a) + 1) // 2] + b[len(b) // 2 :] for a, b in pairs)


def main(shared: str, out: str, vocab_size: str = "150000") -> None:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=int(vocab_size),
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts(Path(shared)), trainer)
    Path(out).mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(Path(out) / "tokenizer.json"))
    print(tokenizer.get_vocab_size())


if __name__ == "__main__":
    main(*sys.argv[1:])
