"""Find corpus inputs and stream documents out of them.

`discover` turns command-line inputs (files, folders, globs, "-", fsspec URLs, streamed
Hugging Face datasets) into `Source`s;
`read_source` streams `Document`s out of one source, with a `Skipped` for every part
that could not be read, so that bad data is reported rather than raised.
"""

from vocabrisk.corpus.datatypes import Document, ReadOptions, Skipped, Source
from vocabrisk.corpus.discover import discover
from vocabrisk.corpus.read import read_source

__all__ = ["Document", "ReadOptions", "Skipped", "Source", "discover", "read_source"]
