"""The forecast benchmark's one scorer: v4's runs, and v3's and v2's committed runs re-scored with today's forecast.

    python benchmarks/validity/score.py                # v4's design curve runs only: checks the scorer's path
    python benchmarks/validity/score.py --final        # v4 held out, once the forecast is frozen (docs/validity/v4/)
    python benchmarks/validity/score.py --rescore v3   # v3's held-out runs -> docs/validity/v3/rescored.{json,md}
    python benchmarks/validity/score.py --rescore v2   # v2's runs -> docs/validity/v2/rescored-<base>.{json,md}
    python benchmarks/validity/score.py --replay       # v4's replay supplement -> docs/validity/v4/replay/results.*

    python benchmarks/validity/score.py --pool-h       # pool H: v5 and v4 beside it -> docs/validity/v4/pool-h/
    python benchmarks/validity/score.py --pool-i       # pool I: v6 and v5 beside it -> docs/validity/v4/pool-i/
    python benchmarks/validity/score.py --pool-n       # pool N: v11 (v10 on the shipped real probes), v10 beside it

Every prediction is recomputed from counts, the head and the plan; the raw runs (`*-runs.jsonl` under
docs/validity/) never change. Each set is scored by the form it tested, as it was reported: v4's own sets
(its design runs, `--final`, `--replay`, pools F and G) by v4, pool H by v5 (v4 beside it), pool I by
today's form (v5 beside it); the earlier forms are today's with their body term put back (`forms`, which
recomputes their 3-gram R). `--rescore` scores by today's form. v4 (docs/validity/v4/PROTOCOL.md): the v4
suite (`suite_v4.py`), calibrated on v3's 5 probes (`suite_v3.py`); `--final` writes docs/validity/v4/results.json
and results.md, each result saying how many runs it stands on. `--rescore` scores an older version's runs with
the same code and writes new files beside them, never the results that version reported
(docs/validity/v3/results.*, docs/validity/v2/results-*.*, the historical record):

- v3: the held-out runs v3 reported on (docs/validity/v3/smollm2-runs.jsonl, the v3 suite, fingerprint
  checked), calibrated on the same 5 probes: Spearman of the forecast and the baselines with the measured
  total and head-only forgetting per old text, the seed ceiling, within ×2, regime B (at its 80th step) and
  the ablations. v3 measured no curves and had no replay-role runs, so those sections are absent.
- v2: the demo and SmolLM2 runs (docs/validity/v2/<base>-runs.jsonl) on suites rebuilt by
  `suite_v2.py --bases demo smollm2` (no training): v2 suites carry no fingerprint, so each run's training
  token count must be the rebuilt suite's. One old text, one plan, one seed; calibrated on the base's own
  probes; the replay runs against the what-if. Not recomputed: v2's per-row AUROC (corpus-level numbers
  only) and its ablations, which remove terms of v2's forecast that today's has not.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from unittest import mock

import numpy as np
from scipy.stats import rankdata, spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import forms
import suite_v2 as v2
import suite_v3 as v3
import suite_v4 as recipe
import suite_v4_pools as pool_recipes
import suite_v4_replay as replay_recipe

from vocabrisk.risk.calibration import DEFAULT_ADAPTATION, FORM
from vocabrisk.risk.forecast import ENTROPY_WEIGHT, LIKENESS_REFERENCE

V2, V3, V4 = (data.REPO / "docs" / "validity" / version for version in ("v2", "v3", "v4"))
V3_RUNS, V4_RUNS = V3 / "smollm2-runs.jsonl", V4 / "smollm2-runs.jsonl"
V4_REPLAY = V4 / "replay"  # the replay supplement (docs/validity/v4/PROTOCOL-replay.md): its runs and results
V2_BASES = ("demo", "smollm2")  # the bases v2 has runs of (bench's were never made)
V2_OLD = "old"  # a v2 suite's one old text (old.jsonl), named as runner.py names it
WIKI_REPLAY = "wiki"  # the old text replay is measured on (the replay text is its kind)
V11_PROBES = data.REPO / "docs" / "validity" / "v11" / "probes" / "smollm2-runs.jsonl"  # the shipped probe set's runs
V3_KAPPA_PER_WIDTH, V3_BODY_GAIN = 0.14, 21.0  # the v3 forecast as landed (7f7fb88), uncalibrated
SMOLLM2_ADAPTATION = forms.LANDED_ADAPTATION  # marks SmolLM2's runs: term 7 by `forms.smollm2_adaptation`
BOOTSTRAP = 2000


def spearman_ci(x, y, seed: int = 0) -> dict:
    """Spearman with a bootstrap 95% interval over candidates (all resamples ranked at once)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    rho = float(spearmanr(x, y).statistic)
    pick = np.random.default_rng(seed).integers(0, len(x), (BOOTSTRAP, len(x)))
    rx, ry = rankdata(x[pick], axis=1), rankdata(y[pick], axis=1)
    rx, ry = rx - rx.mean(axis=1, keepdims=True), ry - ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = (rx * ry).sum(axis=1) / np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))
    draws = draws[np.isfinite(draws)]
    low, high = np.percentile(draws, [2.5, 97.5]) if len(draws) else (float("nan"), float("nan"))
    return {"rho": rho, "low": float(low), "high": float(high)}


def read_log(path: Path) -> Iterable[dict]:
    """A runs file's records, one per line, parsed as they are reached."""
    return (json.loads(line) for line in path.read_text().splitlines())


def reference(folder: Path, old: str) -> Path:
    """The old text OLD of the suite in FOLDER, as `vocabrisk scan --reference` reads it."""
    return folder / ("old.jsonl" if old == V2_OLD else f"old-{old}.jsonl")


def v3_replay(loaded) -> list[str]:
    """v3's replay text (its recipe: wikitext-2 paragraphs never in the old text)."""
    sources = v3.Sources(loaded)
    return sources.split("en-wikitext2")[1] + sources.split("en-wikitext2")[0][-40:]


def probe_runs(folder: Path, log: Path, keep: Callable[[dict], bool] = lambda r: True) -> tuple[list[dict], Path, dict]:
    """The plan-A runs logged in LOG (those KEEP selects) of the probe suite in FOLDER, the suite beside them."""
    probes = [r for r in read_log(log) if r["regime"] == "A" and keep(r)]
    return probes, folder, json.loads((folder / "suite.json").read_text())


