"""Turn command-line inputs (files, folders, globs, URLs, dataset streams, "-") into sources to read."""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Sequence

from vocabrisk.corpus.compression import COMPRESSION_BY_EXTENSION, split_compression
from vocabrisk.corpus.datatypes import FORCEABLE_FORMATS, ReadOptions, Skipped, Source
from vocabrisk.corpus.hf_dataset import dataset_files, split_folders, total_size
from vocabrisk.corpus.hf_stream import is_stream, stream_sources
from vocabrisk.corpus.remote import is_url, list_url, local_path
from vocabrisk.errors import InputError

FORMAT_BY_EXTENSION = {
    ".txt": "text",
    ".md": "text",
    ".rst": "text",
    ".text": "text",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
    ".csv": "csv",
    ".tsv": "tsv",
    ".arrow": "arrow",
    ".feather": "arrow",
}
_SUPPORTED = f"supported: {' '.join(FORMAT_BY_EXTENSION)}, optionally compressed {' '.join(COMPRESSION_BY_EXTENSION)}"
_FORMAT_HINT = f"name the format with --input-format ({', '.join(FORCEABLE_FORMATS)})"
DEFAULT_OPTIONS = ReadOptions()
# Formats pyarrow must seek in, so they cannot come through a pipe.
_SEEKING_FORMATS = ("parquet", "arrow")
# Files next to the .arrow files of a saved dataset: metadata, not text. Met in a remote
# folder, where the dataset is read as its .arrow files, they are passed over.
_DATASET_METADATA = ("state.json", "dataset_info.json", "dataset_dict.json")


def discover(inputs: Sequence[str], options: ReadOptions = DEFAULT_OPTIONS) -> tuple[list[Source], list[Skipped]]:
    """Sources for `inputs`, in order and without duplicates, plus the files passed over.

    Folders are walked recursively in sorted order, skipping hidden entries; a folder
    saved by `datasets.save_to_disk` is one "hf_dataset" source (one per split of a
    dataset dict). Globs are expanded with `**` matching subfolders. fsspec URLs
    (s3://bucket/prefix/, gs://..., https://...) are listed and globbed the same way
    through fsspec; `hf-dataset:NAME?split=SPLIT` is a streamed Hugging Face dataset, one
    source per data file. Raises InputError for a missing path, a glob matching nothing,
    an explicitly named file of unknown type, or when nothing readable is found at all.
    """
    found = _Found()
    for given in inputs:
        _add_input(given, options, found)
    if not found.sources:
        raise InputError(
            f"no readable files in {', '.join(inputs) or 'the inputs given'}",
            hint=_nothing_found_hint(found.skipped),
        )
    return found.sources, found.skipped


class _Found:
    """Sources and skips collected so far, each kept once whatever path reached it."""

    def __init__(self) -> None:
        self.sources: list[Source] = []
        self.skipped: list[Skipped] = []
        self.walked: dict[str, int] = {}  # readable files under each real folder path
        self._seen: set[tuple[str, str]] = set()

    def add_source(self, source: Source) -> None:
        if self._first_time(source.path, ""):
            self.sources.append(source)

    def skip(self, skipped: Skipped) -> None:
        if self._first_time(skipped.source, skipped.locator):
            self.skipped.append(skipped)

    def _first_time(self, path: str, locator: str) -> bool:
        local = path != "-" and not is_url(path) and not is_stream(path)
        key = (os.path.realpath(path) if local else path, locator)
        if key in self._seen:
            return False
        self._seen.add(key)
        return True


def _add_input(given: str, options: ReadOptions, found: _Found) -> None:
    given = local_path(given)
    if is_stream(given):
        for source in stream_sources(given):
            found.add_source(source)
    elif is_url(given):
        _add_url(given, options, found)
    elif given == "-":
        found.add_source(_stdin_source(options))
    elif os.path.isdir(given):
        _walk(given, options, found)
    elif os.path.exists(given):
        found.add_source(_named_file(given, options, _size(given)))
    elif os.path.islink(given):  # a link that leads nowhere, or to itself: named as inside a folder
        try:
            os.stat(given)
        except OSError as exc:
            raise InputError(f"{given}: {_unreachable(given, exc)}") from None
        raise InputError(f"{given}: symbolic link that cannot be read; fix or remove the link")
    elif glob.has_magic(given):
        _add_glob(given, options, found)
    else:
        raise InputError(
            f"input not found: {given}", hint=_missing_hint(given, "check the path; use '-' to read standard input")
        )


