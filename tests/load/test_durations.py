"""``api.duration.parse_duration_ms`` on numbers: the whole-seconds shortcut (an int, or an
integral float below 2**53) gives what the exact Fraction arithmetic gives."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gangsim.api.duration import DurationError, parse_duration_ms


def exact_ms(value: int | float) -> int:
    """The reference: the number's decimal text as an exact fraction of seconds, in ms."""
    return round(Fraction(repr(value) if isinstance(value, float) else value) * 1000)


@given(st.integers(min_value=0, max_value=2**70))
def test_whole_seconds_as_int(value: int) -> None:
    assert parse_duration_ms(value) == exact_ms(value) == value * 1000


@given(st.floats(min_value=0, max_value=2.0**60, allow_nan=False, allow_infinity=False))
def test_seconds_as_float(value: float) -> None:
    assert parse_duration_ms(value) == exact_ms(value)


@given(st.integers(min_value=0, max_value=2**62))
def test_integral_floats(value: int) -> None:
    f = float(value)
    assert parse_duration_ms(f) == exact_ms(f)


@pytest.mark.parametrize(
    ("value", "ms"),
    [
        (0, 0),
        (0.0, 0),
        (-0.0, 0),
        (1234.0, 1_234_000),
        (12.5, 12_500),
        (0.0004, 0),
        (0.0005, 0),  # round half to even on the exact value, as before
        (0.0015, 2),
        (9007199254740991.0, 9_007_199_254_740_991_000),  # 2**53 - 1: the shortcut
        (9007199254740992.0, 9_007_199_254_740_992_000),  # 2**53: the Fraction path
        (1e16, 10**19),  # repr '1e+16'
        (1.2345678901234567e20, 123_456_789_012_345_670_000_000),  # the repr's digits, not the binary value
    ],
)
def test_numbers(value: float, ms: int) -> None:
    assert parse_duration_ms(value) == ms


@pytest.mark.parametrize("value", [-1, -0.5, float("inf"), float("nan"), True])
def test_rejected_numbers(value: object) -> None:
    with pytest.raises(DurationError):
        parse_duration_ms(value)