def v3_probes() -> tuple[list[dict], Path, dict]:
    """v3's 5 probe runs (plan A), their suite folder and suite: what v3 to v10 are calibrated on."""
    return probe_runs(v3.OUT, V3_RUNS, lambda r: r["split"] == "probe")


def real_probes() -> tuple[list[dict], Path, dict]:
    """The 10 runs of the probe set `calibrate` ships from v11 (scripts/make_probe_set.py): what v11 is calibrated
    on (docs/VALIDITY.md, "v11")."""
    return probe_runs(pool_recipes.OUT["probes"], V11_PROBES)


class Runs:
    """One suite's measured runs (those KEEP selects; runs of the suites FINGERPRINTS name are taken too, where
    the caller has checked that they hold the same tokens), a profile of every run's text against each old text,
    the probe runs calibration fits and, where the suite has replay runs, the replay text."""

    def __init__(
        self,
        log,
        folder: Path,
        suite: dict,
        records: Iterable[dict],
        keep: Callable[[dict], bool],
        *,
        source: Path,
        model: str,
        split: str,
        probes: tuple[list[dict], Path, dict],
        adaptation: float = SMOLLM2_ADAPTATION,
        replay: tuple[str, Callable[[object], list[str]]] | None = None,
        fingerprints: Iterable[str] = (),
    ) -> None:
        from vocabrisk import load_model

        self.folder, self.suite, self.split, self.adaptation = folder, suite, split, adaptation
        self.plans = {k: v2.train_config(p).plan for k, p in suite["plans"].items()}
        self.curved = all("checkpoints" in p for p in suite["plans"].values())  # v4: curves measured along the run
        self.info = {run["name"]: run for run in suite["runs"]}
        self.measured = defaultdict(list)  # (name, plan) -> records
        for record in records:
            if not keep(record):
                continue  # design never reads a held-out run (PROTOCOL.md)
            if record.get("suite") not in (suite.get("fingerprint"), *fingerprints):
                raise SystemExit(f"{source}: a run of suite {record['suite']}, not {suite['fingerprint']}")
            self.measured[record["run"], record["regime"]].append(record)
        self.loaded = load_model(model)
        self.width = self.loaded.head.hidden
        self.profiles = {}
        for name in sorted({n for n, _ in self.measured}):
            for old in suite["old"]:
                self.profiles[name, old] = self.scan(folder / "texts" / f"{self.info[name]['file']}.jsonl", old)
        self._probes, self._replay, self._replays = probes, replay, {}
        self.replay_old = replay[0] if replay else None
        log(f"{len(self.measured)} measured (run, plan) pairs of split {self.split}, {len(self.profiles)} profiles")

    @classmethod
    def v4(cls, log, split: str) -> Runs:
        """v4's runs of SPLIT: "design" (the design curve runs) or "heldout" (after the freeze)."""
        suite = json.loads((recipe.OUT / "suite.json").read_text())
        return cls(log, recipe.OUT, suite, read_log(V4_RUNS), lambda r: r["split"] == split, source=V4_RUNS,
                   model=str(v2.smollm2_gguf()), split=split, probes=v3_probes(),
                   replay=(WIKI_REPLAY, v3_replay))  # fmt: skip

    @classmethod
    def v4_replay(cls, log) -> Runs:
        """The replay supplement's six runs (their 0% points are v4's held-out 1ep runs: `replay_supplement`)."""
        suite = json.loads((replay_recipe.OUT / "suite.json").read_text())
        source = V4_REPLAY / "smollm2-runs.jsonl"
        return cls(log, replay_recipe.OUT, suite, read_log(source), lambda r: True, source=source,
                   model=str(v2.smollm2_gguf()), split="heldout", probes=v3_probes(),
                   replay=(WIKI_REPLAY, v3_replay))  # fmt: skip

    @classmethod
    def v4_pool(cls, log, pool: str) -> Runs:
        """A fresh pool's held-out runs (PROTOCOL-pool-f.md, PROTOCOL-pool-g.md). Pool F's supplement is read with
        its first suite as one set: the supplement holds the first one's recipes, so every run the two share must
        have the same tokens."""
        folders = [pool_recipes.OUT[pool], *([pool_recipes.MORE[pool]] if pool in pool_recipes.MORE else [])]
        suites = [json.loads((folder / "suite.json").read_text()) for folder in folders]
        for folder in folders[1:]:
            with np.load(folders[0] / "tokens.npz") as a, np.load(folder / "tokens.npz") as b:
                differ = [key for key in a.files if key not in b.files or not np.array_equal(a[key], b[key])]
            if differ:
                raise SystemExit(f"pool {pool}: {folder.name} has other tokens for {', '.join(differ)}; rebuild both")
        home = V4 / f"pool-{pool.lower()}"
        sources = [home / "smollm2-runs.jsonl", *([home / "more" / "smollm2-runs.jsonl"] if len(folders) > 1 else [])]
        records = [record for source in sources if source.exists() for record in read_log(source)]
        return cls(log, folders[-1], suites[-1], records, lambda r: True, source=sources[0],
                   model=str(v2.smollm2_gguf()), split="heldout", probes=v3_probes(),
                   replay=(WIKI_REPLAY, v3_replay), fingerprints=[s["fingerprint"] for s in suites[:-1]])  # fmt: skip

    @classmethod
    def v3(cls, log, split: str | None = None) -> Runs:
        """v3's runs of SPLIT; None: every one (all of v3 is design data for v4)."""
        suite = json.loads((v3.OUT / "suite.json").read_text())
        return cls(log, v3.OUT, suite, read_log(V3_RUNS), lambda r: split in (None, r["split"]), source=V3_RUNS,
                   model=str(v2.smollm2_gguf()), split=split or "every", probes=v3_probes())  # fmt: skip

    @classmethod
    def v2(cls, log, base: str) -> Runs:
        """v2's runs on BASE in v3's shape: one old text (V2_OLD), one plan (A), calibrated on its own probes."""
        folder, source = v2.CACHE / base, V2 / f"{base}-runs.jsonl"
        suite = json.loads((folder / "suite.json").read_text())
        suite |= {"plans": {"A": suite["plan"]}, "old": [V2_OLD]}
        tokens = {run["name"]: run["train_tokens"] for run in suite["runs"]}
        records = []
        for r in read_log(source):
            if r["train_tokens"] != tokens.get(r["run"]):  # no fingerprint: the token count stands in for one
                raise SystemExit(f"{source}: {r['run']} trained on {r['train_tokens']} tokens, the suite has "
                                 f"{tokens.get(r['run'])}; rebuild it with suite_v2.py --bases {base}")  # fmt: skip
            split = "probe" if r["role"] == "probe" else "heldout"
            measured = {k: r[k] for k in ("total", "head_only", "body_only")}
            records.append(r | {"regime": "A", "split": split, "old": {V2_OLD: measured}})
        model = data.REPO / "vocabrisk" / "demo_model" if base == "demo" else v2.smollm2_gguf()
        probes = [r for r in records if r["split"] == "probe"]
        return cls(log, folder, suite, records, lambda r: r["split"] == "heldout", source=source, model=str(model),
                   split="heldout", probes=(probes, folder, suite),
                   adaptation=SMOLLM2_ADAPTATION if base == "smollm2" else DEFAULT_ADAPTATION,
                   replay=(V2_OLD, lambda _loaded: v2._bounded(v2.base_sources(base, None)[2])))  # fmt: skip

    def adaptation_on(self, old: str) -> float:
        """Term 7's gain on OLD, fixed in calibration: SmolLM2's as the form being scored has it, else the Runs'."""
        return forms.smollm2_adaptation(old) if self.adaptation == SMOLLM2_ADAPTATION else self.adaptation

    def scan(self, path: Path, old: str, folder: Path | None = None):
        from vocabrisk import scan
        from vocabrisk.counting import SpecialTokenPolicy

        profile = scan([str(path)], self.loaded, reference=[str(reference(folder or self.folder, old))],
                       policy=SpecialTokenPolicy())  # fmt: skip
        forms.MEASURED.measure(profile, self.loaded, path, SpecialTokenPolicy())  # the earlier forms' R and H
        return profile

    @cached_property
    def probes(self) -> dict:
        """{old: [(name, measured on OLD, profile)]}: the probe runs (plan A) calibration fits."""
        return self.profiled(*self._probes)

    def profiled(self, records: list[dict], folder: Path, suite: dict) -> dict:
        """{old: [(name, measured on OLD, profile)]} of probe RECORDS, their texts in the suite in FOLDER."""
        files = {run["name"]: run["file"] for run in suite["runs"]}
        probes = {}
        for record in records:
            for old in self.suite["old"]:
                profile = self.scan(folder / "texts" / f"{files[record['run']]}.jsonl", old, folder)
                probes.setdefault(old, []).append((record["run"], record["old"][old], profile))
        return probes

    def replay(self, old: str):
        """The replay text's profile against OLD: what the replay runs mixed into their corpus."""
        if old not in self._replays:
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "replay.jsonl"
                data.write_jsonl(path, self._replay[1](self.loaded))
                self._replays[old] = self.scan(path, old)
        return self._replays[old]

    def records(self, name: str, plan: str) -> list[dict]:
        return self.measured.get((name, plan), [])

    def value(self, name: str, plan: str, old: str, key: str, step: int | None = None) -> float:
        """The measured quantity (at STEP of the curve, else the run's end), seed mean."""
        values = []
        for r in self.records(name, plan):
            measured = r["old"][old]
            values.append(
                measured[key] if step is None else measured["curve"][key][measured["curve"]["steps"].index(step)]
            )
        return float(np.mean(values))

    def names(self, plan: str = "A", role: str = "candidate") -> list[str]:
        return sorted(n for n, p in self.measured if p == plan and self.info[n]["role"] == role)