def _add_url(url: str, options: ReadOptions, found: _Found) -> None:
    listing = list_url(url)
    if listing.named:
        found.add_source(_named_file(listing.files[0].url, options, listing.files[0].size))
        return
    readable = 0
    for file in listing.files:
        if file.url.rsplit("/", 1)[-1] not in _DATASET_METADATA:  # not text: the .arrow files beside it are read
            readable += _folder_file(file.url, options, found, file.size)
    if not readable:
        found.skip(Skipped(url, "folder", f"no readable files under this URL ({_SUPPORTED})"))


def _stdin_source(options: ReadOptions) -> Source:
    fmt = options.input_format or "text"
    if fmt in _SEEKING_FORMATS:
        raise InputError(
            f"{fmt} cannot be read from standard input",
            hint="save it to a file and pass the file's path",
        )
    return Source("-", fmt, None, None)


def _add_glob(pattern: str, options: ReadOptions, found: _Found) -> None:
    matches = sorted(glob.glob(pattern, recursive=True))
    if not matches:
        hint = "check the pattern; '**' matches any depth of folders, as in 'data/**/*.jsonl'"
        raise InputError(f"no files match {pattern}", hint=_missing_hint(pattern, hint))
    for match in matches:
        _add_entry(match, None, options, found)


def _walk(folder: str, options: ReadOptions, found: _Found, root: str | None = None) -> int:
    """Add the readable files under `folder` (once per real folder); returns their number.

    The walk stays inside `root`, the real path of the folder given (`folder` itself when None).
    """
    real = os.path.realpath(folder)
    if real not in found.walked:
        found.walked[real] = 0  # already there should a symlink lead back while walking
        found.walked[real] = _walk_new(folder, root or real, options, found)
    return found.walked[real]


def _walk_new(folder: str, root: str, options: ReadOptions, found: _Found) -> int:
    datasets = _add_dataset(folder, found)
    if datasets is not None:
        return datasets
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError as exc:
        reason = f"cannot list the folder: {exc.strerror}; check its permissions"
        found.skip(Skipped(folder, "folder", reason))
        return 0
    readable = sum(_add_entry(entry.path, root, options, found) for entry in entries if not entry.name.startswith("."))
    if not readable:
        found.skip(Skipped(folder, "folder", f"no readable files in this folder ({_SUPPORTED})"))
    return readable


def _add_entry(path: str, root: str | None, options: ReadOptions, found: _Found) -> int:
    """Add a folder's entry, or a glob's match (`root` None); returns the readable files it adds.

    What is not a readable file or folder is skipped with the reason: a dangling symlink, one
    that leads outside `root` or back into a folder that holds it, a FIFO, socket or device
    (reading one could block or never end), an entry that cannot be looked at.
    """
    try:
        status = os.stat(path)
    except OSError as exc:
        found.skip(Skipped(path, "file", _unreachable(path, exc)))
        return 0
    if stat.S_ISDIR(status.st_mode):
        reason = _link_problem(path, root) if os.path.islink(path) else None
        if reason:
            found.skip(Skipped(path, "folder", reason))
            return 0
        return _walk(path, options, found, root)
    if not stat.S_ISREG(status.st_mode):
        reason = f"not a regular file but {_kind(status.st_mode)}, which a folder's walk does not read"
        found.skip(Skipped(path, "file", f"{reason}; name it as an input of its own to read it"))
        return 0
    reason = _link_problem(path, root) if os.path.islink(path) else None
    if reason:
        found.skip(Skipped(path, "file", reason, status.st_size))
        return 0
    return _folder_file(path, options, found, status.st_size)


