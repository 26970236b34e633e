"""v8's design, first pass, on design data only: every run of v3 and of pools E to J (all seen).

    python benchmarks/validity/design_v8.py dump   # every design case's terms -> benchmarks/.cache/validity/v8/
    python benchmarks/validity/design_v8.py        # -> docs/validity/v8/design.txt (dumps first if needed)

`dump` scans each design run's text against each old text once and keeps, per (set, run, plan, old text),
what was measured (seed means of the total, the head-only and body-only parts and their curves), the landed
form's head and adaptation as the scorer calibrates them, and the token distributions every body term is
made of (the corpus's shares, the plan's exposure, the old text's usage and prior, its ids), so that forms of
the body are compared without a rescan (a dump takes under a minute once the scans are cached).

The report asks why v7 ranks prose-old-text forgetting at +0.3 to +0.5 on pools F to J while it ranks the
code old text's at +0.5 to +0.9, and whether a body term from the counts fixes it: the single terms against the
measured body part, then forms of the body as the total's ranking with the gain fitted two ways (on v3's
candidates, as v5 to v7 were designed; and leaving each tested set out of the fit, which says whether a
second constant earns its place), then the fitted training loss as an oracle for narrowness. Nothing here is
held out: pool K (docs/validity/v4/PROTOCOL-pool-k.md) is the test of whatever form is frozen from it.
"""

from __future__ import annotations

import hashlib
import json
import math
import pickle
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import forms
import score
from design import Transcript, spearman

CACHE = data.CACHE / "v8"
OUT = data.REPO / "docs" / "validity" / "v8" / "design.txt"
SETS = ("v3", "E", "F", "G", "H", "I", "J")
OLDS = ("wiki", "code")


def _runs(log, label: str):
    if label == "v3":
        return score.Runs.v3(log)
    if label == "E":
        return score.Runs.v4(log, "heldout")
    return score.Runs.v4_pool(log, label)


def dump(log=print, sets=SETS, cache: Path = CACHE) -> Path:
    """Every design case's measurements and terms (of SETS, kept in CACHE), pickled: {"cases": [...], "arrays":
    {digest: array}}. The terms are v8's (`forms.as_v8`), the form these design records were made with."""
    with forms.as_v8():
        return _dump(log, sets, cache)


def _dump(log, sets, cache: Path) -> Path:
    from vocabrisk.risk.calibration import Calibration
    from vocabrisk.risk.exposure import never_seen_share
    from vocabrisk.risk.summary import Summary, old_usage

    arrays: dict[str, np.ndarray] = {}

    def keep(array) -> str:
        array = np.asarray(array, dtype=np.float64)
        digest = hashlib.blake2b(array.tobytes(), digest_size=12).hexdigest()
        arrays.setdefault(digest, array)
        return digest

    cases = []
    for label in sets:
        runs = _runs(log, label)
        calibrations = {old: score.calibrate(runs, old) for old in OLDS}
        for (name, plan), records in sorted(runs.measured.items()):
            role = runs.info[name]["role"]
            for old in OLDS:
                profile = runs.profiles[name, old]
                summary = Summary.of(profile, runs.plans[plan], calibrations[old])
                f = summary.forecast
                default = Summary.of(profile, runs.plans[plan], Calibration(adaptation=score.SMOLLM2_ADAPTATION))
                measured = [r["old"][old] for r in records]
                curve = {}
                if all("curve" in m for m in measured):
                    curve = {"steps": measured[0]["curve"]["steps"]} | {
                        key: np.mean([m["curve"][key] for m in measured], axis=0).tolist()
                        for key in ("total", "head_only")
                    }
                usage = old_usage(profile)
                cases.append({
                    "set": label, "name": name, "plan": plan, "role": role, "old": old, "seeds": len(records),
                    "total": float(np.mean([m["total"] for m in measured])),
                    "head_only": float(np.mean([m["head_only"] for m in measured])),
                    "body_only": float(np.mean([m["body_only"] for m in measured])),
                    "totals": [m["total"] for m in measured], "curve": curve,
                    "head": f.head, "head_curve": [p.head for p in f.curve], "steps": [p.step for p in f.curve],
                    "lr_sums": [p.lr_sum for p in f.curve], "adaptation": [p.adaptation for p in f.curve],
                    "default_head": default.forecast.head, "body_gain": calibrations[old].body_gain,
                    "kappa": calibrations[old].kappa, "unit": f.terms.unit, "unit_curve": list(f.terms.curve),
                    "S": f.terms.starved, "B": f.terms.alike, "E": f.terms.passes, "H1": f.terms.entropy,
                    "never_seen": never_seen_share(profile),
                    "epochs": f.epochs, "corpus_tokens": profile.total_tokens,
                    "tokens_seen": [p.step * runs.plans[plan].tokens_per_step for p in f.curve],
                    "lr": runs.plans[plan].learning_rate,
                    "shares": keep(profile.shares), "exposure": keep(summary.risk.exposure),
                    "prior": keep(summary.risk.prior),
                    "usage": keep(usage if usage is not None else summary.risk.prior),
                    "coverable": keep(profile.coverable),
                    "old_ids": keep(profile.old_text.ids), "old_starts": keep(profile.old_text.starts),
                })  # fmt: skip
        log(f"{label}: {sum(c['set'] == label for c in cases)} cases")
    cache.mkdir(parents=True, exist_ok=True)
    out = cache / "cases.pkl"
    with open(out, "wb") as handle:
        pickle.dump({"cases": cases, "arrays": arrays}, handle)
    return out


