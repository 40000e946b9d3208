"""The input limits of gangsim and the checks that enforce them — the one place for both.

Every number read from a trace, a config or an imported file goes through one of these checks
*before* anything is expanded (a Job into pods, a NodePool into nodes), so a bad value is an
``InputError`` (exit 2), never a crash, a hang or gigabytes of memory.

Limits (documented in README, "Limits")::

    MAX_INT64           2**63 - 1   any quantity in its base unit: cpu in millicores, memory and
                                    ephemeral-storage in bytes, pods, extended resources in units
    MAX_PODS_PER_JOB    100_000     a Job's spec.parallelism (and spec.completions)
    MAX_NODES_PER_POOL  100_000     a NodePool's spec.count
    MAX_CLUSTER_GPUS    1,000,000   nvidia.com/gpu on the live nodes at any instant (load/trace.py)
    MAX_DURATION_MS     100 years   any duration (365-day years), in milliseconds
    MAX_VALUE_CHARS     80          a user value echoed in a message is cut to this, with "…"
    MAX_LINE_CHARS      300         a whole error line as printed; ``errors.fit`` shortens a longer one
                                    (value cut further, apimachinery's regex hint dropped, end cut)

API (stable; the importers use it)::

    check_count(value, field, maximum, *, line=None) -> int
        an integer in [0, maximum]; ``bool``, floats (even 3.0), strings… are rejected
    check_quantity_int64(resource, value, field, *, line=None) -> int
        a quantity (string or number) → its canonical int (``resource_amount``), ≤ MAX_INT64
    check_duration_ms(ms, field, *, line=None) -> int
        an already parsed duration ≤ MAX_DURATION_MS
    cut(text) -> str
        ``text`` cut to MAX_VALUE_CHARS with "…" (for values echoed in messages)

Each check raises ``gangsim.errors.InputError`` carrying an apimachinery ``FieldError``
(``spec.parallelism: Invalid value: 1e+308: must be an integer between 0 and 100000``) and the
``line`` when given; the caller adds file and object with ``InputError.located``.

``MAX_VALUE_CHARS``, ``MAX_LINE_CHARS`` and ``cut`` are defined in ``gangsim.errors`` (every
message is rendered there, and ``gangsim.errors`` cannot import ``gangsim.load``) and re-exported here.

Layering: imports only ``gangsim.errors``, ``gangsim.api.quantity`` and ``gangsim.load.fields``.
"""

from __future__ import annotations

from functools import lru_cache

from gangsim.api.quantity import MAX_INT64, QuantityError, resource_amount
from gangsim.errors import MAX_LINE_CHARS, MAX_VALUE_CHARS, InputError, cut, invalid
from gangsim.load.fields import shown as _shown

__all__ = [
    "MAX_INT64",
    "MAX_PODS_PER_JOB",
    "MAX_NODES_PER_POOL",
    "MAX_CLUSTER_GPUS",
    "MAX_DURATION_MS",
    "MAX_VALUE_CHARS",
    "MAX_LINE_CHARS",
    "MAX_QUANTITY_CHARS",
    "check_count",
    "check_quantity_int64",
    "check_duration_ms",
    "cut",
]

MAX_PODS_PER_JOB = 100_000
MAX_NODES_PER_POOL = 100_000
# GPUs (nvidia.com/gpu) on the cluster at any one time: the reports integrate GPUs over time in
# int64 milliseconds, and 10**6 GPUs over MAX_DURATION_MS (3.2e18 GPU-ms) stays inside int64
MAX_CLUSTER_GPUS = 1_000_000
MAX_DURATION_MS = 100 * 365 * 86_400_000  # 100 years of 365 days
MAX_QUANTITY_CHARS = 64  # longer strings are not quantities (int64 has 19 digits); parsing them would be slow


def check_count(value: object, field: str, maximum: int, *, line: int | None = None) -> int:
    """``value`` as an integer count in ``[0, maximum]``; anything else (bool, float, string,
    negative, above ``maximum``) → ``InputError``: ``<field>: Invalid value: <v>: must be an integer between 0 and <max>``."""
    if type(value) is int and 0 <= value <= maximum:
        return value
    raise InputError(invalid(field, _shown(value), f"must be an integer between 0 and {maximum}"), line=line)


def check_quantity_int64(resource: str, value: object, field: str, *, line: int | None = None) -> int:
    """A quantity of ``resource`` (a string or a number) → its canonical amount (millicores for
    cpu, base units otherwise), checked to fit int64. Errors name ``field`` and show the value."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(invalid(field, _shown(value), "quantities must be strings or numbers"), line=line)
    if isinstance(value, str) and len(value) > MAX_QUANTITY_CHARS:
        raise InputError(invalid(field, value, f"quantities must be no more than {MAX_QUANTITY_CHARS} characters"), line=line)
    try:
        amount = _amount(resource, type(value), value)
    except QuantityError as exc:
        raise InputError(invalid(field, value, str(exc)), line=line) from None
    if amount > MAX_INT64:
        unit = "millicores" if resource == "cpu" else "bytes" if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-") else "units"
        raise InputError(invalid(field, value, f"must be no more than {MAX_INT64} {unit} (int64)"), line=line)
    return amount


@lru_cache(maxsize=4096)
def _amount(resource: str, kind: type, value: object) -> int:
    """``resource_amount`` memoised: recorded traces repeat the same few quantities (``kind`` keeps
    ``1`` and ``1.0`` apart)."""
    return resource_amount(resource, value)


def check_duration_ms(ms: int, field: str, *, line: int | None = None, raw: object = None) -> int:
    """A parsed duration (milliseconds) that must not exceed ``MAX_DURATION_MS``; ``raw`` (the value
    as written) is what the message shows."""
    if ms > MAX_DURATION_MS:
        raise InputError(invalid(field, _shown(ms if raw is None else raw), "must be no more than 100 years"), line=line)
    return ms