def baselines(profile, plan) -> dict[str, float]:
    """The protocol's baselines (v3's): each a count-only number that a forecast must beat."""
    from vocabrisk.risk.exposure import assess, never_seen_share, unigram_kl

    coverable = profile.coverable
    prior = np.where(coverable, profile.prior, 0.0)
    prior = prior / prior.sum()
    corpus = np.where(coverable, profile.counts.counts + 0.5, 0.0)
    corpus = corpus / corpus.sum()
    fed = (profile.shares > 0) & coverable  # a special token written in the text is outside both distributions
    return {
        "implied epochs": plan.implied_epochs(profile.total_tokens),
        "unigram KL (old || corpus)": unigram_kl(profile),
        "unigram KL (corpus || old)": float(np.sum(profile.shares[fed] * np.log(corpus[fed] / prior[fed]))),
        "never-seen share": never_seen_share(profile),
        "starved usage (v0.1)": assess(profile, plan).score,
        "corpus size (smaller first)": -float(profile.total_tokens),
    }


def calibrate(runs: Runs, old: str, probes: dict | None = None, *, known_loss: bool = True,
              adaptation: float | None = None):  # fmt: skip
    """The forecast's constants fitted on the suite's probes measured on OLD (`vocabrisk.risk.calibration.fit`), or
    on PROBES (`Runs.profiled`); with KNOWN_LOSS False, as if the base loss on OLD were unknown (the body's transfer
    weight at its most), and with ADAPTATION fixed (else the Runs' term 7 on OLD)."""
    from vocabrisk.risk.calibration import Calibration, ProbeRun, fit
    from vocabrisk.risk.forecast import Drive
    from vocabrisk.risk.summary import Summary

    chosen, probes = (probes or runs.probes)[old], []
    losses = [measured["base"] for _, measured, _ in chosen if "base" in measured and known_loss]
    old_loss = float(np.median(losses)) if losses else None  # the base model's loss on OLD, as calibrate keeps it
    for name, measured, profile in chosen:
        unit = Summary.of(profile, runs.plans["A"], Calibration(kappa=1.0, body_gain=1.0, old_loss=old_loss))
        drive = Drive.of(profile.shares, unit.risk.exposure, unit.risk.prior, runs.plans["A"], profile.total_tokens)

        def curve(kappas, drive=drive, profile=profile, prior=unit.risk.prior):
            return drive.head(kappas, profile.shares > 0, profile.old_text, prior)

        probes.append(ProbeRun(name, measured["head_only"], measured["total"], unit.forecast.terms.unit, curve))
    return fit(probes, adaptation=runs.adaptation_on(old) if adaptation is None else adaptation, old_loss=old_loss)


