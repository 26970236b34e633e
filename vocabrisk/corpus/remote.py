"""Inputs named by fsspec URLs (s3://, gs://, hf://, https://, ...): find, list and open them.

Local paths never come through here: they keep plain `open`, `os` and memory maps, which are
faster and need no extra. fsspec and the backend of each protocol (s3fs, gcsfs, ...) are
imported only when a URL is met, with an install hint when one is missing. Credentials and
endpoints come from each backend's usual configuration (for S3: AWS_PROFILE,
AWS_ENDPOINT_URL_S3, ...), so nothing here handles secrets.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import BinaryIO

from vocabrisk.errors import InputError, require

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_LOCAL_SCHEME = "file://"
INSTALL_HINT = "pip install 'vocabrisk[remote]' (s3fs for s3://; gcsfs for gs://)"
_HIDDEN = re.compile(r"(^|/)\.")
_GLOB = re.compile(r"[*?\[]")
_WEB = ("http://", "https://")
_ACCESS_HINT = "check the URL, the network and the store's credentials (e.g. AWS_PROFILE, AWS_ENDPOINT_URL_S3)"


def is_url(path: str) -> bool:
    """Whether `path` names a remote object (file:// URLs are local paths in disguise)."""
    return bool(_URL.match(path)) and not path.startswith(_LOCAL_SCHEME)


def local_path(path: str) -> str:
    """A file:// URL as the plain path it names; anything else unchanged."""
    return path.removeprefix(_LOCAL_SCHEME)


@dataclass(frozen=True)
class RemoteFile:
    url: str
    size: int | None


@dataclass(frozen=True)
class Listing:
    """What a URL names: one file given by name, or the files of a folder or glob, sorted."""

    files: list[RemoteFile]
    named: bool  # the URL named this one file (an unknown type is then an error, not a skip)


def list_url(url: str) -> Listing:
    """The files `url` names: itself, the files under a prefix (a "folder"), or a glob's matches.

    Hidden files and folders (a name starting with ".") under a folder are left out, as
    locally. An http(s) URL always names one file: web servers cannot be listed. Raises
    InputError when nothing is there or the store cannot be reached.
    """
    fs, path = _filesystem(url)
    try:
        if url.startswith(_WEB):
            return Listing([RemoteFile(url, fs.info(path).get("size"))], named=True)
        if _GLOB.search(path):
            return Listing(_matches(fs, url, path), named=False)
        if fs.isdir(path):
            return Listing(_under(fs, path), named=False)
        if fs.isfile(path):
            return Listing([RemoteFile(url, fs.info(path).get("size"))], named=True)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot list {url}: {exc}", hint=_ACCESS_HINT) from exc
    raise InputError(f"input not found: {url}", hint="check the URL; a folder (prefix) must hold at least one object")


def _matches(fs, url: str, path: str) -> list[RemoteFile]:
    found = fs.glob(path, detail=True)
    if not found:
        raise InputError(
            f"no files match {url}",
            hint="check the pattern; '**' matches any depth of folders, as in 's3://bucket/data/**/*.jsonl'",
        )
    files: list[RemoteFile] = []
    for name, info in sorted(found.items()):
        files += _under(fs, name) if info.get("type") == "directory" else [_file(fs, name, info)]
    return files


def _under(fs, folder: str) -> list[RemoteFile]:
    found = fs.find(folder, detail=True)
    prefix = folder.rstrip("/") + "/"
    return [
        _file(fs, name, info)
        for name, info in sorted(found.items())
        if not _HIDDEN.search(name[len(prefix) :] if name.startswith(prefix) else name)
    ]


def _file(fs, name: str, info: dict) -> RemoteFile:
    return RemoteFile(fs.unstrip_protocol(name), info.get("size"))


READ_ATTEMPTS = 4  # a failed read of a remote object is tried again up to 3 times, from the byte it stopped at
RETRY_SECONDS = 0.25  # the first wait before trying again; each next one is 4 times longer
# A fault of the connection, worth trying again; a missing object or a refused permission is not.
_FINAL = (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)
# Bodies cut short, as the HTTP clients under fsspec report them: not OSErrors (a reset or a timeout is one,
# in botocore and aiohttp too). By name, so that neither client is imported to be caught.
_CUT_SHORT = {"ClientPayloadError", "IncompleteRead"}  # aiohttp (HTTP, GCS, Azure), http.client


def _transient(exc: Exception) -> bool:
    return (isinstance(exc, OSError) and not isinstance(exc, _FINAL)) or type(exc).__name__ in _CUT_SHORT


def open_url(url: str) -> BinaryIO:
    """A binary file object reading the object at `url`, that reads on where a connection failed (`Resuming`)."""
    fs, path = _filesystem(url)
    return io.BufferedReader(Resuming(url, fs, path), buffer_size=1 << 20)


class Resuming(io.RawIOBase):
    """An fsspec file that, when a read fails (a reset connection, a timeout, a store's 5xx), opens the
    object again at the byte it had reached and reads on (a stall is a failure once the store's client times
    out: s3fs's `read_timeout`, aiohttp's `timeout`), READ_ATTEMPTS times in all: the bytes read are
    those of one undisturbed read, so nothing is counted twice or left out. After the last attempt the
    OSError says how often and from where it failed; the scan then skips the rest of the file by name."""

    def __init__(self, url: str, fs, path: str):
        self.url, self._fs, self._path, self._at = url, fs, path, 0
        self._file = fs.open(path, "rb")  # a missing object fails here, as it did before

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._at

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self._at = self._opened().seek(offset, whence)
        return self._at

    def readinto(self, buffer) -> int:
        failure: Exception | None = None
        for attempt in range(READ_ATTEMPTS):
            try:
                data = self._opened().read(len(buffer))
                break
            except Exception as exc:
                if not _transient(exc):
                    raise
                failure = exc
                self._drop()  # opened again, at the byte reached, on the next attempt
                if attempt < READ_ATTEMPTS - 1:
                    time.sleep(RETRY_SECONDS * 4**attempt)
        else:
            raise OSError(
                getattr(failure, "errno", None),
                f"reading failed {READ_ATTEMPTS} times from byte {self._at:,} ({failure})",
            ) from failure
        buffer[: len(data)] = data
        self._at += len(data)
        return len(data)

    def _opened(self):
        if self._file is None:
            self._file = self._fs.open(self._path, "rb")
            if self._at:
                self._file.seek(self._at)
        return self._file

    def _drop(self) -> None:
        if self._file is not None:
            with suppress(OSError):
                self._file.close()
            self._file = None

    def close(self) -> None:
        self._drop()
        super().close()


@contextmanager
def random_access(path: str) -> Iterator:
    """A pyarrow random-access file for Arrow IPC and Parquet readers: a memory map for a
    local path, an fsspec file wrapped for pyarrow for a URL."""
    import pyarrow as pa

    if not is_url(path):
        with pa.memory_map(path) as file:
            yield file
        return
    with open_url(path) as raw, pa.PythonFile(raw, mode="r") as file:
        yield file


def _filesystem(url: str):
    """(filesystem, path within it) for a URL, with an install hint when its backend is missing."""
    fsspec = require("fsspec.core", "remote", f"reading {url}")
    try:
        return fsspec.url_to_fs(url)
    except ImportError as exc:
        raise InputError(f"reading {url} needs a package that is not installed: {exc}", hint=INSTALL_HINT) from exc
    except ValueError as exc:
        raise InputError(f"cannot read {url}: {exc}", hint="use a protocol fsspec knows, such as s3://") from exc
