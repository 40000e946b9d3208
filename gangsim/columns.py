"""Columns without a Python object per row: the event log's storage (issue 16 item 4).

A replay appends millions of rows; kept as Python objects, each row costs ~50–100 bytes more than
its data, and objects that live until the end of the replay, created one by one between the
simulator's short-lived ones, keep most of the interpreter's small-object memory from ever being
reused or returned. These columns hold plain bytes and machine integers instead: ``array('q')``
for integers (used directly), :class:`Coded` for strings with few distinct values, :class:`Strings`
for strings that differ in almost every row. Each reads back as a sequence of ``str``.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, chain

__all__ = ["Coded", "Strings"]


class Coded:
    """A string column with few distinct values: one unsigned code per row, each value stored once
    (``values[codes[i]]`` is row ``i``). Reads as a sequence of its values."""

    __slots__ = ("_code_of", "codes", "values")

    def __init__(self, known: Iterable[str] = ()) -> None:
        """``known``: values given their codes up front, in order (no rows)."""
        self.codes = array("I")
        self.values: list[str] = []
        self._code_of: dict[str, int] = {}
        for value in known:
            self.code(value)

    def code(self, value: str) -> int:
        code = self._code_of.get(value)
        if code is None:
            code = self._code_of[value] = len(self.values)
            self.values.append(value)
        return code

    def append(self, value: str) -> None:
        try:  # (``code``'s lookup inline: a replay appends millions of known values)
            self.codes.append(self._code_of[value])
        except KeyError:
            self.codes.append(self.code(value))

    def extend(self, values: Sequence[str]) -> None:
        """Append many rows at once (values new to the column get codes in their order of first
        appearance, as one ``append`` each would give them)."""
        code_of = self._code_of
        for value in dict.fromkeys(values):
            if value not in code_of:
                self.code(value)
        self.codes.extend(map(code_of.__getitem__, values))

    def __setitem__(self, row: int, value: str) -> None:
        try:  # (as ``append``: binds and ends set a row's value per pod)
            self.codes[row] = self._code_of[value]
        except KeyError:
            self.codes[row] = self.code(value)

    def __getitem__(self, row: int) -> str:
        return self.values[self.codes[row]]

    def __len__(self) -> int:
        return len(self.codes)

    def __iter__(self) -> Iterator[str]:
        values = self.values
        return (values[code] for code in self.codes)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (Coded, list, tuple)) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Coded({list(self)!r})"


class Strings:
    """A string column with a distinct value in (almost) every row — pod names — as UTF-8 bytes end
    to end (``data``) and each row's end offset (``ends``): no Python object per row. (A replay
    creates its pods' names one by one between short-lived objects; kept as ``str`` until the end,
    they pin most of the interpreter's small-object memory, ~100 MiB on NASA iPSC's 310 k pods.)"""

    __slots__ = ("data", "ends")

    def __init__(self) -> None:
        self.data = bytearray()
        self.ends = array("q")

    def append(self, value: str) -> None:
        self.data += value.encode()  # (``append_encoded`` inline: a row per event)
        self.ends.append(len(self.data))

    def extend(self, values: Sequence[str]) -> None:
        """Append many rows at once: ASCII text (a Kubernetes name is) joined and encoded in one go."""
        text = "".join(values)
        if not text.isascii():  # (offsets in bytes would not be offsets in characters)
            for value in values:
                self.append(value)
            return
        data = self.data
        ends = accumulate(map(len, values), initial=len(data))
        next(ends)  # (the offset the rows start at)
        data += text.encode("ascii")
        self.ends.extend(ends)

    def append_encoded(self, value: bytes) -> None:
        """Append a row given as its UTF-8 bytes."""
        self.data += value
        self.ends.append(len(self.data))

    def raw(self, row: int) -> bytes:
        """Row ``row`` as its UTF-8 bytes."""
        return bytes(self.data[self.ends[row - 1] if row else 0 : self.ends[row]])

    def __getitem__(self, row: int) -> str:
        return self.raw(range(len(self.ends))[row]).decode()

    def __len__(self) -> int:
        return len(self.ends)

    def to_list(self) -> list[str]:
        data, ends = self.data, self.ends
        starts = chain((0,), ends)
        if data.isascii():  # offsets in bytes are offsets in characters
            text = data.decode("ascii")
            return [text[start:end] for start, end in zip(starts, ends)]
        return [data[start:end].decode() for start, end in zip(starts, ends)]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_list())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (Strings, list, tuple)) and self.to_list() == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Strings({self.to_list()!r})"
