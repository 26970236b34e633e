"""A folder of small files is counted in batches that run across its files, with each file's numbers its own.

The same shards counted one file at a time (as a checkpointed scan and every worker count them) give the same
counts, documents and skips per file; and the pooled count makes a few encoder calls and a few
vectors of the vocabulary's size, not some per file.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vocabrisk import scan
from vocabrisk.corpus import ReadOptions, discover
from vocabrisk.counting import SpecialTokenPolicy, TokenCounts, counts
from vocabrisk.counting.encoder import TokenizersEngine
from vocabrisk.counting.executors import LocalExecutor, Shard, count_corpus, pipeline, work
from vocabrisk.counting.executors import shards as shards_module
from vocabrisk.counting.inputs import count_job
from vocabrisk.errors import InputError
from vocabrisk.model.loaded import load_model
from vocabrisk.model.resolve import DEMO_MODEL_DIR
from vocabrisk.model.vocabulary import BYTE_CHARS

WORDS = ["the", "cat", "sat", "on", "mat", "한국어", "😀", "x = 1;", "\n", "  ", "Äpfel", "<|endoftext|>"]


def write_folder(folder: Path, files: list[list[str]]) -> Path:
    """FILES as JSON Lines files of one document a line (empty files among them)."""
    folder.mkdir(parents=True, exist_ok=True)
    for number, documents in enumerate(files):
        lines = "".join(json.dumps({"text": text}) + "\n" for text in documents)
        (folder / f"part-{number:04d}.jsonl").write_text(lines, encoding="utf-8")
    return folder


def count_folder(folder: Path, model, pooled: bool, strict: bool = False):
    options = ReadOptions()
    sources, _ = discover([str(folder)], options)
    shards = [Shard(index, source) for index, source in enumerate(sources)]
    job = replace(count_job(model, SpecialTokenPolicy(), options, strict), pool_shards=pooled)
    merged = count_corpus(job, shards, LocalExecutor())
    return merged, [merged.stats(shard) for shard in shards]


@pytest.fixture(scope="module")
def demo():
    return load_model("demo", counted_here=True)


DOCUMENT = st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    files=st.lists(st.lists(DOCUMENT, max_size=12), min_size=1, max_size=12),
    batch=st.integers(1, 400),
    unit=st.integers(1, 2000),
)
def test_batches_across_files_count_what_files_one_at_a_time_count(
    demo, tmp_path_factory, monkeypatch, files, batch, unit
):
    """All files in batches together, in units of a few files (as workers and checkpoints count them), and each
    file alone (units of 1 byte) count the same."""
    monkeypatch.setattr(pipeline, "BATCH_BYTES", batch)  # batches end anywhere: in a file, or after several
    folder = write_folder(tmp_path_factory.mktemp("corpus"), files)
    if not any(text for documents in files for text in documents):
        return  # nothing to count: an input error either way
    pooled, pooled_stats = count_folder(folder, demo, pooled=True)
    monkeypatch.setattr(shards_module, "UNIT_BYTES", unit)
    in_units, units_stats = count_folder(folder, demo, pooled=False)
    assert in_units.counts == pooled.counts and units_stats == pooled_stats
    monkeypatch.setattr(shards_module, "UNIT_BYTES", 1)
    apart, apart_stats = count_folder(folder, demo, pooled=False)
    assert pooled.counts == apart.counts  # counts, documents, bytes
    assert [(docs, skips.to_dict()) for docs, skips in pooled_stats] == [
        (docs, skips.to_dict()) for docs, skips in apart_stats
    ]
    assert [docs for docs, _ in pooled_stats] == [sum(1 for t in documents if t) for documents in files]


def lacking_byte_model(folder: Path) -> Path:
    """The demo tokenizer with no token for byte 0x04 (nor a merge holding it), as SmolLM2's lacks eight."""
    spec = json.loads((DEMO_MODEL_DIR / "tokenizer.json").read_text(encoding="utf-8"))
    char = BYTE_CHARS[0x04]
    kept = [piece for piece, _ in sorted(spec["model"]["vocab"].items(), key=lambda item: item[1]) if char not in piece]
    spec["model"]["vocab"] = {piece: i for i, piece in enumerate(kept)}
    spec["model"]["merges"] = [m for m in spec["model"]["merges"] if char not in "".join(m)]
    for token in spec["added_tokens"]:
        token["id"] = spec["model"]["vocab"][token["content"]]
    folder.mkdir()
    (folder / "tokenizer.json").write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    return folder


