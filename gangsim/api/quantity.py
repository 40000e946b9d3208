"""Kubernetes resource quantities parsed exactly (``500m``, ``8Gi``, ``1e3``, ``1.5``).

gangsim keeps every amount as an ``int``: CPU in millicores (``MilliValue``), everything else in
base units rounded up (``Value``), as kube-scheduler's ``framework.Resource`` does.
"""

from __future__ import annotations

import re
from fractions import Fraction

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<num>(?:\d+(?:\.\d*)?|\.\d+))"
    r"(?:(?P<bin>Ki|Mi|Gi|Ti|Pi|Ei)|(?P<exp>[eE][+-]?\d+)|(?P<dec>[numkMGTPE]?))$"
)

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
EPHEMERAL_STORAGE = "ephemeral-storage"
MAX_INT64 = 2**63 - 1  # Kubernetes integers and quantities (in their base unit) are int64
GPU = "nvidia.com/gpu"


class QuantityError(ValueError):
    """Raised with a short reason; callers turn it into a FieldError."""


def parse_quantity(value: object) -> Fraction:
    """Parse a Kubernetes quantity (string or YAML number) into an exact Fraction."""
    if isinstance(value, bool):
        raise QuantityError("quantities must be strings or numbers")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise QuantityError("quantities must be finite")
        return Fraction(repr(value))
    if not isinstance(value, str):
        raise QuantityError("quantities must be strings or numbers")
    text = value.strip()
    match = _QUANTITY.match(text)
    if not match:
        raise QuantityError("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    number = Fraction(match["num"])
    if match["sign"] == "-":
        number = -number
    if match["bin"]:
        return number * _BINARY[match["bin"]]
    if match["exp"]:
        exponent = int(match["exp"][1:])
        if abs(exponent) > 30:
            raise QuantityError("exponent out of range")
        return number * Fraction(10) ** exponent
    return number * _DECIMAL[match["dec"] or ""]


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


def milli_value(q: Fraction) -> int:
    """``Quantity.MilliValue()``: thousandths, rounded up."""
    return _ceil(q * 1000)


def value(q: Fraction) -> int:
    """``Quantity.Value()``: whole units, rounded up."""
    return _ceil(q)


def is_extended_resource(name: str) -> bool:
    """Extended resources are domain-prefixed (``nvidia.com/gpu``) and not ``kubernetes.io/``."""
    return "/" in name and not name.startswith(("kubernetes.io/", "requests."))


def resource_amount(name: str, raw: object) -> int:
    """Canonical integer amount of resource ``name``: millicores for cpu, base units otherwise.

    Extended resources must be whole numbers, as the API server requires.
    """
    q = parse_quantity(raw)
    if q < 0:
        raise QuantityError("must be greater than or equal to 0")
    if name == CPU:
        return milli_value(q)
    if (is_extended_resource(name) or name == PODS) and q.denominator != 1:
        raise QuantityError("must be an integer")
    return value(q)


def format_amount(name: str, amount: int) -> str:
    """Human form of a canonical amount (for messages and tables)."""
    if name == CPU:
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    if name in (MEMORY, EPHEMERAL_STORAGE) or name.startswith("hugepages-"):
        for suffix, factor in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount and amount % factor == 0:
                return f"{amount // factor}{suffix}"
    return str(amount)
