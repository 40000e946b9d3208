"""Durations as gangsim reads them: ``90s``, ``5m``, ``1h30m``, ``250ms`` or a plain number of
seconds. The engine works in integer milliseconds so that ties are exact."""

from __future__ import annotations

import re
from fractions import Fraction

_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_EXPONENT = re.compile(r"[eE]([+-]?\d+)")
MAX_TEXT = 64  # no real duration is longer; longer text would make int()/Fraction() slow or raise
_EXACT_FLOAT = float(2**53)  # below it, an integral float's repr is its integer digits


class DurationError(ValueError):
    pass


def parse_duration_ms(value: object) -> int:
    """Parse a duration into whole milliseconds (rounded to the nearest ms)."""
    if isinstance(value, bool):
        raise DurationError("durations must be like 90s, 5m, 1h30m or a number of seconds")
    if isinstance(value, (int, float)):
        if value != value or value < 0 or value in (float("inf"),):
            raise DurationError("durations must be finite and not negative")
        # A whole number of seconds is exact without a Fraction: an int, or a float with no
        # fraction below 2**53, whose repr is its integer digits (an importer's ``at`` of every
        # event: 31,500 Fractions for NASA's log). Above 2**53 the repr is shortest, not exact.
        if type(value) is int or (type(value) is float and value < _EXACT_FLOAT and value.is_integer()):
            return int(value) * 1000
        return round(Fraction(repr(value) if isinstance(value, float) else value) * 1000)
    if not isinstance(value, str):
        raise DurationError("durations must be like 90s, 5m, 1h30m or a number of seconds")
    text = value.strip()
    if not text:
        raise DurationError("empty duration")
    if len(text) > MAX_TEXT:
        raise DurationError(f"durations must be no more than {MAX_TEXT} characters")
    if text.isascii() and text.isdigit():
        return int(text) * 1000
    if not text[-1].isalpha():  # no unit suffix: a plain (decimal, exponent or ratio) number of seconds
        exponent = _EXPONENT.search(text)
        if exponent and abs(int(exponent[1])) > 30:
            raise DurationError("exponent out of range")
        try:
            seconds = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise DurationError("durations must be like 90s, 5m, 1h30m or a number of seconds") from None
        if seconds < 0:
            raise DurationError("durations must not be negative")
        return round(seconds * 1000)
    pos = 0
    total: int | Fraction = 0
    for match in _PART.finditer(text):
        if match.start() != pos:
            break
        number = match[1]
        # Whole numbers stay ints (recorded traces carry millions of them); decimals stay exact.
        total += (int(number) if number.isdigit() else Fraction(number)) * _UNITS_MS[match[2]]
        pos = match.end()
    if pos != len(text) or pos == 0:
        raise DurationError("durations must be like 90s, 5m, 1h30m or a number of seconds")
    return round(total)


def format_duration_ms(ms: int) -> str:
    """Short human form: ``1h30m``, ``45s``, ``250ms``."""
    if ms % 1000:
        return f"{ms}ms" if ms < 1000 else f"{ms / 1000:g}s"
    s = ms // 1000
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    out = ""
    if h:
        out += f"{h}h"
    if m:
        out += f"{m}m"
    if sec or not out:
        out += f"{sec}s"
    return out
