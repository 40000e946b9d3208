"""Several runs of one trace side by side: metric keys, which way is better, deltas, the per-gang
wait changes, and the ``--fail-if`` / ``--target`` comparison language.

Pure data in, data out (reports read only the event log's products, STYLE §3); the renderers in
``render_diff.py`` format what is computed here.

Metric keys
    Every numeric leaf of ``summary.json`` by its dotted path (``horizon_s``, ``gpu.stranded_s``,
    ``gangs.wait_p99_s`` …), taken from :func:`~gangsim.report.summary.build_summary` itself so the
    list can never drift from the summary. Besides, ``gangs.wait_pN_s`` and
    ``gangs.wait_censored_pN_s`` for any whole ``N`` in 1…100 are computed from the ``gangs`` table
    (and ``horizon_s``), nearest rank exactly like the summary's own percentiles (so
    ``gangs.wait_p95_s`` works although the summary has no p95).

Comparison grammar (``--fail-if`` in ``diff``, ``--target`` in ``plan``)::

    condition := operand OP operand          (nothing before or after)
    OP        := "<" | "<=" | ">" | ">=" | "==" | "!="
    operand   := number | duration | [LABEL "."] KEY
    number    := -12, 0.5, 1e3, 1_000          duration := 90s, 10m, 1h30m  (→ seconds)
    KEY       := a metric key (above)

LABEL is one of the declared policy labels (``gang``, ``gang+partial-success``,
``pod:cfg/binpack.yaml`` …). Labels may contain ``+ - : / .``, so the scanner tries the declared
labels at the operand's position, longest first, and only then reads a key, a number or an
operator; spaces around operators are optional. Without a label an operand names the *default*
label (``plan`` has one; ``diff`` has none, so there a label is required). At least one operand must
be a key. A bad expression raises :class:`~gangsim.errors.UsageError` whose one line quotes the
expression and names the bad token::

    --fail-if 'gang.gangs.wait_p95x_s > 0': unknown key "gangs.wait_p95x_s" (known in gangs: …)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import polars as pl

from gangsim.api.duration import DurationError, parse_duration_ms
from gangsim.errors import UsageError
from gangsim.eventlog import EventLog
from gangsim.report.metrics import Direction, direction
from gangsim.report.summary import build_summary, nearest_rank

if TYPE_CHECKING:
    from gangsim.report import Report

__all__ = [
    "OPERATORS",
    "Comparison",
    "Condition",
    "Diff",
    "Direction",
    "GangChange",
    "Operand",
    "Verdict",
    "build_diff",
    "direction",
    "flatten",
    "gang_changes",
    "is_undefined",
    "metric_keys",
    "metric_types",
    "metric_value",
    "optional_metric_types",
    "parse_condition",
    "sections",
    "target_keys",
]

# ---------------------------------------------------------------------------------------------
# Metric keys


@cache
def _template() -> dict:
    return build_summary(EventLog())


@cache
def _optional_types() -> dict[str, type]:
    """Keys of the sections a run has only sometimes (``gpu_equiv``: some pod held a GPU share)."""
    always = flatten(_template())
    out: dict[str, type] = {}
    for section, values in build_summary(EventLog(shared_gpu=True)).items():
        if isinstance(values, Mapping):
            for sub, v in values.items():  # None: a ratio the empty run leaves undefined
                if f"{section}.{sub}" not in always and not isinstance(v, (str, bool)):
                    out[f"{section}.{sub}"] = int if isinstance(v, int) else float
    return out


def optional_metric_types(summaries: Sequence[Mapping]) -> dict[str, type]:
    """The optional keys whose section one of ``summaries`` has, in ``summary.json`` order."""
    present = {section for s in summaries for section in s}
    return {k: t for k, t in _optional_types().items() if k.split(".")[0] in present}


def flatten(summary: Mapping) -> dict[str, float | int]:
    """The numeric leaves of a summary by dotted path, in declared order (strings are skipped)."""
    out: dict[str, float | int] = {}
    for key, value in summary.items():
        if isinstance(value, Mapping):
            for sub, v in value.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    out[f"{key}.{sub}"] = v
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = value
    return out


def metric_keys() -> tuple[str, ...]:
    """Every numeric summary key, in ``summary.json`` order."""
    return tuple(flatten(_template()))


def metric_types() -> dict[str, type]:
    """``int`` or ``float`` per metric key (what the summary holds), in ``summary.json`` order."""
    return {key: type(value) for key, value in flatten(_template()).items()}


def sections() -> tuple[str, ...]:
    return tuple(k for k, v in _template().items() if isinstance(v, Mapping))


_PERCENTILE_KEY = re.compile(r"gangs\.wait_(censored_)?p(\d{1,3})_s")


def _percentile_of(key: str) -> int | None:
    m = _PERCENTILE_KEY.fullmatch(key)
    if m is None or not 1 <= int(m[2]) <= 100 or m[2].startswith("0"):
        return None
    return int(m[2])


def is_metric_key(key: str) -> bool:
    return key in metric_keys() or key in _optional_types() or _percentile_of(key) is not None


def needs_gangs_table(key: str) -> bool:
    """True for a key computed from the ``gangs`` table rather than read from the summary."""
    return key not in metric_keys() and key not in _optional_types() and _percentile_of(key) is not None


def gang_wait_percentile(gangs: pl.DataFrame, p: int, *, censored_at_s: float | None = None) -> float:
    """Nearest-rank ``p``-th percentile of ``wait_s`` on integer ms (as the summary): over started
    gangs, or with ``censored_at_s`` (the horizon) over every gang, a gang that never started
    waiting until then."""
    waits_ms = []
    for submitted, wait in gangs.select("submitted_s", "wait_s").iter_rows():
        if wait is not None:
            waits_ms.append(int(round(wait * 1000)))
        elif censored_at_s is not None:
            waits_ms.append(max(int(round(censored_at_s * 1000)) - int(round(submitted * 1000)), 0))
    return round(nearest_rank(sorted(waits_ms), p) / 1000, 3)


def is_undefined(summary: Mapping, key: str) -> bool:
    """A gang wait percentile over no gang has no value (the summary writes 0): started-only
    waits when no gang started, censored waits when the trace has no gang; a ``null`` in the
    summary (``gpu_equiv.allocation_at_*`` of a non-static trace) neither."""
    section, _, sub = key.partition(".")
    if sub and isinstance(summary.get(section), Mapping) and sub in summary[section] and summary[section][sub] is None:
        return True
    if not key.startswith("gangs.wait_"):
        return False
    count = "gangs.total" if key.startswith("gangs.wait_censored_") else "gangs.started"
    return flatten(summary).get(count, 0) == 0


def metric_value(summary: Mapping, gangs: pl.DataFrame | None, key: str) -> float | int | None:
    """The value of one metric key for one run (``gangs`` is needed only for extra percentiles);
    ``None`` when it is undefined (:func:`is_undefined`)."""
    if is_undefined(summary, key):
        return None
    flat = flatten(summary)
    if key in flat:
        return flat[key]
    p = _percentile_of(key)
    if p is None:
        raise KeyError(key)
    if gangs is None:
        raise ValueError(f"{key} needs the gangs table")
    censored = float(flat.get("horizon_s", 0)) if key.startswith("gangs.wait_censored_") else None
    return gang_wait_percentile(gangs, p, censored_at_s=censored)


# ---------------------------------------------------------------------------------------------
# Which way is better (the list lives in ``metrics.py``)


def tone(key: str, delta: float) -> str:
    """``better``, ``worse``, ``same`` (no change) or ``neutral`` (changed, no better side)."""
    if delta == 0:
        return "same"
    d = direction(key)
    if d is Direction.NEUTRAL:
        return "neutral"
    return "better" if (delta > 0) == (d is Direction.HIGHER) else "worse"


def _wait_tone(key: str, shade: str, more_never_started: int) -> str:
    """A wait percentile over every gang (censored at the window's end) understates the waits of
    the run that left more gangs unstarted: it is "better" only for a run that left no more gangs
    unstarted than the baseline, "worse" only for one that left no fewer; otherwise ``neutral``.
    (On the RICC log's first 3 days ``pod`` starts 27 fewer jobs and its censored p99 is 5 s
    shorter: not a better wait.)"""
    if not key.startswith("gangs.wait_") or shade not in ("better", "worse"):
        return shade
    if (shade == "better" and more_never_started > 0) or (shade == "worse" and more_never_started < 0):
        return "neutral"
    return shade


def delta(a: float | int, b: float | int) -> float | int:
    """``b − a``; floats rounded to 6 decimals so ``0.3 − 0.1`` reads ``0.2``."""
    if isinstance(a, int) and isinstance(b, int):
        return b - a
    return round(b - a, 6)


# ---------------------------------------------------------------------------------------------
# The comparison language

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
}
_OP_CHARS = "<>=!"
_OP_RUN = re.compile(r"[<>=!]+")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*")
_NUMBER = re.compile(r"[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_WORD = re.compile(r"[^\s<>=!]+")


@dataclass(frozen=True, slots=True)
class Operand:
    """A number, or the metric ``key`` of the run labelled ``label``."""

    text: str
    number: float | None = None
    label: str | None = None
    key: str | None = None


@dataclass(frozen=True, slots=True)
class Condition:
    text: str
    left: Operand
    op: str
    right: Operand

    def keys(self) -> list[tuple[str, str]]:
        """``(label, key)`` of the operands that are metrics."""
        return [(o.label, o.key) for o in (self.left, self.right) if o.key is not None]  # type: ignore[misc]

    def evaluate(self, lookup: Callable[[str, str], float | int | None], *, undefined_holds: bool) -> "Verdict":
        """Compare. An undefined operand (a wait percentile with no gang started) makes the
        comparison undefined: it counts as held when ``undefined_holds`` (``--fail-if``: a check
        that cannot be shown false fails the build) and as not held otherwise (``--target``: an
        unknown wait does not meet a target)."""

        def value(o: Operand) -> float | int | None:
            return o.number if o.number is not None else lookup(o.label, o.key)  # type: ignore[arg-type]

        left, right = value(self.left), value(self.right)
        if left is None or right is None:
            return Verdict(self, left, right, undefined_holds, undefined=True)
        return Verdict(self, left, right, bool(OPERATORS[self.op](left, right)))


@dataclass(frozen=True, slots=True)
class Verdict:
    condition: Condition
    left: float | int | None
    right: float | int | None
    held: bool
    undefined: bool = False

    def describe(self) -> str:
        """``pod.gangs.started < gang.gangs.started (1 < 2)``; ``n/a`` for an undefined side."""
        note = "; undefined: no gang started" if self.undefined else ""
        return f"{self.condition.text} ({_num(self.left)} {self.condition.op} {_num(self.right)}{note})"

    def to_json(self) -> dict:
        return {"expr": self.condition.text, "held": self.held, "left": self.left, "right": self.right, "undefined": self.undefined}


def _num(x: float | int | None) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return str(x)


def target_keys(conditions: Sequence[Condition]) -> list[str]:
    """The metric keys the conditions name, each once, in order of first mention."""
    keys: list[str] = []
    for c in conditions:
        for _, key in c.keys():
            if key not in keys:
                keys.append(key)
    return keys


def parse_condition(
    text: str,
    labels: Sequence[str],
    *,
    default_label: str | None = None,
    option: str = "--fail-if",
) -> Condition:
    """Parse ``OPERAND OP OPERAND`` (see the module docstring); :class:`UsageError` on anything else."""
    where = f"{option} '{text}'"
    tokens: list[tuple[str, object]] = []  # ("operand", Operand) | ("op", str)
    by_length = sorted(set(labels), key=lambda s: (-len(s), s))
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        if text[i] in _OP_CHARS:
            run = _OP_RUN.match(text, i)
            assert run is not None
            op = run[0]
            if op not in OPERATORS:
                raise UsageError(f'{where}: bad operator "{op}" (use one of {" ".join(OPERATORS_SHOWN)})')
            tokens.append(("op", op))
            i = run.end()
            continue
        operand, i = _operand(text, i, by_length, default_label, where)
        tokens.append(("operand", operand))
    return _assemble(text, tokens, where)


OPERATORS_SHOWN = ("<", "<=", ">", ">=", "==", "!=")


def _operand(text: str, i: int, labels: Sequence[str], default_label: str | None, where: str) -> tuple[Operand, int]:
    for label in labels:
        if text.startswith(label + ".", i):
            start = i + len(label) + 1
            return _key_operand(text, start, label, i, where)
    number = _NUMBER.match(text, i)
    word = _WORD.match(text, i)
    assert word is not None
    if number is not None and number.end() == word.end():
        try:
            value = float(number[0])
        except ValueError:
            raise UsageError(f'{where}: bad number "{number[0]}"') from None
        if not math.isfinite(value):
            raise UsageError(f'{where}: bad number "{number[0]}"')
        return Operand(number[0], number=value), number.end()
    if word[0][:1].isdigit():
        try:
            seconds = parse_duration_ms(word[0]) / 1000
        except DurationError:
            raise UsageError(f'{where}: bad number "{word[0]}" (a number, or a duration like 90s, 10m, 1h30m)') from None
        return Operand(word[0], number=seconds), word.end()
    if default_label is not None:
        return _key_operand(text, i, default_label, i, where)
    return _bad_reference(word[0], labels, where)


def _bad_reference(word: str, labels: Sequence[str], where: str):
    known = ", ".join(sorted(labels)) or "none declared"
    if word.count(".") >= 2:
        label = word.rsplit(".", 2)[0]
        raise UsageError(f'{where}: unknown policy label "{label}" (known: {known})')
    if word.count(".") == 1 and word.split(".")[0] in sections():
        example = f"{sorted(labels)[0]}.{word}" if labels else f"LABEL.{word}"
        raise UsageError(f'{where}: "{word}" needs a policy label, e.g. "{example}" (known labels: {known})')
    raise UsageError(f'{where}: unexpected token "{word}" (expected a number or LABEL.SECTION.KEY with LABEL one of: {known})')


def _key_operand(text: str, start: int, label: str, token_start: int, where: str) -> tuple[Operand, int]:
    m = _KEY.match(text, start)
    if m is None:
        bad = _WORD.match(text, start)
        shown = bad[0] if bad else ""
        raise UsageError(f'{where}: unknown key "{shown}" after "{label}." (known: {", ".join(metric_keys())})')
    key = m[0]
    if not is_metric_key(key):
        raise UsageError(f"{where}: {_unknown_key(key)}")
    return Operand(text[token_start:m.end()], label=label, key=key), m.end()


def _unknown_key(key: str) -> str:
    section, dot, _ = key.partition(".")
    keys = metric_keys()
    if dot and section not in sections():
        return f'unknown section "{section}" in "{key}" (known: {", ".join(sections())})'
    if dot:
        in_section = [k for k in keys if k.startswith(section + ".")]
        extra = " and gangs.wait_pN_s, gangs.wait_censored_pN_s for N in 1..100" if section == "gangs" else ""
        return f'unknown key "{key}" (known in {section}: {", ".join(in_section)}{extra})'
    top = [k for k in keys if "." not in k]
    return f'unknown key "{key}" (known: {", ".join(top)}, or SECTION.KEY with SECTION one of {", ".join(sections())})'


def _assemble(text: str, tokens: list[tuple[str, object]], where: str) -> Condition:
    if not tokens:
        raise UsageError(f"{where}: empty expression (want e.g. 'gang.gpu.stranded_s > 0')")
    kinds = [k for k, _ in tokens]
    if kinds[0] == "op":
        raise UsageError(f'{where}: expression starts with operator "{tokens[0][1]}"; want OPERAND OP OPERAND')
    if len(tokens) == 1:
        raise UsageError(f'{where}: missing operator after "{tokens[0][1].text}" (use one of {" ".join(OPERATORS_SHOWN)})')  # type: ignore[union-attr]
    if kinds[1] != "op":
        raise UsageError(f'{where}: unexpected "{tokens[1][1].text}" after "{tokens[0][1].text}": expected an operator ({" ".join(OPERATORS_SHOWN)})')  # type: ignore[union-attr]
    if len(tokens) == 2:
        raise UsageError(f'{where}: missing operand after "{tokens[1][1]}"')
    if kinds[2] != "operand":
        raise UsageError(f'{where}: unexpected operator "{tokens[2][1]}" after "{tokens[1][1]}"')
    if len(tokens) > 3:
        extra = tokens[3][1]
        shown = extra.text if isinstance(extra, Operand) else extra
        raise UsageError(f'{where}: unexpected "{shown}" after the comparison (one comparison per expression; give several)')
    left, right = tokens[0][1], tokens[2][1]
    assert isinstance(left, Operand) and isinstance(right, Operand)
    if left.key is None and right.key is None:
        raise UsageError(f"{where}: compares two numbers; one side must be a metric such as gang.gpu.stranded_s")
    return Condition(text, left, str(tokens[1][1]), right)


# ---------------------------------------------------------------------------------------------
# The diff itself


@dataclass(frozen=True, slots=True)
class Comparison:
    """One metric across the runs: values in label order, deltas against the baseline (first).

    A value is ``None`` where the metric is undefined for that run: the wait percentiles of a run
    in which no gang started (the summary writes 0 there). A delta with an undefined side is
    ``None`` and its tone ``""``: "no gang started" is not a shorter wait.
    """

    key: str
    values: tuple[float | int | None, ...]
    deltas: tuple[float | int | None, ...]  # one per non-baseline run
    tones: tuple[str, ...]  # one per non-baseline run


@dataclass(frozen=True, slots=True)
class GangChange:
    gang: str
    waits: tuple[float | None, ...]  # wait_s per label; None: never started
    deltas: tuple[float | None, ...]  # per non-baseline label; None when either never started
    tones: tuple[str, ...]
    reasons: tuple[str, ...] = ()  # gangs.waiting_reason per label ("" where it is not pending)


@dataclass(frozen=True, slots=True)
class Diff:
    trace: str
    labels: tuple[str, ...]
    summaries: tuple[dict, ...]
    metrics: tuple[Comparison, ...]
    gangs: tuple[GangChange, ...]  # the gangs whose wait changed most, most first
    verdicts: tuple[Verdict, ...] = ()
    # seconds: the window each run is compared over, and where each replay stopped by itself
    windows_s: tuple[float, ...] = ()
    natural_s: tuple[float, ...] = ()

    @property
    def baseline(self) -> str:
        return self.labels[0]

    @property
    def held(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.held)


def gang_changes(labels: Sequence[str], gangs: Sequence[pl.DataFrame], top: int) -> tuple[GangChange, ...]:
    """Gangs whose wait differs from the baseline's, most changed first (a gang that started
    under one run and never under another counts as the largest change); ties by gang name."""
    waits: dict[str, list[float | None]] = {}
    why: dict[str, list[str]] = {}
    for i, frame in enumerate(gangs):
        for gang, wait, reason in frame.select("gang", "wait_s", "waiting_reason").iter_rows():
            waits.setdefault(gang, [None] * len(gangs))[i] = wait
            why.setdefault(gang, [""] * len(gangs))[i] = reason
    changes: list[tuple[float, str, GangChange]] = []
    for gang, row in waits.items():
        base = row[0]
        deltas: list[float | None] = []
        tones: list[str] = []
        size = 0.0
        for other in row[1:]:
            if base is None and other is None:
                deltas.append(None)
                tones.append("same")
            elif base is None or other is None:
                deltas.append(None)
                tones.append("better" if base is None else "worse")
                size = math.inf
            else:
                d = round(other - base, 3)
                deltas.append(d)
                tones.append(tone("gangs.wait_s", d))
                size = max(size, abs(d))
        if size > 0:
            changes.append((size, gang, GangChange(gang, tuple(row), tuple(deltas), tuple(tones), tuple(why[gang]))))
    changes.sort(key=lambda c: (-c[0], c[1]))
    return tuple(c for _, _, c in changes[: max(top, 0)])


def build_diff(
    labels: Sequence[str],
    reports: Sequence[Report],
    *,
    conditions: Sequence[Condition] = (),
    top: int = 10,
    natural_s: Sequence[float] = (),
) -> Diff:
    """Compare the runs (same trace, baseline first) and evaluate the ``--fail-if`` conditions.
    ``natural_s``: where each replay stopped by itself, when a common window widened some."""
    if len(labels) != len(reports) or not labels:
        raise ValueError("one label per report, at least one")
    flats = [flatten(r.summary) for r in reports]
    never = [f.get("gangs.never_started", 0) - flats[0].get("gangs.never_started", 0) for f in flats[1:]]
    metrics = []
    for key in (*metric_keys(), *optional_metric_types([r.summary for r in reports])):
        values = tuple(None if is_undefined(r.summary, key) else f.get(key, 0) for r, f in zip(reports, flats))
        deltas = tuple(None if values[0] is None or v is None else delta(values[0], v) for v in values[1:])
        tones = tuple("" if d is None else _wait_tone(key, tone(key, d), n) for d, n in zip(deltas, never, strict=True))
        metrics.append(Comparison(key, values, deltas, tones))
    by_label = dict(zip(labels, reports, strict=True))

    def lookup(label: str, key: str) -> float | int | None:
        report = by_label[label]
        return metric_value(report.summary, report.tables["gangs"], key)

    return Diff(
        trace=str(reports[0].summary.get("trace", "")),
        labels=tuple(labels),
        summaries=tuple(r.summary for r in reports),
        metrics=tuple(metrics),
        gangs=gang_changes(labels, [r.tables["gangs"] for r in reports], top),
        verdicts=tuple(c.evaluate(lookup, undefined_holds=True) for c in conditions),
        windows_s=tuple(float(r.summary.get("horizon_s", 0)) for r in reports),
        natural_s=tuple(natural_s) or tuple(float(r.summary.get("horizon_s", 0)) for r in reports),
    )
