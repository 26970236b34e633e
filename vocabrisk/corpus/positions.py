"""Where a reader is in its source: for error locators and for byte progress."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Position:
    """How many lines or rows of a source have been handed out so far.

    Readers advance it; when reading fails part-way, it says what was already counted.
    """

    unit: str = "line"
    done: int = 0

    def locator(self) -> str:
        return f"after {self.unit} {self.done}" if self.done else "file"

    def counted(self) -> str:
        if not self.done:
            return "nothing from this file was counted"
        if self.done == 1:
            return f"the 1 {self.unit} before was counted"
        return f"the {self.done} {self.unit}s before were counted"


class ByteTally:
    """Passes byte counts on to `on_bytes`, keeping their total.

    Call it with bytes just consumed, or `reach` an absolute position: columnar readers
    let pyarrow do the I/O, so they know how far into the file they are, not how many
    bytes were read.
    """

    def __init__(self, on_bytes: Callable[[int], None] | None):
        self._on_bytes = on_bytes
        self.total = 0

    def __call__(self, count: int) -> None:
        self.total += count
        if self._on_bytes:
            self._on_bytes(count)

    def reach(self, position: int) -> None:
        if position > self.total:
            self(position - self.total)
