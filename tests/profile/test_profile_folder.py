"""A saved profile is its folder: the files profile.json lists, checked on load; saving replaces those
files only; whatever is wrong with a folder (a file missing, extra, truncated or foreign) is one
clear error naming it, never a traceback and never a forecast silently made without it.

The fuzz cases run 60 times in CI; for a longer run:

    VOCABRISK_FUZZ_EXAMPLES=2000 python -m pytest tests/profile/test_profile_folder.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vocabrisk
from vocabrisk import Profile, ProfileError, scan
from vocabrisk.cli.commands import main
from vocabrisk.errors import MissingExtra
from vocabrisk.storage.outputs import OutputError

SAMPLES = Path(__file__).resolve().parents[2] / "sample_corpora"
KOREAN = str(SAMPLES / "korean-notes.txt")
EXAMPLES = int(os.environ.get("VOCABRISK_FUZZ_EXAMPLES", "60"))

pytestmark = pytest.mark.usefixtures("no_config_above")


@pytest.fixture(scope="module")
def korean() -> Profile:
    return scan([KOREAN], "demo")  # the demo model's bundled reference: a prior from text, so old text


@pytest.fixture(scope="module")
def saved(korean, tmp_path_factory) -> Path:
    return korean.save(tmp_path_factory.mktemp("saved") / "korean")


@pytest.fixture
def copy(saved, tmp_path) -> Path:
    return Path(shutil.copytree(saved, tmp_path / "copy"))


def gate(*args: str):
    return CliRunner().invoke(main, ["gate", *args])


def meta(folder: Path) -> dict:
    return json.loads((folder / "profile.json").read_text(encoding="utf-8"))


def test_profile_json_states_its_format_and_lists_its_files_with_their_sizes(saved):
    data = meta(saved)
    assert data["format_version"] == 2
    assert data["files"] == {name: (saved / name).stat().st_size for name in ("tokens.parquet", "old_text.npz")}


def test_a_profile_copied_without_its_old_text_is_refused_naming_the_file(copy):
    before = gate(str(copy), "--max-forgetting", "1.0")
    assert before.exit_code == 0, before.output
    (copy / "old_text.npz").unlink()
    with pytest.raises(ProfileError, match=r"old_text\.npz is missing"):
        Profile.load(copy)
    after = gate(str(copy), "--max-forgetting", "0.15")
    assert after.exit_code == 2 and "old_text.npz is missing" in after.output
    assert "copy the whole profile folder" in after.output and "Traceback" not in after.output


def test_a_format_1_profile_without_old_text_loads_and_every_report_says_what_it_lacks(copy):
    data = meta(copy)
    data["format_version"] = 1
    del data["files"]
    (copy / "profile.json").write_text(json.dumps(data), encoding="utf-8")
    (copy / "old_text.npz").unlink()
    assert len(Profile.load(copy).notes) == 1
    # with its old text the forecast is +0.134 nats, without it +0.169 (read from global contexts)
    for output_format, mark in (("text", "warning: this profile (format 1"), ("github", "::warning")):
        result = gate(str(copy), "--max-forgetting", "0.15", "--format", output_format)
        assert result.exit_code == 1 and mark in result.output, result.output  # the verdict flips, and says why
        assert "has no old_text.npz" in result.output and "no old text: global prior contexts" in result.output
    report = json.loads(gate(str(copy), "--max-forgetting", "0.15", "--format", "json").output)
    assert any("old_text.npz" in warning for warning in report["summary"]["warnings"])


def test_a_format_1_profile_with_all_its_files_loads_as_it_did(copy, korean):
    data = meta(copy)
    data["format_version"] = 1
    del data["files"]
    (copy / "profile.json").write_text(json.dumps(data), encoding="utf-8")
    loaded = Profile.load(copy)
    assert loaded.notes == () and loaded.old_text is not None and loaded.total_tokens == korean.total_tokens


def test_a_profile_saved_before_v6_with_a_3_gram_repetition_loads_and_forecasts_as_a_new_one(copy, korean):
    from vocabrisk.risk.summary import Summary

    data = json.loads((copy / "profile.json").read_text(encoding="utf-8"))
    data["repetition"] = {"trigrams": 1000, "collision": 0.5}  # what scans before v6 saved; read no more
    (copy / "profile.json").write_text(json.dumps(data), encoding="utf-8")
    assert Summary.of(Profile.load(copy)).forecast.to_dict() == Summary.of(korean).forecast.to_dict()


def test_a_profile_saved_before_v7_with_a_2_gram_sample_loads_and_forecasts_as_a_new_one(copy, korean, tmp_path):
    from vocabrisk.risk.summary import Summary

    data = meta(copy)
    assert "contexts" not in data  # no scan counts 2-grams since v7
    # what v5 and v6 scans saved (the forecast read H from it); read no more
    data["contexts"] = {"pairs": 4123, "level": 0, "sampled_pairs": 4123, "entropy": 1.87}
    (copy / "profile.json").write_text(json.dumps(data), encoding="utf-8")
    loaded = Profile.load(copy)
    assert Summary.of(loaded).forecast.to_dict() == Summary.of(korean).forecast.to_dict()
    assert "contexts" not in meta(loaded.save(tmp_path / "again"))  # saved again, it is left out


def test_force_replaces_the_profiles_own_files_and_keeps_the_users(copy, korean):
    (copy / "NOTES.md").write_text("why this baseline\n", encoding="utf-8")
    (copy / ".gitkeep").write_text("", encoding="utf-8")
    args = ["scan", KOREAN, "--prior", "tokenizer", "--out", str(copy), "-q", "--format", "json"]
    assert CliRunner().invoke(main, args).exit_code == 2  # no --force: refused
    result = CliRunner().invoke(main, [*args, "--force"])
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in copy.iterdir())
    assert names == [".gitkeep", "NOTES.md", "profile.json", "tokens.parquet"]  # the old old_text.npz went with it
    assert (copy / "NOTES.md").read_text(encoding="utf-8") == "why this baseline\n"
    assert Profile.load(copy).prior_source == "tokenizer"
    assert [p.name for p in copy.parent.iterdir()] == ["copy"]  # no staging left beside it


def test_a_folder_holding_only_hidden_files_takes_a_profile(tmp_path, korean):
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / ".gitkeep").write_text("", encoding="utf-8")
    korean.save(folder)
    assert Profile.load(folder).total_tokens == korean.total_tokens and (folder / ".gitkeep").exists()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "corpus.txt").write_text("text\n", encoding="utf-8")
    with pytest.raises(OutputError, match="not a vocabrisk profile"):
        korean.save(tmp_path / "data")


def test_save_refuses_to_replace_a_profile_unless_forced(saved, korean):
    with pytest.raises(OutputError, match="a saved profile is already there") as refused:
        korean.save(saved)
    assert "force=True" in refused.value.hint
    assert korean.save(saved, force=True) == saved and Profile.load(saved).total_tokens == korean.total_tokens


def test_a_profile_adds_only_profiles(korean):
    with pytest.raises(TypeError, match="unsupported operand"):
        korean + 1
    with pytest.raises(TypeError, match="unsupported operand"):
        1 + korean


def test_to_pandas_without_pandas_names_the_extra(korean, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # an import of pandas now fails, as where it is not installed
    with pytest.raises(MissingExtra, match=r"Profile\.to_pandas\(\) needs pandas") as missing:
        korean.to_pandas()
    assert missing.value.hint == "pip install 'vocabrisk[pandas]'" and isinstance(missing.value, ImportError)


def test_profile_json_holds_no_path_of_the_machine_that_scanned(saved):
    text = (saved / "profile.json").read_text(encoding="utf-8")
    demo_folder = Path(vocabrisk.__file__).parent
    assert str(demo_folder) not in text
    head = meta(saved)["model"]["head"]
    assert (head["file"], head["final_norm_bias"]["file"]) == ("model.safetensors", "model.safetensors")
    assert meta(saved)["model"]["name"] == "demo"


# ---- fuzz: whatever is wrong with the folder, a ProfileError or the profile, never another error ----
FILES = ("profile.json", "tokens.parquet", "old_text.npz")


def _damage(folder: Path, kind: str, name: str, cut: int, junk: bytes) -> None:
    path = folder / name
    if kind == "missing":
        path.unlink()
    elif kind == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: max(len(data) - cut, 0)])
    elif kind == "foreign":  # the same name, other bytes: another tool's file, or a different profile's
        path.write_bytes(junk)
    elif kind == "flipped":
        data = bytearray(path.read_bytes())
        data[cut % len(data)] ^= 0xFF
        path.write_bytes(bytes(data))
    elif kind == "extra":  # a file listed in no profile.json: the user's own, which loading ignores
        (folder / f"{name}.bak").write_bytes(junk)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.sampled_from(["missing", "truncated", "foreign", "flipped", "extra"]), st.sampled_from(FILES),
                  st.integers(1, 4000), st.binary(max_size=200)),
        min_size=1, max_size=3, unique_by=lambda damage: damage[1],
    )
)  # fmt: skip
def test_a_damaged_profile_folder_is_a_profile_error_or_loads(saved, tmp_path, damages):
    folder = Path(shutil.copytree(saved, tmp_path / "case", dirs_exist_ok=True))
    try:
        for damage in damages:
            _damage(folder, *damage)
        try:
            loaded = Profile.load(folder)
            _ = loaded.table  # the rows are read on first use
        except ProfileError as exc:
            assert str(folder) in exc.message and exc.hint
    finally:
        shutil.rmtree(folder)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["drop", "retype"]), st.data())
def test_an_edited_profile_json_is_a_profile_error_or_loads(saved, tmp_path, edit, data):
    folder = Path(shutil.copytree(saved, tmp_path / "case", dirs_exist_ok=True))
    try:
        content = meta(folder)
        key = data.draw(st.sampled_from(sorted(content)))
        if edit == "drop":
            del content[key]
        else:
            content[key] = data.draw(json_values)
        (folder / "profile.json").write_text(json.dumps(content), encoding="utf-8")
        try:
            Profile.load(folder)
        except ProfileError as exc:
            assert str(folder) in exc.message
    finally:
        shutil.rmtree(folder)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (("missing", "tokens.parquet", 0, b""), "tokens.parquet is missing"),
        (("truncated", "tokens.parquet", 100, b""), "tokens.parquet is .* bytes where profile.json says"),
        (("foreign", "old_text.npz", 0, b"not a zip"), "old_text.npz is 9 bytes where profile.json says"),
        (("foreign", "profile.json", 0, b"[1, 2]"), "holds a JSON list"),
        (("truncated", "profile.json", 10, b""), "profile.json is not readable JSON"),
    ],
)
def test_the_gate_names_what_is_wrong_with_a_profile_folder(copy, damage, message):
    _damage(copy, *damage)
    result = gate(str(copy), "--max-risk", "1")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert re.search(message, result.output), result.output


def test_a_profile_from_a_newer_vocabrisk_says_to_upgrade(copy):
    data = meta(copy)
    data["format_version"] = 3
    (copy / "profile.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ProfileError, match="format 3 is not one this version") as refused:
        Profile.load(copy)
    assert refused.value.hint == "upgrade vocabrisk to read it"


def test_an_unlisted_old_text_beside_a_profile_is_refused(copy):
    data = meta(copy)
    del data["files"]["old_text.npz"]
    (copy / "profile.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ProfileError, match=r"holds old_text\.npz, which its profile\.json does not list"):
        Profile.load(copy)


def test_a_moved_profile_finds_the_calibration_its_model_was_given(saved, korean, tmp_path, monkeypatch):
    from vocabrisk.model.identity import model_key
    from vocabrisk.model.loaded import load_model
    from vocabrisk.risk.calibration import Calibration, save_calibration
    from vocabrisk.risk.summary import Summary

    loaded = load_model("demo")
    key = model_key(loaded.metadata(), {"fingerprint": loaded.vocab.fingerprint})  # as `vocabrisk calibrate` keys it
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    save_calibration(Calibration(kappa=3.0, source="calibrated on 2 probe runs", fingerprint=key))
    moved = Profile.load(shutil.copytree(saved, tmp_path / "elsewhere" / "korean"))
    assert korean.calibration_key == moved.calibration_key == key
    assert Summary.of(moved).forecast.calibration.source == "calibrated on 2 probe runs"


@settings(max_examples=EXAMPLES // 2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_gate_on_an_edited_profile_json_passes_fails_or_names_the_field(saved, tmp_path, data):
    folder = Path(shutil.copytree(saved, tmp_path / "case", dirs_exist_ok=True))
    try:
        content = meta(folder)
        key = data.draw(st.sampled_from(sorted(content)))
        content[key] = data.draw(json_values)
        (folder / "profile.json").write_text(json.dumps(content), encoding="utf-8")
        result = gate(str(folder), "--max-risk", "1")
        assert result.exit_code in (0, 1, 2) and "Traceback" not in result.output
        assert "rerun with --debug" not in result.output, result.output  # not an unforeseen error
    finally:
        shutil.rmtree(folder)


def test_a_saved_profile_given_another_model_is_refused_and_its_own_is_accepted(saved, tmp_path):
    gpt2 = Path(__file__).resolve().parents[3] / "shared" / "data" / "tokenizers" / "gpt2"
    other = str(gpt2) if gpt2.is_dir() else str(tmp_path)  # a real second model where the shared data is
    for command in (["gate", str(saved), "--max-risk", "1"], ["scan", str(saved)], ["rank", str(saved)]):
        refused = CliRunner().invoke(main, [*command, "--model", other, "-q"])
        assert refused.exit_code == 2 and "Traceback" not in refused.output, refused.output
        assert "counted against the model 'demo'" in refused.output and "drop --model" in refused.output
        assert CliRunner().invoke(main, [*command, "--model", "demo", "-q"]).exit_code == 0  # its own model
        assert CliRunner().invoke(main, [*command, "-q"]).exit_code == 0  # none stated: the profile's
    (Path.cwd() / "vocabrisk.toml").write_text(f'[gate]\nmodel = "{other}"\n', encoding="utf-8")
    configured = gate(str(saved), "--max-risk", "1")
    assert configured.exit_code == 2 and "counted against the model 'demo'" in configured.output


def test_a_profile_is_loaded_from_any_of_its_own_files(tmp_path, korean):
    """`Profile.load(".../profile.json")` is the profile, not "not a vocabrisk profile (no profile.json)" (issue 32);
    a file that is not inside a profile is still refused by name."""
    korean.save(tmp_path / "profile")
    for name in ("profile.json", "tokens.parquet"):
        assert Profile.load(tmp_path / "profile" / name).total_tokens == korean.total_tokens
    (tmp_path / "notes.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ProfileError, match=r"notes\.json: not a vocabrisk profile"):
        Profile.load(tmp_path / "notes.json")