def _link_problem(link: str, root: str | None) -> str | None:
    """Why the walk does not follow a symlink met inside `root`: it leads outside it, or back into
    a folder that holds the link (a loop); None when it may be followed."""
    if root is None:
        return None
    target = os.path.realpath(link)
    if not _inside(target, root):
        return (
            f"symbolic link to {target}, outside the folder given ({root}), so not followed;"
            " name the target as an input of its own to read it"
        )
    if os.path.isdir(target) and _inside(os.path.realpath(os.path.dirname(link)), target):
        return f"symbolic link back to {target}, a folder that holds it (a loop), so not followed; it is read once"
    return None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _unreachable(path: str, exc: OSError) -> str:
    """Why an entry that `stat` fails on cannot be read."""
    if os.path.islink(path):
        target = os.readlink(path)
        if isinstance(exc, FileNotFoundError):
            return f"symbolic link to {target}, which does not exist; fix or remove the link"
        return f"symbolic link to {target} that cannot be followed: {exc.strerror}; fix or remove the link"
    if isinstance(exc, PermissionError):
        return "cannot look at it: permission denied; make its folder readable or leave it out"
    return f"cannot look at it: {exc.strerror or exc}; check the file"


_KINDS = {stat.S_ISFIFO: "a FIFO (named pipe)", stat.S_ISSOCK: "a socket", stat.S_ISCHR: "a character device",
          stat.S_ISBLK: "a block device"}  # fmt: skip


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS.items() if test(mode)), "a special file")


def _add_dataset(folder: str, found: _Found) -> int | None:
    """Add the folder as saved dataset source(s) if it is one and return how many;
    None if it is not one."""
    if dataset_files(folder) is not None:
        found.add_source(_dataset_source(folder))
        return 1
    splits = split_folders(folder)
    if splits is None:
        return None
    readable = [split for split in splits if dataset_files(split) is not None]
    for split in splits:
        if split in readable:
            found.add_source(_dataset_source(split))
        else:
            reason = (
                "a split named in dataset_dict.json holds no saved dataset (state.json"
                " listing .arrow files); save the dataset again"
            )
            found.skip(Skipped(split, "folder", reason))
    return len(readable)


def _dataset_source(folder: str) -> Source:
    size = total_size(dataset_files(folder) or [])
    return Source(folder, "hf_dataset", None, size)


def _folder_file(path: str, options: ReadOptions, found: _Found, size: int | None) -> bool:
    """Add a file met in a folder or glob; one of unknown type is skipped, not fatal.

    Returns whether the file is readable."""
    fmt, compression, extension = _guess(path)
    fmt = options.input_format or fmt
    if fmt is None:
        reason = f"unsupported file type {extension}; {_SUPPORTED}; use --input-format to read it anyway"
        found.skip(Skipped(path, "file", reason, size))
        return False
    found.add_source(Source(path, fmt, compression, size))
    return True


def _named_file(path: str, options: ReadOptions, size: int | None) -> Source:
    fmt, compression, extension = _guess(path)
    fmt = options.input_format or fmt
    if fmt is None:
        raise InputError(
            f"cannot tell the format of {path} from its extension {extension}",
            hint=_FORMAT_HINT,
        )
    return Source(path, fmt, compression, size)


def _guess(path: str) -> tuple[str | None, str | None, str]:
    """(format, compression, extension as shown to the user) from the file name."""
    stem, compression = split_compression(os.path.basename(path))
    extension = os.path.splitext(stem)[1].lower()
    shown = os.path.basename(path)[len(stem) - len(extension) :]
    return FORMAT_BY_EXTENSION.get(extension), compression, f"'{shown}'" if shown else "(none)"


def _size(path: str) -> int | None:
    """Bytes on disk of a regular file; None for pipes and devices, such as /dev/stdin."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) else None


def _missing_hint(given: str, hint: str) -> str:
    """HINT, plus how texts go in, for an input that looks like text (spaces, or longer than a file name)."""
    if not any(c.isspace() for c in given) and len(given) <= 255:
        return hint
    return (
        f"{hint}; if it is text rather than a path: in Python, texts in memory go in as one input,"
        " vocabrisk.scan([texts]) (a list of strings is a list of paths)"
    )


def _nothing_found_hint(skipped: list[Skipped]) -> str:
    files = [item for item in skipped if item.locator == "file"]
    if not files:
        return f"the folders hold no files ({_SUPPORTED}; hidden files are ignored)"
    return f"{len(files)} file(s) passed over, e.g. {files[0].source}: {files[0].reason}"