@contextmanager
def linear_shift():
    """The ablation of term 3's saturation: row shifts linear in Σ lr, as in v3."""
    from vocabrisk.risk import forecast as module

    with mock.patch.object(module, "saturate", lambda x, target: np.asarray(x, dtype=np.float64)):
        yield


UNCALIBRATED_GAINS = {"v4": 1950.0, "v5": 18810.0, "v6": 61250.0, "v7": 124100.0, "v8": 124100.0, "v9": 130600.0}
FORMS = {"v4": forms.as_v4, "v5": forms.as_v5, "v6": forms.as_v6, "v7": forms.as_v7, "v8": forms.as_v8,
         "v9": forms.as_v9}  # as landed  # fmt: skip
REAL_PROBE_FORMS = {"v11": FORM}  # v11: v10's terms, calibrated on the shipped probe set of real text (real_probes)
POOL_FORMS = {"H": ("v5", "v4"), "I": ("v6", "v5"), "J": ("v7", "v6"), "K": ("v8", "v7"), "L": ("v9", "v8"),
              "M": (FORM, "v9"), "N": ("v11", FORM)}  # fmt: skip
TOKEN_ENTROPY_FORMS = ("v7", "v8", "v9", FORM)  # the forms whose body reads e^{-H₁/2}: their ablation takes it out


def v3_forecast(profile, plan, width: int) -> np.ndarray:
    """The v3 forecast as landed, uncalibrated, at each checkpoint (the shape baseline: linear in Σ lr)."""
    from vocabrisk.risk.calibration import Calibration
    from vocabrisk.risk.summary import Summary

    with linear_shift(), forms.as_v5():  # v3's body grew with the 3-gram R, as v5's
        made = Summary.of(profile, plan, Calibration(kappa=V3_KAPPA_PER_WIDTH * width, adaptation=0.0)).forecast
    t = made.terms
    body = V3_BODY_GAIN * made.lr_sum * t.starved * t.alike * math.log1p(t.repeats)
    end = made.head + body
    return np.array([end * p.lr_sum / made.lr_sum for p in made.curve])


def ablations(
    forecasts: dict, calibration, runs: Runs, names: list[str], old: str, plan, form: str
) -> dict[str, list[float]]:  # fmt: skip
    """The calibrated forecast of FORM at plan A's end with one term removed or changed."""
    from vocabrisk.risk.summary import Summary

    form = REAL_PROBE_FORMS.get(form, form)  # the terms that form has

    g = calibration.body_gain
    rows = {}
    for n in names:
        f = forecasts[n]
        t = f.terms
        repetition = forms.repetition(form, t)
        shape = t.unit / max(t.starved * t.reach * repetition, 1e-300)  # lr · relaxation · e^-H (e^-H₁/2 from v7)
        with linear_shift():
            linear_head = Summary.of(runs.profiles[n, old], plan, calibration).forecast.head
        rows[n] = {
            "without the head's term": f.body - f.adaptation,
            "without the body's term": f.head - f.adaptation,
            "without the adaptation": f.head + f.body,
            "body without S (starved old share)": f.head + g * shape * t.alike * repetition - f.adaptation,
            "body without B (alike)": f.head + g * shape * t.starved * repetition - f.adaptation,
        }
        if form in ("v9", FORM):  # R's two pathways (from v9): each alone
            rows[n] |= {
                "R as transfer alone (v8's B)": f.head + g * shape * t.starved * t.alike * repetition - f.adaptation,
                "R as drift alone": f.head + g * shape * t.starved * LIKENESS_REFERENCE * repetition - f.adaptation,
            }
        if form in ("v4", "v5"):
            rows[n] |= {
                "body without R (repetition)": f.head + g * shape * t.starved * t.alike - f.adaptation,
                "R as implied epochs": f.head + g * shape * t.starved * t.alike * math.log1p(f.epochs) - f.adaptation,
            }
        else:
            profile = runs.profiles[n, old]
            c = forms.MEASURED.collision(profile)  # v5's R: the plan's tokens times the 3-gram collision
            r = f.epochs * profile.total_tokens * c if c is not None else f.epochs
            body = g * shape * t.starved * t.reach
            rows[n] |= {
                "body without E (passes)": f.head + body - f.adaptation,
                "E from zero, ln(1 + E)": f.head + body * math.log1p(f.epochs) - f.adaptation,
                "v5's 3-gram R in E's place": f.head + body * math.log1p(r) - f.adaptation,
            }
        if form in TOKEN_ENTROPY_FORMS:  # e^{-H₁/2}: left out, and v6's e^{-H} (the 2-gram entropy) in its place
            relaxed = g * shape * math.exp(ENTROPY_WEIGHT * t.entropy) * t.starved * t.reach * repetition
            rows[n] |= {
                "body without e^-H1/2 (token entropy)": f.head + relaxed - f.adaptation,
                "v6's 2-gram e^-H in its place": f.head
                + relaxed * math.exp(-forms.h_of(runs.profiles[n, old]))
                - f.adaptation,
            }
        rows[n]["head shift linear (no saturation)"] = linear_head + f.body - f.adaptation
    return {label: [rows[n][label] for n in names] for label in next(iter(rows.values()))}


def within(predicted, measured, factor: float) -> list[bool]:
    """Whether each prediction lies within ×/÷ FACTOR of its measurement (a measurement ≤ 0 is a miss)."""
    return [m > 0 and 1 / factor <= p / m <= factor for p, m in zip(predicted, measured, strict=True)]


def score(runs: Runs, form: str = FORM) -> dict:
    """Every number the protocol reports, for the runs of the Runs' split, by today's forecast (FORM), an
    earlier form (FORMS) or today's terms calibrated on the shipped real probe set (REAL_PROBE_FORMS)."""
    if form in FORMS:
        with FORMS[form]():
            return _score(runs, form)
    if form in REAL_PROBE_FORMS:
        return _score(runs, form, runs.profiled(*real_probes()))
    return _score(runs, form)


