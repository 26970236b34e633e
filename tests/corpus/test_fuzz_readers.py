"""Every reader, fed random and mutated bytes, truncated or corrupted compression and deep JSON,
yields documents and skips and never raises. CI runs 150 cases; for a longer run:

    VOCABRISK_FUZZ_EXAMPLES=5000 python -m pytest tests/corpus/test_fuzz_readers.py
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vocabrisk.corpus import Document, ReadOptions, Skipped, Source, read_source

EXAMPLES = int(os.environ.get("VOCABRISK_FUZZ_EXAMPLES", "150"))

STREAM_FORMATS = ("text", "jsonl", "json", "csv", "tsv")
COMPRESSORS = {
    None: lambda data: data,
    "gzip": gzip.compress,
    "bz2": bz2.compress,
    "xz": lzma.compress,
    "zstd": zstandard.ZstdCompressor().compress,
}
SEEDS = [
    b'{"text": "hello"}\n{"text": "world", "x": [1, 2]}\n',
    b'text,label\nhello there,1\n"quoted, field",2\n',
    b"line one\n\nparagraph two\r\nstill two\n",
    b'[{"text": "a"}, {"text": "b"}]',
    "안녕하세요 😀 naïve\n".encode(),
]


def mutate(data: bytes, edits: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for position, value in edits:
        if out:
            out[position % len(out)] = value
    return bytes(out)


def read_all(tmp_path, data: bytes, fmt: str, compression: str | None, unit: str) -> list:
    path = tmp_path / f"input.{fmt}"
    path.write_bytes(data)
    source = Source(str(path), fmt, compression, len(data))
    options = ReadOptions(text_unit=unit)
    items = list(read_source(source, options))
    assert all(isinstance(item, Document | Skipped) for item in items)
    return items


payloads = st.one_of(
    st.binary(max_size=400),
    st.builds(
        mutate, st.sampled_from(SEEDS), st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=6)
    ),
    st.integers(1, 3000).map(lambda depth: b'{"text": ' + b"[" * depth + b"]" * depth + b"}\n"),
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payloads, st.sampled_from(STREAM_FORMATS), st.sampled_from(list(COMPRESSORS)),
       st.sampled_from(["file", "line", "paragraph"]), st.integers(0, 64), st.booleans())  # fmt: skip
def test_readers_never_raise_on_any_bytes(tmp_path, payload, fmt, compression, unit, cut, corrupt):
    data = COMPRESSORS[compression](payload)
    if cut:
        data = data[: max(len(data) - cut, 0)]  # truncated download
    if corrupt and len(data) > 12:
        data = mutate(data, [(len(data) // 2, data[len(data) // 2] ^ 0xFF)])
    read_all(tmp_path, data, fmt, compression, unit)


@pytest.mark.parametrize("compression", [c for c in COMPRESSORS if c])
def test_truncated_compression_ends_in_a_skip_that_names_it(tmp_path, compression):
    data = COMPRESSORS[compression](b"hello world\n" * 5000)
    items = read_all(tmp_path, data[: len(data) // 2], "text", compression, "line")
    assert isinstance(items[-1], Skipped)


# --- the Python API's inputs: any object given to scan() is counted or refused with a VocabriskError ---

texts = st.text(max_size=30).filter(lambda s: ":" not in s and s.strip() != "-")  # no URL, stream or stdin
api_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), texts, st.binary(max_size=20)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(texts, inner, max_size=3),
        st.builds(bytearray, st.binary(max_size=8)),
        st.frozensets(st.integers(), max_size=3),
        st.lists(inner, max_size=3).map(iter),
    ),
    max_leaves=8,
)


@pytest.fixture(scope="module")
def demo_model():
    from vocabrisk.model.loaded import load_model

    return load_model("demo", counted_here=True)


@settings(max_examples=max(EXAMPLES // 3, 30), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(api_values)
def test_scan_counts_or_refuses_any_object_with_its_own_error(tmp_path, monkeypatch, demo_model, value):
    from vocabrisk import Profile, scan
    from vocabrisk.errors import VocabriskError

    monkeypatch.chdir(tmp_path)  # an empty folder: no text given as a path can name a file
    try:
        assert isinstance(scan(value, demo_model, prior="tokenizer"), Profile)
    except VocabriskError as error:
        assert error.message


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(api_values.filter(lambda value: not isinstance(value, str)))
def test_scan_refuses_a_model_of_any_other_kind_and_rank_any_other_candidates(tmp_path, monkeypatch, value):
    from vocabrisk import rank, scan
    from vocabrisk.errors import VocabriskError

    with pytest.raises(VocabriskError):
        scan([["a text"]], value)
    monkeypatch.chdir(tmp_path)
    try:
        assert rank(value, "demo") == []  # an empty list of candidates ranks as nothing
    except VocabriskError as error:
        assert error.message