def load(sets=SETS, cache: Path = CACHE) -> list[dict]:
    """The dumped cases (dumping first where there is none), each with its distributions and the terms the
    forms below are made of."""
    from vocabrisk.prior.old_text import OldText
    from vocabrisk.risk.exposure import distribution
    from vocabrisk.risk.forecast import BODY_RELAXATION, ENTROPY_WEIGHT, self_alike

    if not (cache / "cases.pkl").exists():
        dump(sets=sets, cache=cache)
    with open(cache / "cases.pkl", "rb") as handle:
        stored = pickle.load(handle)
    arrays, cases, halves = stored["arrays"], stored["cases"], {}
    for c in cases:
        c["corpus"], c["usage_p"] = distribution(arrays[c["shares"]]), distribution(arrays[c["usage"]])
        c["prior_p"], c["exposure_a"] = arrays[c["prior"]], arrays[c["exposure"]]
        key = c["old_ids"]
        if key not in halves:
            old = OldText(arrays[key].astype(np.int64), arrays[c["old_starts"]].astype(np.int64))
            halves[key] = self_alike(old, len(c["usage_p"])), old.ids, old.starts
        c["self_alike"], c["old_ids_a"], c["old_starts_a"] = halves[key]
        c["coverage"] = min(1.0, (c["B"] / c["self_alike"]) ** 2)
        lr_sum, steps = c["lr_sums"][-1], c["steps"][-1]
        c["pace"] = (lr_sum / steps) * -math.expm1(-lr_sum / BODY_RELAXATION)
        c["passes_term"] = math.log1p(max(1.0, c["E"]))
        c["narrow"] = math.exp(-ENTROPY_WEIGHT * c["H1"])
    return cases


def candidates(cases: list[dict], label: str, old: str) -> list[dict]:
    """The plan-A ranking candidates of one set on one old text: what each Spearman below is over."""
    return [c for c in cases if (c["set"], c["old"], c["plan"], c["role"]) == (label, old, "A", "candidate")]


def unigram_tilt(c: dict, strength: float, floor: float = 1e-5) -> float:
    """KL(q || q·e^d / Z) with d = STRENGTH · ln(corpus / q): the old text's token distribution q tilted toward
    the corpus's (smoothed by the prior), the loss a body that moved every context's output that way would add."""
    q, corpus = c["usage_p"], c["corpus"] * (1 - floor) + floor * c["prior_p"]
    kept = q > 0
    d = strength * np.log(corpus[kept] / q[kept])
    return float(math.log(np.dot(q[kept], np.exp(d))) - np.dot(q[kept], d))