def _score(runs: Runs, form: str, probes: dict | None = None) -> dict:
    from vocabrisk.risk.calibration import Calibration
    from vocabrisk.risk.summary import Summary

    uncalibrated = Calibration(body_gain=UNCALIBRATED_GAINS[form]) if form in FORMS else Calibration()
    plan_a = runs.plans["A"]
    names = runs.names("A")
    results = {"split": runs.split, "candidates": len(names), "old": {}}
    for old in runs.suite["old"]:
        calibration = calibrate(runs, old, probes)
        if form in FORMS:  # fitted to that form's body term, inside FORMS[form]
            calibration = dataclasses.replace(calibration, form=form)
        default = dataclasses.replace(uncalibrated, old_loss=calibration.old_loss)  # a user's --old-loss

        def made(name: str, plan: str, cal=calibration, old=old):
            return Summary.of(runs.profiles[name, old], runs.plans[plan], cal)

        measured = {key: [runs.value(n, "A", old, key) for n in names] for key in ("total", "head_only")}
        forecasts = {n: made(n, "A").forecast for n in names}
        defaults = {n: made(n, "A", default).forecast for n in names}
        predictors = {
            f"forecast {form} (calibrated)": ([forecasts[n].total for n in names], [forecasts[n].head for n in names]),
            f"forecast {form} (uncalibrated defaults)": (
                [defaults[n].total for n in names],
                [defaults[n].head for n in names],
            ),
        }
        v3_made = {n: v3_forecast(runs.profiles[n, old], plan_a, runs.width)[-1] for n in names}
        table = {label: {"total": spearman_ci(t, measured["total"]), "head_only": spearman_ci(h, measured["head_only"])}
                 for label, (t, h) in predictors.items()}  # fmt: skip
        table["forecast v3 as landed (uncalibrated)"] = {
            k: spearman_ci([v3_made[n] for n in names], measured[k]) for k in ("total", "head_only")
        }
        base = [baselines(runs.profiles[n, old], plan_a) for n in names]
        for key in base[0]:
            table[key] = {k: spearman_ci([b[key] for b in base], measured[k]) for k in ("total", "head_only")}
        totals = [forecasts[n].total for n in names]
        results["old"][old] = {
            "calibration": calibration.to_dict(),
            "spearman": table,
            "ablation": {
                label: {k: spearman_ci(x, measured[k]) for k in ("total", "head_only")}
                for label, x in ablations(forecasts, calibration, runs, names, old, plan_a, form).items()
            },
            "within_x2_calibrated": share(within(totals, measured["total"], 2.0)),
            "within_x3_defaults": share(within([defaults[n].total for n in names], measured["total"], 3.0)),
            "within_x2_or_0.03": share(
                [
                    w or abs(p - m) <= 0.03
                    for w, p, m in zip(within(totals, measured["total"], 2.0), totals, measured["total"], strict=True)
                ]
            ),
            "ceiling": seed_ceiling(runs, old),
            "curves": curves(runs, old, calibration) if runs.curved else None,
            "regime_b": regime_b(runs, old, calibration),
            "replay": replay(runs, old, calibration) if old == runs.replay_old and runs.names("A", "replay") else None,
            "per_run": [
                {
                    "run": n,
                    "seeds": len(runs.records(n, "A")),
                    "total": measured["total"][i],
                    "head_only": measured["head_only"][i],
                    "forecast_total": forecasts[n].total,
                    "forecast_head": forecasts[n].head,
                    "forecast_body": forecasts[n].body,
                    "forecast_adaptation": forecasts[n].adaptation,
                    "default_total": defaults[n].total,
                    "v3_total": v3_made[n],
                    "terms": forecasts[n].terms.to_dict(),
                }
                for i, n in enumerate(names)
            ],
        }
    return results


def share(flags: list[bool]) -> dict:
    return {"share": float(np.mean(flags)) if flags else None, "of": len(flags)}


def seed_ceiling(runs: Runs, old: str) -> dict | None:
    """Seed 0 against seed 1 over the candidates run twice: the order any forecast can reach."""
    doubled = [n for n in runs.names("A") if {r["seed"] for r in runs.records(n, "A")} >= {0, 1}]
    if len(doubled) < 3:
        return {"candidates": len(doubled)}
    pair = {s: {n: next(r for r in runs.records(n, "A") if r["seed"] == s) for n in doubled} for s in (0, 1)}
    return {"candidates": len(doubled)} | {
        t: spearman_ci([pair[0][n]["old"][old][t] for n in doubled], [pair[1][n]["old"][old][t] for n in doubled])
        for t in ("total", "head_only")
    }


def curves(runs: Runs, old: str, calibration) -> dict:
    """Points at steps 10, 20, 40 of every run of plans A, A-lr1e-3, A-lr1e-4 (each seed its own run)."""
    from vocabrisk.risk.summary import Summary

    points, baseline, per_lr = [], [], {}
    plans = ("A", "A-lr1e-4", "A-lr1e-3")
    candidates = {p: {n for n, q in runs.measured if q == p and runs.info[n]["role"] == "candidate"} for p in plans}
    three = set.intersection(*candidates.values())  # the corpora run at every learning rate
    for plan in plans:
        names = sorted(candidates[plan])
        ends_f, ends_m = [], []
        for n in names:
            profile = runs.profiles[n, old]
            made = Summary.of(profile, runs.plans[plan], calibration).forecast
            shape = v3_forecast(profile, runs.plans[plan], runs.width)
            by_step = {p.step: p.total for p in made.curve}
            v3_by_step = dict(zip((p.step for p in made.curve), shape, strict=True))
            for record in runs.records(n, plan):
                curve = record["old"][old]["curve"]
                for step, m in zip(curve["steps"], curve["total"], strict=True):
                    if step in (10, 20, 40):
                        points.append((by_step[step], m))
                        baseline.append((v3_by_step[step], m))
            if n in three:
                ends_f.append(by_step[40])
                ends_m.append(runs.value(n, plan, old, "total"))
        if len(ends_f) >= 3:
            per_lr[plan] = {"runs": len(ends_f), "spearman_40": spearman_ci(ends_f, ends_m),
                            "within_x1.5_40": share(within(ends_f, ends_m, 1.5))}  # fmt: skip
    ranking = runs.names("A")
    at20 = [Summary.of(runs.profiles[n, old], runs.plans["A"], calibration).forecast for n in ranking]
    return {
        "points": len(points),
        "within_x1.5": share(within(*zip(*points, strict=True), 1.5)) if points else None,
        "v3_linear_within_x1.5": share(within(*zip(*baseline, strict=True), 1.5)) if baseline else None,
        "spearman_20": spearman_ci(
            [next(p.total for p in f.curve if p.step == 20) for f in at20],
            [runs.value(n, "A", old, "total", 20) for n in ranking],
        ),
        "per_plan": per_lr,
    }


