"""The public API as the README uses it, for mypy to check (`tests/test_typing.py`); never run.

Each `assert_type` fails the check where a name reaches a type checker as `Any`, as every name of the
lazily loaded package did before it said them under `TYPE_CHECKING`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from typing_extensions import assert_type

import vocabrisk
from vocabrisk.integrations.datatrove import ProfileCounter, ProfileMerger, merge_profile


def the_python_api() -> None:
    profile = vocabrisk.scan(["sample_corpora/"], "demo")
    assert_type(profile, vocabrisk.Profile)
    assert_type(profile.save("profiles/sample"), Path)
    profile = vocabrisk.Profile.load("profiles/sample")
    summary = vocabrisk.Summary.of(profile, vocabrisk.TrainingPlan(tokens_per_step=65_536, steps=2_000))
    assert_type(summary, vocabrisk.Summary)
    assert_type(summary.risk.score, float)
    assert_type(vocabrisk.advise(summary).head_eps, dict | None)
    ranked = vocabrisk.rank(["sample_corpora/korean-notes.txt", "sample_corpora/"], "demo")
    assert_type(ranked, list[vocabrisk.Ranked])
    assert_type(profile + profile, vocabrisk.Profile)
    assert_type(profile.counts, vocabrisk.TokenCounts)
    assert_type(profile.column("count"), np.ndarray | None)


def the_gate_and_the_model() -> None:
    summary = vocabrisk.Summary.of(vocabrisk.Profile.load("profiles/train"))
    result = vocabrisk.evaluate(summary, vocabrisk.Thresholds(max_risk=0.3))
    assert_type(result, vocabrisk.GateResult)
    assert_type(result.exit_code, int)
    loaded = vocabrisk.load_model("demo")
    assert_type(loaded, vocabrisk.LoadedModel)
    options = vocabrisk.ReadOptions(text_fields=("question", "answer"), text_unit="line")
    policy = vocabrisk.SpecialTokenPolicy(append_eos=True)
    assert_type(vocabrisk.scan([[]], loaded, read_options=options, policy=policy), vocabrisk.Profile)
    try:
        vocabrisk.Profile.load("not-a-profile")
    except vocabrisk.ProfileError as error:
        assert_type(error, vocabrisk.ProfileError)
        assert_type(error.hint, str | None)


def the_datatrove_steps() -> None:
    counter = ProfileCounter("out/partials", model="demo", policy=vocabrisk.SpecialTokenPolicy())
    assert_type(counter.policy, vocabrisk.SpecialTokenPolicy)
    assert_type(ProfileMerger("out/partials", "out/profile", force=True).force, bool)
    assert_type(merge_profile(Path("out/partials"), "demo", reference=None), vocabrisk.Profile)