def context_tilt(c: dict, scale: float) -> float:
    """The head's competition (terms 4 and 5 of `vocabrisk.risk.forecast`) with every row's push at SCALE and no
    Adam eps: the body as a tilt of all rows' logits along the corpus's usage, read on the old contexts."""
    from vocabrisk.prior.old_text import OldText
    from vocabrisk.risk.forecast import competition, push

    shares, prior = c["corpus"], c["prior_p"]
    with np.errstate(divide="ignore", invalid="ignore"):
        target = np.where((shares > 0) & (prior > 0), np.log(shares / prior), 0.0)
    old = OldText(c["old_ids_a"], c["old_starts_a"])
    return float(competition(push(shares, prior, c["exposure_a"]), shares > 0, old, prior, (scale,), target)[0])


def mixture_kl(c: dict, weight: float) -> float:
    """KL(q || (1 - WEIGHT) q + WEIGHT · corpus): what the old text loses if its distribution took in the corpus."""
    q = c["usage_p"]
    m = (1 - weight) * q + weight * c["corpus"]
    kept = q > 0
    return float(np.dot(q[kept], np.log(q[kept] / m[kept])))


def bodies() -> dict:
    """Body terms in nats per unit of gain: v7 and what replaces or adds to its S·B (each keeps v7's pace,
    passes and e^{-H₁/2} unless its label says otherwise)."""
    drive = lambda c: c["pace"] * c["passes_term"] * c["narrow"]  # noqa: E731
    out = {
        "v7: S·B": lambda c: c["unit"],
        "S (no B)": lambda c: drive(c) * c["S"],
        **{f"S·B^{b}": (lambda c, b=b: drive(c) * c["S"] * c["B"] ** b) for b in (0.5, 1.5)},
        **{f"S·(B+{f})": (lambda c, f=f: drive(c) * c["S"] * (c["B"] + f)) for f in (0.05, 0.1, 0.2)},
        "S·B·(1-coverage): own replay": lambda c: c["unit"] * (1 - c["coverage"]),
        "S·B·(1-B/B_self)": lambda c: c["unit"] * max(0.0, 1 - c["B"] / c["self_alike"]),
        **{f"unigram tilt {s}": (lambda c, s=s: drive(c) * unigram_tilt(c, s)) for s in (0.1, 0.25, 0.5)},
        **{f"context tilt {s}": (lambda c, s=s: drive(c) * context_tilt(c, s)) for s in (1.0, 10.0)},
        "mixture KL 0.1": lambda c: drive(c) * mixture_kl(c, 0.1),
    }
    return out


def fitted(cases: list[dict], terms: list, old: str, sets, role: str = "candidate") -> np.ndarray:
    """Non-negative gains of the body TERMS on the plan-A runs of ROLE in SETS on OLD text, least squares on the
    measured total less the head plus the adaptation."""
    rows = [c for c in cases if c["set"] in sets and (c["old"], c["plan"], c["role"]) == (old, "A", role)]
    x = np.array([[term(c) for term in terms] for c in rows])
    y = np.array([c["total"] - c["head"] + c["adaptation"][-1] for c in rows])
    scale = np.where(x.max(axis=0) > 0, x.max(axis=0), 1.0)
    return nnls(x / scale, y)[0] / scale


def median_gain(cases: list[dict], term, old: str, sets) -> float:
    """The gain v5 to v7 were designed with: the median of (measured total - head + adaptation) / term."""
    rows = [c for label in sets for c in candidates(cases, label, old) if term(c) > 0]
    return float(np.median([(c["total"] - c["head"] + c["adaptation"][-1]) / term(c) for c in rows]))


def ranked(cases: list[dict], terms: list, gains, columns) -> list[float]:
    """Spearman of head + gains · terms - adaptation with the measured total, per (set, old) column; GAINS gives
    the gains for a column."""
    out = []
    for label, old in columns:
        chosen = candidates(cases, label, old)
        g = gains(label, old)
        made = [c["head"] + float(np.dot(g, [t(c) for t in terms])) - c["adaptation"][-1] for c in chosen]
        out.append(spearman(made, [c["total"] for c in chosen]))
    return out