def test_a_document_the_model_cannot_read_is_skipped_in_its_own_file(tmp_path):
    model = load_model(str(lacking_byte_model(tmp_path / "model")), counted_here=True)
    files = [["fine", "also fine"], ["bad \x04 one", "fine"], [], ["fine", "fine", "end\x04"]]
    folder = write_folder(tmp_path / "corpus", files)
    for pooled in (True, False):
        merged, stats = count_folder(folder, model, pooled)
        assert [docs for docs, _ in stats] == [2, 1, 0, 2]
        assert [skips.total for _, skips in stats] == [0, 1, 0, 1]
        assert [(s.source.rsplit("/", 1)[1], s.locator) for s in merged.skip_examples()] == [
            ("part-0001.jsonl", "line 1"),
            ("part-0003.jsonl", "line 3"),
        ]
    with pytest.raises(InputError, match=r"part-0001\.jsonl, line 1: holds U\+0004"):
        count_folder(folder, model, pooled=True, strict=True)


def test_a_folder_of_small_files_costs_a_few_encoder_calls_and_no_vector_per_file(demo, tmp_path, monkeypatch):
    files = [[f"document {n} of file {f}: " + " ".join(WORDS) * 3] for f in range(300) for n in range(1)]
    folder = write_folder(tmp_path / "corpus", files)
    calls = {"encode": 0, "zeros": 0}
    encode, zeros = TokenizersEngine.encode, TokenCounts.zeros.__func__

    def counted_encode(self, texts, add_special_tokens):
        calls["encode"] += 1
        return encode(self, texts, add_special_tokens)

    def counted_zeros(cls, vocab_size):
        calls["zeros"] += 1
        return zeros(cls, vocab_size)

    monkeypatch.setattr(TokenizersEngine, "encode", counted_encode)
    monkeypatch.setattr(counts.TokenCounts, "zeros", classmethod(counted_zeros))
    monkeypatch.setattr(work, "_COUNTERS", {})
    merged, stats = count_folder(folder, demo, pooled=True)
    assert merged.counts.documents == 300 and all(docs == 1 for docs, _ in stats)
    pooled = dict(calls)
    calls.update(encode=0, zeros=0)
    count_folder(folder, demo, pooled=False)  # as a checkpointed scan counts: unit by unit (one unit here)
    in_units = dict(calls)
    calls.update(encode=0, zeros=0)
    monkeypatch.setattr(shards_module, "UNIT_BYTES", 1)  # each file a unit of its own
    count_folder(folder, demo, pooled=False)
    assert pooled["encode"] <= 3 and pooled["zeros"] <= 3, pooled  # the corpus is ~150 kB: one batch
    assert in_units["encode"] <= 3 and in_units["zeros"] <= 4, in_units  # and the unit's vector, once
    assert calls["encode"] >= 300, calls  # one per file, one at a time


def test_a_scan_of_a_folder_lists_every_file_with_its_documents(tmp_path):
    files = [["one"], [], ["two", "three"], ["four"] * 5]
    profile = scan([str(write_folder(tmp_path / "corpus", files))], "demo", engine="tokenizers")
    assert [s["documents"] for s in profile.sources] == [1, 0, 2, 5]
    assert profile.documents == 8
    whole = scan([str(tmp_path / "corpus" / f"part-{n:04d}.jsonl") for n in range(4)], "demo", engine="tokenizers")
    assert np.array_equal(profile.table.count, whole.table.count)