def regime_b(runs: Runs, old: str, calibration) -> dict | None:
    """The forecast (calibrated on plan-A probes) against the 80-step runs: the order at their end, and the points
    at steps 10, 20, 40 and 80 within ×1.5 where curves were measured (v4), else the ends within ×2 (v3)."""
    from vocabrisk.risk.summary import Summary

    names = sorted(n for n, p in runs.measured if p == "B")
    if len(names) < 3:
        return {"runs": len(names)}
    made = {n: Summary.of(runs.profiles[n, old], runs.plans["B"], calibration).forecast for n in names}
    ends = [made[n].total for n in names]
    measured = [runs.value(n, "B", old, "total") for n in names]
    if not runs.curved:
        return {
            "runs": len(names),
            "spearman_80": spearman_ci(ends, measured),
            "within_x2": share(within(ends, measured, 2.0)),
        }
    pairs = []
    for n in names:
        by_step = {p.step: p.total for p in made[n].curve}
        curve = runs.records(n, "B")[0]["old"][old]["curve"]
        pairs += [(by_step[s], m) for s, m in zip(curve["steps"], curve["total"], strict=True) if s in (10, 20, 40, 80)]
    return {
        "runs": len(names),
        "spearman_80": spearman_ci(ends, measured),
        "within_x1.5": share(within(*zip(*pairs, strict=True), 1.5)),
    }


def what_ifs(runs: Runs, old: str, calibration) -> Iterator[tuple[str, float, object, object, float]]:
    """Each replay run whose source was measured: its name, share, the source's summary, the what-if
    (`Summary.mixed`) and the measured reduction (the source's total less the replay run's)."""
    from vocabrisk.risk.summary import Summary

    for n in runs.names("A", role="replay"):
        source, tail = n.split("+replay")
        share = float(tail.rstrip("%")) / 100
        if not runs.records(source, "A"):
            continue
        summary = Summary.of(runs.profiles[source, old], runs.plans["A"], calibration)
        replay_text = runs.replay(old)
        with forms.replaying(replay_text):
            what_if = summary.mixed(replay_text.shares, share)
        yield n, share, summary, what_if, runs.value(source, "A", old, "total") - runs.value(n, "A", old, "total")


def replay(runs: Runs, old: str, calibration) -> dict:
    """Each replay run: the forecast's reduction (the what-if, `Summary.mixed`) against the measured one."""
    rows = []
    for n, share, summary, what_if, measured in what_ifs(runs, old, calibration):
        predicted = summary.forecast.total - what_if.forecast.total
        rows.append({"run": n, "share": share, "forecast_reduction": predicted, "measured_reduction": measured,
                     "within_x2": within([predicted], [measured], 2.0)[0]})  # fmt: skip
    return {"runs": len(rows), "within_x2": sum(r["within_x2"] for r in rows), "per_run": rows}


def replay_supplement(log) -> dict:
    """The replay supplement scored as PROTOCOL-replay.md fixes: each run's reduction from its v4 1ep run, the
    forecast's from the what-if, per old text (wiki primary), with v4's calibration (v3's 5 probes)."""
    from vocabrisk.risk.summary import Summary

    mixes, bases = Runs.v4_replay(log), Runs.v4(log, "heldout")
    results = {"split": "heldout", "suite": mixes.suite["fingerprint"], "old": {}}
    for old in mixes.suite["old"]:
        calibration, replay_text = calibrate(bases, old), bases.replay(old)
        replay_docs = set(v3_replay(bases.loaded))
        rows = []
        for n in mixes.names("A", role="replay"):
            base_name, tail = n.split("+replay")
            share = float(tail.rstrip("%")) / 100
            corpus = data.read_jsonl(bases.folder / "texts" / f"{bases.info[base_name]['file']}.jsonl")
            mixed = data.read_jsonl(mixes.folder / "texts" / f"{mixes.info[n]['file']}.jsonl")
            own = [d for d in mixed if d not in replay_docs]
            if own != corpus[: len(own)]:  # the mix's corpus part is the 1ep run's first documents, as in v4
                raise SystemExit(f"{n}: its corpus part is not the head of {base_name}'s text; rebuild both suites")
            summary = Summary.of(bases.profiles[base_name, old], bases.plans["A"], calibration)
            with forms.replaying(replay_text):
                what_if = summary.mixed(replay_text.shares, share)
            predicted = summary.forecast.total - what_if.forecast.total
            measured_base = bases.value(base_name, "A", old, "total")
            measured = measured_base - mixes.value(n, "A", old, "total")
            rows.append({"run": n, "share": share, "measured_0%": measured_base, "forecast_0%": summary.forecast.total,
                         "measured_reduction": measured, "forecast_reduction": predicted,
                         "coverage": what_if.forecast.replay.coverage, "body_kept": what_if.forecast.replay.protection,
                         "within_x2": within([predicted], [measured], 2.0)[0]})  # fmt: skip
        results["old"][old] = {"runs": len(rows), "within_x2": sum(r["within_x2"] for r in rows), "per_run": rows}
    return results