def row(say, label: str, values: list[float], width: int = 30) -> None:
    half = len(values) // 2
    say(f"{label:>{width}}  " + " ".join(f"{v:>+5.2f}" for v in values)
        + f"  {np.mean(values[:half]):+.2f} {np.mean(values[half:]):+.2f} {min(values):+.2f}")  # fmt: skip


def header(say, columns, width: int = 30) -> None:
    say(f"{'':>{width}}  " + " ".join(f"{s + o[0]:>5}" for s, o in columns) + "  wiki  code   min")


def probe_gain(cases: list[dict], old: str, best) -> float:
    """The body gain BEST (`calibration._best_gain`, or the landed grid's) fits on v3's 5 probes of OLD text, at the
    kappa the scorer fitted (the head does not depend on the gain)."""
    probes = [c for c in cases if (c["set"], c["old"], c["role"]) == ("v3", old, "probe")]
    head, total, body = (np.array([c[k] for c in probes]) for k in ("head", "total", "unit"))
    return best(head, total, body, probes[0]["adaptation"][-1])


def sizes(cases: list[dict], gains: dict, columns) -> dict[str, list[float]]:
    """Per column, with the body gain GAINS[old]: the Spearman of the total, the share within x2 at the plan's end,
    the share of curve points (steps 10 and on) within x1.5, and the order at step 20."""
    out: dict[str, list[float]] = {"Spearman": [], "within x2": [], "curve points x1.5": [], "order at step 20": []}
    for label, old in columns:
        chosen, g = candidates(cases, label, old), gains[old]
        made = [c["head"] + g * c["unit"] - c["adaptation"][-1] for c in chosen]
        measured = [c["total"] for c in chosen]
        points, at20 = [], ([], [])
        for c in chosen:
            for step, m in zip(c["curve"].get("steps", []), c["curve"].get("total", []), strict=True):
                if step < 10:
                    continue
                i = c["steps"].index(step)
                p = c["head_curve"][i] + g * c["unit_curve"][i] - c["adaptation"][i]
                points.append(m > 0 and 1 / 1.5 <= p / m <= 1.5)
                if step == 20:
                    at20[0].append(p), at20[1].append(m)
        out["Spearman"].append(spearman(made, measured))
        ratios = [p / m if m > 0 else 0.0 for p, m in zip(made, measured, strict=True)]
        out["within x2"].append(float(np.mean([0.5 <= r <= 2 for r in ratios])))
        out["curve points x1.5"].append(float(np.mean(points)) if points else float("nan"))
        out["order at step 20"].append(spearman(*at20) if len(at20[0]) > 2 else float("nan"))
    return out


def training_loss(cases: list[dict]) -> None:
    """Each case's final training loss (seed mean; v3's runs kept none): an oracle, measured by training."""
    logs = {"E": score.V4_RUNS, **{p: score.V4 / f"pool-{p.lower()}" / "smollm2-runs.jsonl" for p in "FGHIJ"}}
    losses: dict = {}
    for label, path in logs.items():
        for record in score.read_log(path):
            if record["regime"] == "A" and record.get("final_train_loss") is not None:
                losses.setdefault((label, record["run"]), []).append(record["final_train_loss"])
    for c in cases:
        c["train_loss"] = float(np.mean(losses[c["set"], c["name"]])) if (c["set"], c["name"]) in losses else None


VOCAB_KEY = 1 << 20  # pairs (a, b) of ids keyed a · VOCAB_KEY + b: above any vocabulary here


