"""The fresh held-out sets: the sources of pools F, G and H (`pools.py`), none of which design had read.

    python benchmarks/validity/pools.py F                      # the corpora, from their packages
    python benchmarks/validity/suite_v4_pools.py F             # -> benchmarks/.cache/forecast/v4-pool-f/
    python benchmarks/validity/suite_v4_pools.py F --supplement   # -> .../v4-pool-f-more/ (its amendment 1)
    python benchmarks/validity/suite_v4_pools.py G             # -> .../v4-pool-g/
    python benchmarks/validity/suite_v4_pools.py H             # -> .../v4-pool-h/ (v5's test)
    python benchmarks/validity/suite_v4_pools.py I             # -> .../v4-pool-i/ (v6's test)
    python benchmarks/validity/suite_v4_pools.py J             # -> .../v4-pool-j/ (v7's test)
    python benchmarks/validity/suite_v4_pools.py K             # -> .../v4-pool-k/ (v8's test)
    python benchmarks/validity/suite_v4_pools.py L             # -> .../v4-pool-l/ (v9's test)
    python benchmarks/validity/suite_v4_pools.py M             # -> .../v4-pool-m/ (v10's test)
    python benchmarks/validity/suite_v4_pools.py N             # -> .../v4-pool-n/ (v11's test)
    python benchmarks/validity/suite_v4_pools.py probes        # -> .../v4-probes-real/ (v11's candidate probes)

The protocols are docs/validity/v4/PROTOCOL-pool-f.md, PROTOCOL-pool-g.md and PROTOCOL-pool-h.md, each
committed before its suite was built. The recipe is v4's (`suite_v4.build`: the same old texts, plan A with its curve
checkpoints, the same cut of each source); only the sources are new. Every source at one epoch, and
two of them at ten (the repetition the forecast under-forecast on v4's whitman), in an order that
keeps the kinds mixed, so that a sweep cut short still holds every kind. Pool F's supplement holds
the same recipes, so the same tokens, and six replay mixes; its jobs are second seeds, replay,
learning rates and regime B. Pool G's one suite holds its replay mixes too; its jobs are the
first seeds, then second seeds, then replay; pool H's one suite, its jobs in PROTOCOL-pool-h.md's order
(first seeds, second seeds, replay, learning rates, regime B), tests v5 beside v4. Pool I's
(PROTOCOL-pool-i.md, the same order) tests v6 beside v5, and cuts four sources at a fifth of an epoch too:
a source too small for that cut (five times the plan's tokens) runs at one epoch only, and the build says so.
Pools J to N (PROTOCOL-pool-j.md to PROTOCOL-pool-n.md) follow pool I's recipe and order. `probes` is not a
pool: the candidate probe set of real text for `calibrate` (docs/validity/v11/probe-set-proposal.md), each at one
epoch and two at ten, as v3's probes were run, seed 0 only: design data, not held out.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pools
import suite_v2 as v2
import suite_v3 as v3
import suite_v4 as v4


@dataclass(frozen=True)
class Pool:
    order: tuple[str, ...]  # every source at one epoch, in this order
    repeated: tuple[str, ...]  # at ten epochs too
    replayed: tuple[str, ...]  # at 5% and 25% replay
    learning_rates: tuple[str, ...] = ()
    regime_b: tuple[str, ...] = ()
    fifth: tuple[str, ...] = ()  # at 0.2 epochs too (a corpus five times the plan's tokens)

    @property
    def recipes(self) -> dict:
        return {
            **{f"{source}:1ep": ("slice", (source,), 1.0) for source in self.order},
            **{f"{source}:10ep": ("slice", (source,), 10.0) for source in self.repeated},
            **{f"{source}:0.2ep": ("slice", (source,), 0.2) for source in self.fifth},
        }

    @property
    def replay(self) -> dict:
        """Scored against the what-if on the 1ep run of the same source (its 0% point)."""
        return {
            f"{source}:1ep+replay{share}%": (f"replay{share}", (source,), 1.0)
            for source in self.replayed
            for share in (5, 25)
        }

    def first_jobs(self) -> list[dict]:
        return [{"run": name, "regime": "A", "seed": 0} for name in self.recipes]

    def more_jobs(self) -> list[dict]:
        """Second seeds (of the 1- and 0.2-epoch runs), replay, learning rates, regime B, in that order."""
        out = [{"run": f"{s}:1ep", "regime": "A", "seed": 1} for s in self.order]
        out += [{"run": f"{s}:0.2ep", "regime": "A", "seed": 1} for s in self.fifth]
        out += [{"run": name, "regime": "A", "seed": 0} for name in self.replay]
        rates = ("A-lr1e-3", "A-lr1e-4")
        out += [{"run": f"{s}:1ep", "regime": r, "seed": 0} for r in rates for s in self.learning_rates]
        return out + [{"run": f"{s}:1ep", "regime": "B", "seed": 0} for s in self.regime_b]


POOLS = {
    "F": Pool(
        order=(
            "ko-kobill-law",
            "code-go-net-http",
            "en-debian-docs",
            "ru-fortunes",
            "code-rust-regex",
            "th-words",
            "es-fortunes",
            "elisp-markdown-mode",
            "zh-fortunes-poetry",
            "code-perl-modules",
            "json-iso-3166-2",
        ),
        repeated=("en-debian-docs", "code-go-net-http"),
        replayed=("en-debian-docs", "ru-fortunes", "code-go-net-http"),
        learning_rates=("en-debian-docs", "ko-kobill-law", "code-rust-regex", "th-words"),
        regime_b=(
            "es-fortunes",
            "zh-fortunes-poetry",
            "code-perl-modules",
            "elisp-markdown-mode",
            "json-iso-3166-2",
            "ru-fortunes",
        ),
    ),
    "G": Pool(
        order=(
            "de-fortunes",
            "code-js-lodash",
            "ar-words",
            "en-fortunes",
            "code-cpp-eigen",
            "zh-manpages",
            "csv-unicode-data",
            "code-python-requests",
            "pl-fortunes",
            "en-words",
            "code-tcl-tcllib",
            "code-bash-completion",
        ),
        repeated=("en-fortunes", "code-cpp-eigen"),
        replayed=("en-fortunes", "zh-manpages", "code-js-lodash"),
    ),
    "H": Pool(  # PROTOCOL-pool-h.md: v5's held-out test (v4 scored beside it)
        order=(
            "cs-fortunes",
            "code-php-phpseclib",
            "en-jargon",
            "ru-words",
            "code-scheme-guile",
            "tsv-pci-ids",
            "en-gcide",
            "code-ocaml-stdlib",
            "de-words",
            "txt-ieee-oui",
            "code-python-sympy",
        ),
        repeated=("en-jargon", "code-scheme-guile"),
        replayed=("en-gcide", "ru-words", "code-php-phpseclib"),
        learning_rates=("en-gcide", "de-words", "cs-fortunes", "code-ocaml-stdlib"),
        regime_b=("en-jargon", "ru-words", "tsv-pci-ids", "txt-ieee-oui", "code-php-phpseclib", "code-python-sympy"),
    ),
    "I": Pool(  # PROTOCOL-pool-i.md: v6's held-out test (v5 scored beside it)
        order=(
            "eo-fortunes",
            "code-erlang-otp",
            "en-debian-policy",
            "ko-words",
            "code-prolog-swi",
            "tsv-usb-ids",
            "en-vim-help",
            "code-lisp-sbcl",
            "fr-words",
            "txt-public-suffix",
            "code-python-networkx",
        ),
        repeated=("fr-words", "code-prolog-swi"),
        fifth=("en-debian-policy", "code-erlang-otp", "ko-words", "tsv-usb-ids"),
        replayed=("ko-words", "en-vim-help", "code-python-networkx"),
        learning_rates=("fr-words", "tsv-usb-ids", "code-erlang-otp", "eo-fortunes"),
        regime_b=(
            "en-debian-policy",
            "ko-words",
            "txt-public-suffix",
            "tsv-usb-ids",
            "code-lisp-sbcl",
            "code-python-networkx",
        ),
    ),
    "J": Pool(  # PROTOCOL-pool-j.md: v7's held-out test (v6 scored beside it); sources interleaved by kind
        order=(
            "en-gnu-standards",
            "code-haskell-hugs",
            "nl-words",
            "code-ada-gnatcoll",
            "en-exim-spec",
            "txt-gnu-units",
            "code-pascal-fpc",
            "hy-words",
            "code-octave-m",
            "en-docutils-rst",
            "csv-airports",
            "code-python-boltons",
        ),
        repeated=("nl-words", "code-haskell-hugs"),
        fifth=("en-exim-spec", "code-pascal-fpc", "hy-words", "csv-airports"),
        replayed=("hy-words", "en-docutils-rst", "code-python-boltons"),
        learning_rates=("nl-words", "txt-gnu-units", "code-ada-gnatcoll", "en-gnu-standards"),
        regime_b=(
            "en-exim-spec",
            "hy-words",
            "csv-airports",
            "code-octave-m",
            "code-pascal-fpc",
            "code-python-boltons",
        ),
    ),
    "K": Pool(  # PROTOCOL-pool-k.md: v8's held-out test (v7 as landed scored beside it); kinds interleaved
        order=(
            "en-r-manuals",
            "code-nim-stdlib",
            "da-words",
            "code-forth-gforth",
            "en-git-docs",
            "txt-cmudict",
            "code-d-phobos",
            "ml-words",
            "code-haxe-std",
            "en-sphinx-rst",
            "xml-broadband",
            "code-python-pyparsing",
        ),
        repeated=("da-words", "code-nim-stdlib"),
        fifth=("en-git-docs", "code-d-phobos", "ml-words", "xml-broadband"),
        replayed=("ml-words", "en-sphinx-rst", "code-python-pyparsing"),
        learning_rates=("da-words", "txt-cmudict", "code-forth-gforth", "en-r-manuals"),
        regime_b=(
            "en-git-docs",
            "ml-words",
            "xml-broadband",
            "code-haxe-std",
            "code-d-phobos",
            "code-python-pyparsing",
        ),
    ),
    "L": Pool(  # PROTOCOL-pool-l.md: v9's held-out test (v8 as landed scored beside it); K's kinds, one for one
        order=(
            "en-gnuplot-doc",
            "code-gap",
            "eu-words",
            "code-fish",
            "en-hg-help",
            "txt-wordnet",
            "code-vala-vapi",
            "fa-words",
            "en-node-api",
            "txt-miscfiles",
            "code-python-hypothesis",
        ),
        repeated=("eu-words", "code-gap"),
        fifth=("en-hg-help", "code-fish", "fa-words", "txt-wordnet"),
        replayed=("fa-words", "en-node-api", "code-python-hypothesis"),
        learning_rates=("eu-words", "txt-miscfiles", "code-vala-vapi", "en-gnuplot-doc"),
        regime_b=("en-hg-help", "fa-words", "txt-wordnet", "code-fish", "code-python-hypothesis"),
    ),
    "M": Pool(  # PROTOCOL-pool-m.md: v10's held-out test (v9 as landed scored beside it); L's kinds, one for one
        order=(
            "en-autoconf-doc",
            "code-maxima",
            "hu-words",
            "code-icon",
            "en-pyvmomi-rst",
            "txt-nmap",
            "code-postscript",
            "he-words",
            "en-docker-md",
            "txt-gromacs-top",
            "code-agda",
            "code-python-paramiko",
        ),
        repeated=("hu-words", "code-maxima"),
        fifth=("en-pyvmomi-rst", "code-icon", "he-words", "txt-gromacs-top"),
        replayed=("he-words", "en-docker-md", "code-python-paramiko"),
        learning_rates=("hu-words", "txt-nmap", "code-postscript", "en-autoconf-doc"),
        regime_b=("en-pyvmomi-rst", "he-words", "txt-gromacs-top", "code-agda", "code-icon", "code-python-paramiko"),
    ),
    "N": Pool(  # PROTOCOL-pool-n.md: v11's held-out test (v10 on v3's probes scored beside it); M's kinds, one for one
        order=(
            "en-lilypond-doc",
            "code-spad",
            "lv-words",
            "code-povray",
            "en-gnucash-docbook",
            "txt-xfonts-encodings",
            "code-inform6",
            "uk-words",
            "en-fweb-texi",
            "txt-nwchem-basis",
            "code-objc-gnustep",
            "code-python-dnspython",
        ),
        repeated=("lv-words", "code-spad"),
        fifth=("en-gnucash-docbook", "code-povray", "uk-words", "txt-nwchem-basis"),
        replayed=("uk-words", "en-fweb-texi", "code-python-dnspython"),
        learning_rates=("lv-words", "txt-xfonts-encodings", "code-inform6", "en-lilypond-doc"),
        regime_b=(
            "en-gnucash-docbook",
            "uk-words",
            "txt-nwchem-basis",
            "code-objc-gnustep",
            "code-povray",
            "code-python-dnspython",
        ),
    ),
    "probes": Pool(  # not a pool: v11's candidate probes (calibration data), first seeds only
        order=(
            "en-docs-python-markdown",
            "code-python-stdlib",
            "words-snowball-en",
            "table-mime-types",
            "de-apache-manual",
            "ja-apache-manual",
            "ru-docs-pymorphy3",
            "code-js-commander",
        ),
        repeated=("en-docs-python-markdown", "code-python-stdlib"),
        replayed=(),
    ),
}
OUT = {pool: v2.CACHE / f"v4-pool-{pool.lower()}" for pool in POOLS} | {"probes": v2.CACHE / "v4-probes-real"}
MORE = {"F": v2.CACHE / "v4-pool-f-more"}  # pool F's supplement (PROTOCOL-pool-f.md, amendment 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pool", choices=sorted(POOLS))
    parser.add_argument("--supplement", action="store_true", help="pool F's amendment-1 suite (v4-pool-f-more)")
    args = parser.parse_args()
    pool, (texts, _) = POOLS[args.pool], pools.POOLS[args.pool]
    if args.supplement and args.pool not in MORE:
        parser.error(f"pool {args.pool} has no supplement")
    missing = [name for name in pool.order if not (texts / name / f"{name}.txt").is_file()]
    if missing or not v3.CORPORA.is_dir():
        print(f"pool {args.pool} suite: needs {v3.CORPORA} and pool {args.pool} ({', '.join(missing)} missing: "
              f"run pools.py {args.pool} first)")  # fmt: skip
        return 2
    v3.FOLDERS.update({name: texts / name for name in pool.order})
    if args.pool == "F":  # F's first suite has no replay mixes; its supplement holds them
        recipes, replays = (pool.recipes | pool.replay, pool.replay) if args.supplement else (pool.recipes, {})
        out, job_list = (MORE["F"], pool.more_jobs()) if args.supplement else (OUT["F"], pool.first_jobs())
    elif args.pool == "probes":  # design data: one seed
        recipes, replays, out, job_list = pool.recipes, {}, OUT["probes"], pool.first_jobs()
    else:  # one suite: first seeds, then the rest
        recipes, replays, out = pool.recipes | pool.replay, pool.replay, OUT[args.pool]
        job_list = pool.first_jobs() + pool.more_jobs()
    v4.build(lambda message: print(message, flush=True), recipes=recipes, replays=replays, out=out,
             job_list=job_list, heldout=pool.order)  # fmt: skip
    runs = {run["name"]: run for run in json.loads((out / "suite.json").read_text())["runs"]}
    small = [name for name in recipes if name.endswith(":0.2ep") and runs[name]["epochs"] > 0.25]
    if small:  # the source holds less than five plans of tokens: the cut is not a fifth of an epoch
        print(f"pool {args.pool}: {', '.join(small)} left out: the source is too small for a fifth of an epoch")
        recipes = {name: recipe for name, recipe in recipes.items() if name not in small}
        job_list = [job for job in job_list if job["run"] not in small]
        v4.build(lambda message: print(message, flush=True), recipes=recipes, replays=replays, out=out,
                 job_list=job_list, heldout=pool.order)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