def replay_markdown(results: dict) -> str:
    """The supplement's results as docs/VALIDITY.md quotes them."""
    lines = ["# v4 replay supplement: six fresh replay runs against forecast term 8 (v4/PROTOCOL-replay.md)",
             "", f"Suite {results['suite']}; plan A, seed 0; calibration v4's (v3's 5 probes). Target: within ×2 on "
             "≥ 5 of 6 (wiki, the replay text's kind)."]  # fmt: skip
    for old, r in results["old"].items():
        lines += ["", f"## Old text: {old}", "", f"Forecast reduction within ×2 of the measured on {r['within_x2']} "
                  f"of {r['runs']}.", "", "| run | measured at 0% | forecast at 0% | measured reduction | forecast "
                  "reduction | coverage | body kept | within ×2 |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
        lines += [f"| {p['run']} | {p['measured_0%']:+.3f} | {p['forecast_0%']:+.3f} | {p['measured_reduction']:+.3f} "
                  f"| {p['forecast_reduction']:+.3f} | {p['coverage']:.2f} | {p['body_kept']:.2f} "
                  f"| {'yes' if p['within_x2'] else 'no'} |" for p in r["per_run"]]  # fmt: skip
    return "\n".join(lines)


def markdown(results: dict, title: str = "v4 results: SmolLM2-135M-Instruct", probes: str = "v3's 5 probes",
             note: str = "") -> str:  # fmt: skip
    """The results as docs/VALIDITY.md quotes them, under TITLE (and NOTE), calibrated on PROBES."""

    def ci(c: dict) -> str:
        return f"{c['rho']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}]"

    def pct(s: dict | None) -> str:
        return "n/a" if not s or s["share"] is None else f"{s['share']:.0%} of {s['of']}"

    lines = [f"# {title}, {results['split']} runs ({results['candidates']} ranking candidates, plan A)", ""]
    lines += [note, ""] if note else []
    for old, r in results["old"].items():
        cal = r["calibration"]
        lines += [
            f"## Old text: {old}",
            "",
            f"Calibration ({probes} only): kappa {cal['kappa']:.3g}, body_gain {cal['body_gain']:.4g}, "
            f"adaptation {cal['adaptation']:.3g} (fixed), band ×/÷ {cal['band']:.2f}. Calibrated within ×2 of the "
            f"measured total: {pct(r['within_x2_calibrated'])}; within ×2 or 0.03 nats: {pct(r['within_x2_or_0.03'])}; "
            f"uncalibrated defaults within ×3: {pct(r['within_x3_defaults'])}.",
            "",
            "| predictor | Spearman vs total | Spearman vs head-only |",
            "|---|---|---|",
        ]
        lines += [f"| {k} | {ci(v['total'])} | {ci(v['head_only'])} |" for k, v in r["spearman"].items()]
        c = r["ceiling"]
        if c and "total" in c:
            lines += [f"| seed vs seed ({c['candidates']} candidates): the ceiling | {ci(c['total'])} | "
                      f"{ci(c['head_only'])} |"]  # fmt: skip
        cv = r["curves"]
        if cv:
            lines += ["", f"Curves ({cv['points']} points at steps 10, 20, 40): within ×1.5 {pct(cv['within_x1.5'])} "
                      f"(v3 scaled linearly in Σ lr: {pct(cv['v3_linear_within_x1.5'])}); order at step 20 "
                      f"{ci(cv['spearman_20'])}."]  # fmt: skip
            for plan, p in cv["per_plan"].items():
                lines.append(f"- plan {plan} ({p['runs']} runs), step 40: Spearman {ci(p['spearman_40'])}, within "
                             f"×1.5 {pct(p['within_x1.5_40'])}")  # fmt: skip
        b = r["regime_b"]
        if b and "within_x1.5" in b:
            lines += ["", f"Regime B ({b['runs']} runs, 80 steps): Spearman at 80 {ci(b['spearman_80'])}; points at "
                      f"10, 20, 40, 80 within ×1.5 {pct(b['within_x1.5'])}."]  # fmt: skip
        elif b and "spearman_80" in b:
            lines += ["", f"Regime B ({b['runs']} runs, 80 steps): Spearman at 80 {ci(b['spearman_80'])}; within ×2 "
                      f"at 80 {pct(b['within_x2'])}."]  # fmt: skip
        if r["replay"]:
            rp = r["replay"]
            lines += ["", f"Replay ({rp['runs']} runs): the forecast's reduction within ×2 of the measured on "
                      f"{rp['within_x2']} of {rp['runs']}.", "", "| run | measured reduction | forecast reduction |",
                      "|---|---|---|"]  # fmt: skip
            lines += [f"| {p['run']} | {p['measured_reduction']:+.3f} | {p['forecast_reduction']:+.3f} |"
                      for p in rp["per_run"]]  # fmt: skip
        lines += ["", "Ablation (the calibrated forecast with one term removed or changed):", ""]
        lines += ["| forecast | total | head-only |", "|---|---|---|"]
        lines += [f"| {k} | {ci(v['total'])} | {ci(v['head_only'])} |" for k, v in r["ablation"].items()]
        lines += ["", "| run | seeds | measured total | forecast | defaults | v3 | measured head | forecast head |",
                  "|---|---|---|---|---|---|---|---|"]  # fmt: skip
        lines += [
            f"| {p['run']} | {p['seeds']} | {p['total']:+.3f} | {p['forecast_total']:+.3f} | {p['default_total']:+.3f} "
            f"| {p['v3_total']:+.3f} | {p['head_only']:+.3f} | {p['forecast_head']:+.3f} |"
            for p in r["per_run"]
        ]
        lines.append("")
    return "\n".join(lines)


def rescored_note(version: str, reported: str) -> str:
    """What a re-scored file is, beside REPORTED (the results that version wrote, which stay as they were)."""
    return (
        f"The runs of {reported}, which holds what {version} reported with its own forecast and stays as it was, "
        f"scored with today's forecast (form {FORM}, vocabrisk/risk/forecast.py) by "
        f"`python benchmarks/validity/score.py --rescore {version}`."
    )


def main() -> int:
    parser = argparse.ArgumentParser(description="score the forecast benchmark's v4 runs, or re-score v3's or v2's")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--final", action="store_true", help="score v4's held-out runs (after the freeze)")
    which.add_argument("--rescore", choices=("v3", "v2"), help="score that version's committed runs with today's "
                       "forecast, into new files beside them (rescored*.json, .md)")  # fmt: skip
    which.add_argument("--replay", action="store_true", help="score v4's replay supplement (PROTOCOL-replay.md)")
    for pool in pool_recipes.POOLS:
        flag, protocol = f"--pool-{pool.lower()}", f"PROTOCOL-pool-{pool.lower()}.md"
        which.add_argument(flag, dest="pool", action="store_const", const=pool, help=f"score pool {pool} ({protocol})")
    args = parser.parse_args()

    def log(message: str) -> None:
        print(message, flush=True)

    if args.replay:
        with forms.as_v4():  # v4's replay supplement, scored by the form it tested
            results = replay_supplement(log)
        text = replay_markdown(results)
        print(text)
        write(V4_REPLAY / "results", results, text)
        return 0

    if args.pool:
        runs = Runs.v4_pool(log, args.pool)
        tested = POOL_FORMS.get(args.pool, ("v4",))  # F and G tested v4
        scored = {form: score(runs, form) for form in tested}
        text = ""
        for form, results in scored.items():
            results["one_epoch"] = one_epoch(results)
            results["fifth_epoch"] = fifth_epoch(results)
            title = f"{form} on pool {args.pool} (fresh sources): SmolLM2-135M-Instruct"
            probes = "the shipped real probe set's 10 runs" if form in REAL_PROBE_FORMS else "v3's 5 probes"
            text += markdown(results, title, probes) + one_epoch_markdown(results, args.pool) + fifth_markdown(results)
            text += "\n\n"
        results = scored[tested[0]] | {form: scored[form] for form in tested[1:]}
        text = text.rstrip("\n")
        print(text)
        write(V4 / f"pool-{args.pool.lower()}" / "results", results, text)
        return 0
    if args.rescore == "v2":
        missing = [b for b in V2_BASES if not (v2.CACHE / b / "suite.json").exists()]
        if missing:
            print(f"score: no v2 suite for {', '.join(missing)}; run suite_v2.py --bases {' '.join(V2_BASES)} first")
            return 2
        for base in V2_BASES:
            runs = Runs.v2(log, base)
            probes = f"the {len(runs.probes[V2_OLD])} probes of {base}'s v2 suite"
            title = f"v2's runs re-scored: {base}"
            results = score(runs)
            text = markdown(results, title, probes, rescored_note("v2", f"results-{base}.md"))
            print(text)
            write(V2 / f"rescored-{base}", results, text)
        return 0
    if args.rescore == "v3":
        results = score(Runs.v3(log, "heldout"))
        text = markdown(results, "v3's runs re-scored: SmolLM2-135M-Instruct", note=rescored_note("v3", "results.md"))
        print(text)
        write(V3 / "rescored", results, text)
        return 0
    results = score(Runs.v4(log, "heldout" if args.final else "design"), "v4")  # v4's runs, by v4 as frozen
    text = markdown(results)
    print(text)
    if args.final:
        write(V4 / "results", results, text)
    return 0


def one_epoch(results: dict) -> dict:
    """{old: {"total", "head_only"}}: the calibrated forecast's Spearman over the one-epoch runs alone."""
    out = {}
    for old, scored in results["old"].items():
        rows = [r for r in scored["per_run"] if r["run"].endswith(":1ep")]
        out[old] = {
            "runs": len(rows),
            "total": spearman_ci([r["forecast_total"] for r in rows], [r["total"] for r in rows]),
            "head_only": spearman_ci([r["forecast_head"] for r in rows], [r["head_only"] for r in rows]),
        }
    return out


def one_epoch_markdown(results: dict, pool: str) -> str:
    lines = ["", f"## The one-epoch runs alone (PROTOCOL-pool-{pool.lower()}.md)", ""]
    for old, c in results["one_epoch"].items():
        t, h = c["total"], c["head_only"]
        lines.append(f"- {old}, {c['runs']} runs: forecast (calibrated) vs total {t['rho']:+.2f} "
                     f"[{t['low']:+.2f}, {t['high']:+.2f}], vs head-only {h['rho']:+.2f} "
                     f"[{h['low']:+.2f}, {h['high']:+.2f}]")  # fmt: skip
    return "\n".join(lines)


def fifth_epoch(results: dict) -> dict:
    """{old: [each 0.2-epoch run's total over its source's 1-epoch run's, measured and calibrated forecast]}
    (PROTOCOL-pool-i.md): how forgetting depends on repetition below one pass."""
    out = {}
    for old, scored in results["old"].items():
        by_run = {r["run"]: r for r in scored["per_run"]}
        rows = []
        for name, fifth in by_run.items():
            one = by_run.get(name.replace(":0.2ep", ":1ep")) if name.endswith(":0.2ep") else None
            if one is not None:
                rows.append({"run": name, "measured": fifth["total"], "measured_1ep": one["total"],
                             "forecast": fifth["forecast_total"], "forecast_1ep": one["forecast_total"]})  # fmt: skip
        out[old] = rows
    return out


def fifth_markdown(results: dict) -> str:
    if not any(results["fifth_epoch"].values()):
        return ""

    def ratio(a: float, b: float) -> str:
        return f"{a / b:.2f}" if b > 0 else "n/a (1 epoch ≤ 0)"

    lines = ["", "", "## The 0.2-epoch runs against their sources' 1-epoch runs (PROTOCOL-pool-i.md)", "",
             "| old text | run | measured total | at 1 epoch | measured ratio | forecast ratio |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for old, rows in results["fifth_epoch"].items():
        lines += [f"| {old} | {r['run']} | {r['measured']:+.3f} | {r['measured_1ep']:+.3f} | "
                  f"{ratio(r['measured'], r['measured_1ep'])} | {ratio(r['forecast'], r['forecast_1ep'])} |"
                  for r in rows]  # fmt: skip
    return "\n".join(lines)


def write(stem: Path, results: dict, text: str) -> None:
    """STEM.json and STEM.md."""
    stem.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n")
    stem.with_suffix(".md").write_text(text + "\n")
    print(f"-> {stem}.json, {stem}.md")


if __name__ == "__main__":
    sys.exit(main())
