"""Read shards in a background thread, in batches sized for the tokenizer.

Reading (file I/O, decompression, parsing) runs in a reader thread while the tokenizer
encodes in the caller's thread (`encode_batch` releases the GIL and spreads a batch over its
threads), so the two overlap, also across the end of one shard and the start of the next.
Memory is bounded by the queue of batches, not by the corpus.

`pooled_batches` gathers whole documents across shard boundaries, so that a folder of small files
is encoded in as few calls, each spread over every core, as one large file; `document_batches` batches
one source's.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from vocabrisk.corpus import Document, ReadOptions, Skipped, read_source
from vocabrisk.counting.executors.shards import Shard

BATCH_BYTES = 1 << 20  # encode about 1 MiB of text per call: large enough to use every core
BATCH_DOCUMENTS = 4096
# Pieces of one long document encoded per call, in parallel: the tokenizer holds ~200 bytes per
# token while it encodes, and text without spaces (base64) has nearly a token per character.
PIECE_BATCH_BYTES = 1 << 20
QUEUE_BATCHES = 4


@dataclass(frozen=True)
class Pieces:
    """Consecutive pieces of one long document, numbered from `first_part`; `last` when they end it;
    `cuts` the kind of cut before each (`vocabrisk.corpus.pieces`)."""

    texts: list[str]
    first_part: int
    last: bool
    source: str
    locator: str
    cuts: list[str]


@dataclass(frozen=True)
class Gathered:
    """Whole documents of one or more consecutive shards: `shards[i]` is the index of the shard `documents[i]`
    is from (ascending)."""

    documents: list[Document]
    shards: list[int]


# What `pooled_batches` hands over: documents of any shards, pieces or a skip of one (by its index), or a
# Shard once its documents have all been handed over.
PooledItem = Gathered | tuple[int, Pieces | Skipped] | Shard


def pooled_batches(
    shards: Sequence[Shard], options: ReadOptions, on_bytes: Callable[[int], None] | None
) -> Iterator[PooledItem]:
    """The shards' whole documents gathered into batches of about BATCH_BYTES whatever their shard, each
    Shard after the batch holding its last document; pieces and skips of a shard, tagged with its index,
    after every document read before them (so each shard's items keep their order)."""
    documents: list[Document] = []
    owners: list[int] = []
    ended: list[Shard] = []
    size = 0

    def flush() -> Iterator[PooledItem]:
        nonlocal documents, owners, ended, size
        if documents:
            yield Gathered(documents, owners)
        yield from ended
        documents, owners, ended, size = [], [], [], 0

    for shard in shards:
        for item in document_batches(read_source(shard.source, options, on_bytes)):
            if not isinstance(item, list):
                yield from flush()
                yield shard.index, item
                continue
            for document in item:
                documents.append(document)
                owners.append(shard.index)
                size += len(document.text)
                if size >= BATCH_BYTES or len(documents) >= BATCH_DOCUMENTS:
                    yield from flush()
        if documents:
            ended.append(shard)
        else:
            yield shard
    yield from flush()


def document_batches(items: Iterable[Document | Skipped]) -> Iterator[list[Document] | Pieces | Skipped]:
    """The documents of one source in batches, its Skipped records in place.

    The pieces of a long document come in order, in batches of their own, so that a piece
    batch never holds more than one document and memory stays about BATCH_BYTES per batch.
    """
    texts: list[Document] = []
    pieces: list[Document] = []
    size = 0
    for item in items:
        if isinstance(item, Document) and item.part is not None:
            if texts:
                yield texts
                texts, size = [], 0
            pieces.append(item)
            size += len(item.text)
            if item.last or size >= PIECE_BATCH_BYTES:
                yield _pieces(pieces)
                pieces, size = [], 0
        elif isinstance(item, Document):
            texts.append(item)
            size += len(item.text)
            if size >= BATCH_BYTES or len(texts) >= BATCH_DOCUMENTS:
                yield texts
                texts, size = [], 0
        else:
            if pieces:  # a document cut short: its pieces go first, the skip then discards them
                yield _pieces(pieces)
                pieces, size = [], 0
            yield item
    if texts:
        yield texts


def _pieces(documents: list[Document]) -> Pieces:
    first, last = documents[0], documents[-1]
    texts, cuts = [d.text for d in documents], [d.cut for d in documents]
    return Pieces(texts, first.part, last.last, first.source, first.locator, cuts)


_DONE = object()


def in_background(items: Iterator) -> Iterator:
    """`items`, produced by a reader thread; its exceptions surface in the caller.

    Closing the returned generator (or an exception in the consumer) stops the reader.
    """
    channel: queue.Queue = queue.Queue(maxsize=QUEUE_BATCHES)
    stop = threading.Event()

    def offer(item: object) -> bool:
        """Put an item unless the consumer has gone away; False once it has."""
        while not stop.is_set():
            try:
                channel.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not offer(item):
                    return
            offer(_DONE)
        except BaseException as exc:  # re-raised in the consuming thread
            offer(exc)

    reader = threading.Thread(target=produce, name="vocabrisk-reader", daemon=True)
    reader.start()
    try:
        while True:
            item = channel.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        reader.join(timeout=5)