def next_token(ids: np.ndarray, starts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 2-grams of IDS inside each document (STARTS its offsets, None: one document): their keys, P(b | a), and
    the count of each context a."""
    ids = np.asarray(ids, dtype=np.int64)
    keep = np.ones(max(len(ids) - 1, 0), dtype=bool)
    if starts is not None:
        inner = np.asarray(starts[1:-1], dtype=np.int64) - 1  # the pair that crosses into the next document
        keep[inner[(inner >= 0) & (inner < len(keep))]] = False
    keys, counts = np.unique(ids[:-1][keep] * VOCAB_KEY + ids[1:][keep], return_counts=True)
    context = np.bincount(keys // VOCAB_KEY, weights=counts, minlength=VOCAB_KEY)
    return keys, counts / context[keys // VOCAB_KEY], context


def shared_contexts(cases: list[dict]) -> None:
    """Each plan-A candidate's share of the old text's contexts (its token a before a next token) that the corpus
    also has, and the part of that share where the two disagree on what comes next (1 - the Bhattacharyya
    coefficient of P_old(. | a) and P_corpus(. | a)): the transfer a body term would need, were 2-grams counted."""
    import suite_v3
    import suite_v4
    import suite_v4_pools

    folders = {"v3": suite_v3.OUT, "E": suite_v4.OUT, **suite_v4_pools.OUT}
    olds, suites = {}, {}
    for c in cases:
        if (c["plan"], c["role"]) != ("A", "candidate"):
            continue
        if c["old_ids"] not in olds:
            keys, p, context = next_token(c["old_ids_a"], c["old_starts_a"])
            olds[c["old_ids"]] = keys, p, context / context.sum()
        keys, p, usage = olds[c["old_ids"]]
        folder = folders[c["set"]]
        if folder not in suites:
            runs = json.loads((folder / "suite.json").read_text())["runs"]
            suites[folder] = {run["name"]: run["file"] for run in runs}, np.load(folder / "tokens.npz")
        files, tokens = suites[folder]
        corpus_keys, corpus_p, corpus_context = next_token(tokens[f"{files[c['name']]}/train"])
        common, i, j = np.intersect1d(keys, corpus_keys, return_indices=True)
        agree = np.bincount(common // VOCAB_KEY, weights=np.sqrt(p[i] * corpus_p[j]), minlength=VOCAB_KEY)
        has = corpus_context > 0
        c["shared"] = float(np.sum(usage[has]))
        c["conflict"] = float(np.sum(usage[has] * (1 - agree[has])))


def main() -> int:
    from vocabrisk.risk import calibration

    say = Transcript()
    cases = load()
    columns = [(s, o) for o in OLDS for s in SETS]
    counts = ", ".join(str(len(candidates(cases, s, o))) for s, o in columns)
    say("# Output of benchmarks/validity/design_v8.py: design data only (v3, pools E to J: all seen)")
    say(f"Plan-A candidates, seed means; per (set, old text) column ({counts} runs); then the mean over the wiki")
    say("columns, over the code columns, and the smallest.")
    say()
    say("0. v7's terms calibrated on v3's 5 probes per old text, the body gain as landed (a grid that ends at 1e5)")
    say("   and as v8 fits it (a grid around what the probes ask for, refined), at the kappa the scorer fits:")
    for label, best in (("landed", forms._landed_gain), ("v8", calibration._best_gain)):
        gains = {o: probe_gain(cases, o, best) for o in OLDS}
        say(f"   {label}: body gain {gains['wiki']:.4g} (wiki), {gains['code']:.4g} (code)")
        header(say, columns)
        for measure, values in sizes(cases, gains, columns).items():
            kept = [v for v in values if v == v]  # v3 has no curves: its columns are nan there
            half = len(values) // 2
            say(f"{label + ': ' + measure:>30}  " + " ".join(f"{v:>+5.2f}" for v in values)
                + f"  {np.nanmean(values[:half]):+.2f} {np.nanmean(values[half:]):+.2f} {min(kept):+.2f}")  # fmt: skip
    say()
    say("1. Spearman of single terms with the measured body part (body_only):")
    header(say, columns)
    singles = {"S": lambda c: c["S"], "B": lambda c: c["B"], "-H1": lambda c: -c["H1"], "passes E": lambda c: c["E"],
               "v7's body term": lambda c: c["unit"], "v7's head (calibrated)": lambda c: c["head"]}  # fmt: skip
    for label, term in singles.items():
        row(say, label, [spearman([term(c) for c in candidates(cases, s, o)],
                                  [c["body_only"] for c in candidates(cases, s, o)]) for s, o in columns])  # fmt: skip
    say()
    say("2. Spearman of the forecast total with the measured total, the body's gain the median ratio on v3's")
    say("   candidates per old text (as v5 to v7 were designed):")
    header(say, columns)
    for label, term in bodies().items():
        row(say, label, ranked(cases, [term], lambda s, o, t=term: [median_gain(cases, t, o, ("v3",))], columns))
    say()
    say("3. Two pathways, each with its own gain per old text (non-negative least squares): v7's term (transfer,")
    say("   S·B) and a drift that needs nothing shared (S, no B). Gains fitted on v3's candidates, then leaving the")
    say("   tested set out of a fit on the six others (a second constant earns its place only if the second holds):")
    header(say, columns)
    transfer, drift = bodies()["v7: S·B"], bodies()["S (no B)"]
    for label, terms in (("v7 alone", [transfer]), ("drift + transfer", [transfer, drift])):
        row(say, f"{label}, fit on v3", ranked(cases, terms, lambda s, o, t=terms: fitted(cases, t, o, ("v3",)),
                                               columns))  # fmt: skip
        row(say, f"{label}, set left out", ranked(cases, terms, lambda s, o, t=terms: fitted(
            cases, t, o, [x for x in SETS if x != s]), columns))  # fmt: skip
    for o in OLDS:
        gains = fitted(cases, [transfer, drift], o, ("v3",))
        probes = fitted(cases, [transfer, drift], o, ("v3",), role="probe")
        say(
            f"   gains on {o}: fitted on v3's candidates, transfer {gains[0]:.3g} and drift {gains[1]:.3g}; on v3's 5 "
            f"probes (what calibration has), {probes[0]:.3g} and {probes[1]:.3g}"
        )
    say()
    training_loss(cases)
    pools = [(s, o) for s, o in columns if s != "v3"]
    say("4. Oracle: the final training loss (measured by training, not a forecast) in e^{-H1/2}'s place, gain the")
    say("   median ratio over the other pools' candidates (E to J; v3's runs kept no training loss):")
    header(say, pools)
    core = lambda c: c["pace"] * c["passes_term"] * c["S"] * c["B"]  # noqa: E731
    oracles = {"v7": transfer}
    for w in (0.5, 1.0):
        oracles[f"S·B·e^-{w}·loss"] = lambda c, w=w: core(c) * math.exp(-w * c["train_loss"])
    oracles["S·e^-loss (no B)"] = lambda c: c["pace"] * c["passes_term"] * c["S"] * math.exp(-c["train_loss"])
    for label, term in oracles.items():
        row(say, label, ranked(cases, [term], lambda s, o, t=term: [median_gain(
            cases, t, o, [x for x in SETS if x not in ("v3", s)])], pools))  # fmt: skip
    say()
    shared_contexts(cases)
    say("5. Contexts shared with the old text (from the corpus's and the old text's 2-grams, which the scan no longer")
    say("   counts): Spearman with the measured body part, then as body terms (gain the median ratio on v3):")
    header(say, columns)
    drive = lambda c: c["pace"] * c["passes_term"] * c["narrow"]  # noqa: E731
    for label, term in (
        ("shared (body part)", lambda c: c["shared"]),
        ("conflict (body part)", lambda c: c["conflict"]),
    ):
        row(say, label, [spearman([term(c) for c in candidates(cases, s, o)],
                                  [c["body_only"] for c in candidates(cases, s, o)]) for s, o in columns])  # fmt: skip
    for label, term in (("S·conflict", lambda c: drive(c) * c["S"] * c["conflict"]),
                        ("conflict (no S)", lambda c: drive(c) * c["conflict"])):  # fmt: skip
        row(say, label, ranked(cases, [term], lambda s, o, t=term: [median_gain(cases, t, o, ("v3",))], columns))
    say.write(OUT)
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["dump"]:
        print(dump())
    else:
        sys.exit(main())
