"""A design probe after pool K (every set seen): can a probe set that holds narrow text calibrate two body
pathways per old text?

    python benchmarks/validity/design_v9.py dump   # every case of v3 and pools E to K -> benchmarks/.cache/validity/v9/
    python benchmarks/validity/design_v9.py        # -> docs/validity/v9/design.txt (dumps first if needed)

Held out on pools I, J and K, one body term with one sign does not rank both old texts. On prose (`wiki`),
forgetting follows how little of the vocabulary a corpus covers (the never-seen share ranked pool K at +0.80).
On code it follows the corpus's likeness B. v8's design record asked for a property of the old text, measured
once per base model and old text, as kappa is. Calibration is that measurement: `vocabrisk calibrate`
fine-tunes the model on a probe set. v3's 5 probes hold no narrow text, and on them a second, drift pathway's
gain fitted to 0 on both old texts (design_v8.py, section 3). This asks whether narrow probes change that.

Fixed before any number below was computed (2026-12-06), so the comparison is not chosen after looking:
- pathways: transfer T, v8's body term (S·B, pace, passes, e^{-H₁/2}); drift D, the same without B (design_v8's
  "S (no B)"); and drift N, pace · passes · e^{-H₁/2} · the never-seen share (the share of coverable rows the
  corpus never holds);
- probe sets: v3's 5 probes (what `calibrate` ships), and those 5 with v3's three narrow candidates (speaker
  names, FOLDOC headwords, SQL select lines; plan A, 3 epochs each);
- the fit: the calibration's own search (`calibration._best_gain`, least squared log error), alternating between
  the two gains until they settle; kappa as the scorer fits it on the 5 probes (the head does not move);
- scored on pools E to K, none of which gave a probe: plan-A candidates, seed means; per (pool, old text)
  column the Spearman of the total and the share within ×2; the mean per old text and the smallest column;
- beside them, the two-pathway fit on each column's own candidates (in-sample: what the form could do at best,
  not a forecast).
Nothing here is held out; a form taken from it needs a pool fixed before it is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import design_v8 as v8
from design import Transcript, spearman

CACHE = data.CACHE / "v9"
OUT = data.REPO / "docs" / "validity" / "v9" / "design.txt"
SETS = ("v3", "E", "F", "G", "H", "I", "J", "K")
POOLS = SETS[1:]
NARROW = ("narrow:speaker-names", "narrow:foldoc-headwords", "narrow:sql-select")


def pathways() -> dict:
    drive = lambda c: c["pace"] * c["passes_term"] * c["narrow"]  # noqa: E731
    return {
        "T": lambda c: c["unit"],
        "D": lambda c: drive(c) * c["S"],
        "N": lambda c: drive(c) * c["never_seen"],
    }


def probes(cases: list[dict], old: str, narrow: bool) -> list[dict]:
    shipped = [c for c in cases if (c["set"], c["old"], c["role"]) == ("v3", old, "probe")]
    extra = [c for c in cases if (c["set"], c["old"], c["plan"]) == ("v3", old, "A") and c["name"] in NARROW]
    assert len(shipped) == 5 and (not narrow or len(extra) == len(NARROW)), (len(shipped), len(extra))
    return shipped + (extra if narrow else [])


def fit(rows: list[dict], terms: list) -> list[float]:
    """Gains of TERMS on ROWS by the calibration's log-error search, one gain at a time with the others held,
    until none moves (at most 20 rounds)."""
    from vocabrisk.risk.calibration import _best_gain

    head = np.array([c["head"] for c in rows])
    total = np.array([c["total"] for c in rows])
    x = np.array([[t(c) for t in terms] for c in rows])  # (rows, terms)
    adaptation = rows[0]["adaptation"][-1]
    gains = [0.0] * len(terms)
    for _ in range(20):
        before = list(gains)
        for i in range(len(terms)):
            rest = head + sum(gains[j] * x[:, j] for j in range(len(terms)) if j != i)
            gains[i] = _best_gain(rest, total, x[:, i], adaptation)
        if np.allclose(before, gains, rtol=1e-3):
            break
    return gains


def scored(cases: list[dict], terms: list, gains_for) -> dict[str, list[float]]:
    """Per (pool, old text) column: the Spearman of the total and the share within ×2, with GAINS_FOR(label, old)."""
    out: dict[str, list[float]] = {"Spearman": [], "within x2": []}
    for old in v8.OLDS:
        for label in POOLS:
            chosen, g = v8.candidates(cases, label, old), gains_for(label, old)
            made = [c["head"] + float(np.dot(g, [t(c) for t in terms])) - c["adaptation"][-1] for c in chosen]
            measured = [c["total"] for c in chosen]
            out["Spearman"].append(spearman(made, measured))
            out["within x2"].append(
                float(np.mean([m > 0 and 0.5 <= p / m <= 2 for p, m in zip(made, measured, strict=True)]))
            )
    return out


def main() -> int:
    say = Transcript()
    cases = v8.load(SETS, CACHE)
    columns = [(s, o) for o in v8.OLDS for s in POOLS]
    counts = ", ".join(str(len(v8.candidates(cases, s, o))) for s, o in columns)
    say("# Output of benchmarks/validity/design_v9.py: design data only (v3, pools E to K: all seen)")
    say(f"Plan-A candidates, seed means; per (pool, old text) column ({counts} runs); then the mean over the wiki")
    say("columns, over the code columns, and the smallest. Gains fitted on probes of v3 only (none from a pool).")
    say()
    paths = pathways()
    forms = {
        "T (v8)": ["T"],
        "T + D": ["T", "D"],
        "T + N": ["T", "N"],
        "T + D + N": ["T", "D", "N"],
    }
    say("1. Spearman of the total and share within x2; gains fitted on the 5 shipped probes, then on the 5 with")
    say("   v3's three narrow candidates:")
    v8.header(say, columns, width=34)
    for narrow in (False, True):
        tag = "5+3 probes" if narrow else "5 probes"
        for label, keys in forms.items():
            terms = [paths[k] for k in keys]
            gains = {o: fit(probes(cases, o, narrow), terms) for o in v8.OLDS}
            for measure, values in scored(cases, terms, lambda s, o, g=gains: g[o]).items():
                v8.row(say, f"{label}, {tag}: {measure}", values, width=34)
            shown = {o: ", ".join(f"{k} {g:.3g}" for k, g in zip(keys, gains[o], strict=True)) for o in v8.OLDS}
            say("   gains: " + "; ".join(f"{o} {text}" for o, text in shown.items()))
    say()
    say("2. In-sample ceiling: the gains fitted on each column's own candidates (not a forecast):")
    v8.header(say, columns, width=34)
    for label, keys in forms.items():
        terms = [paths[k] for k in keys]
        own = lambda s, o, t=terms: fit(v8.candidates(cases, s, o), t)  # noqa: E731
        v8.row(say, f"{label}, own column: Spearman", scored(cases, terms, own)["Spearman"], width=34)
    say()
    say("3. Single terms against the measured total (Spearman), for reference:")
    v8.header(say, columns, width=34)
    for key in ("T", "D", "N"):
        chosen = [v8.candidates(cases, s, o) for s, o in columns]
        v8.row(say, key, [spearman([paths[key](c) for c in cs], [c["total"] for c in cs]) for cs in chosen], width=34)
    say()
    after_looking(say, cases, paths)
    say.write(OUT)
    return 0


def probe_fit(rows: list[dict], terms: list) -> tuple[float, float, list[float]]:
    """RMS log error of the fit on ROWS, the same with each row left out of its own fit, and the gains."""
    from vocabrisk.risk.calibration import FLOOR

    def made(c: dict, g: list[float]) -> float:
        return max(c["head"] + float(np.dot(g, [t(c) for t in terms])) - c["adaptation"][-1], 1e-12)

    gains = fit(rows, terms)
    total = np.array([max(c["total"], FLOOR) for c in rows])
    inside = np.array([made(c, gains) for c in rows])
    outside = np.array([made(c, fit(rows[:i] + rows[i + 1 :], terms)) for i, c in enumerate(rows)])
    rms = lambda x: float(np.sqrt(np.mean(np.log(x / total) ** 2)))  # noqa: E731
    return rms(inside), rms(outside), gains


def after_looking(say, cases: list[dict], paths: dict) -> None:
    """Sections chosen after sections 1 to 3 were read (design, recorded so that they can be re-run)."""
    say("4. Chosen after reading 1 to 3: one pathway alone in v8's body's place, and how well each fits the probes")
    say("   it is calibrated on (RMS log error of the total, in-sample and with each probe left out of its own fit).")
    say("   Probe sets: the 5 shipped; the 5 with v3's 3 narrow candidates; v3's 41 plan-A candidates (real text).")
    v8.header(say, [(s, o) for o in v8.OLDS for s in POOLS], width=34)
    for tag in ("5", "5+3", "v3's 41"):
        for keys in (["T"], ["D"], ["N"]):
            terms = [paths[k] for k in keys]
            fits, gains = {}, {}
            for o in v8.OLDS:
                rows = (
                    [c for c in cases if (c["set"], c["old"], c["plan"], c["role"]) == ("v3", o, "A", "candidate")]
                    if tag == "v3's 41"
                    else probes(cases, o, tag == "5+3")
                )
                *fits[o], gains[o] = probe_fit(rows, terms)
            v8.row(say, f"{'+'.join(keys)} alone, {tag}: Spearman", scored(cases, terms, lambda s, o, g=gains: g[o])[
                "Spearman"], width=34)  # fmt: skip
            say("   probe fit (in, left out): " + "; ".join(
                f"{o} {fits[o][0]:.2f}, {fits[o][1]:.2f} (gain {gains[o][0]:.3g})" for o in v8.OLDS))  # fmt: skip
    say()
    say("5. The shipped english-prose probe's text (sample_corpora/english-prose): sentences and distinct sentences")
    import re

    sentences = [
        s
        for path in sorted((data.REPO / "sample_corpora" / "english-prose").iterdir())
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
        for s in re.split(r"(?<=[.!?]) ", line.strip())
        if re.search(r"[A-Za-z]", s)  # not the "* * *" between stories
    ]
    counts: dict[str, int] = {}
    for s in sentences:
        counts[s] = counts.get(s, 0) + 1
    top = max(counts.items(), key=lambda kv: kv[1])
    say(f"   {len(sentences)} sentences, {len(counts)} distinct; the most repeated ({top[1]}x): {top[0]!r}")
    say("   its measured totals beside real English prose at one pass (plan A, seed means, wiki / code):")
    for set_, name in (("v3", "probe:english-prose"), ("v3", "en-austen-pride:1ep"), ("E", "en-poetry-whitman:1ep"),
                       ("H", "en-jargon:1ep"), ("E", "en-devil-dictionary:1ep"), ("v3", "en-shakespeare:1ep"),
                       ("v3", "en-shakespeare:10ep")):  # fmt: skip
        totals = [c["total"] for o in v8.OLDS for c in cases if (c["set"], c["name"], c["plan"], c["old"]) == (
            set_, name, "A", o)]  # fmt: skip
        say(f"   {name:>28} ({set_:>2}): " + " / ".join(f"{t:+.3f}" for t in totals))


if __name__ == "__main__":
    if sys.argv[1:] == ["dump"]:
        print(v8.dump(sets=SETS, cache=CACHE))
    else:
        sys.exit(main())
