"""Durations for pods whose manifests have none (INTERFACE "Durations when manifests have none").

A Pod or Job without ``gangsim.dev/duration`` takes, in this order:

1. the first rule of the Trace's ``durations`` list whose ``selector`` matches its labels (a Job's
   pod template labels): a fixed ``duration`` or a seeded ``distribution``;
2. ``--default-duration D`` given on the command line;
3. the Trace's ``defaultDuration``.

Otherwise it has none (it runs until the end). A distribution draws one value per object (a Job:
one for all its pods) in trace order, from its own ``seed``; a patched object keeps its value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from gangsim.api.duration import DurationError, parse_duration_ms
from gangsim.api.objects import Job, Pod, PodSpec
from gangsim.api.selectors import LabelSelector
from gangsim.api.trace import Op, TraceEvent
from gangsim.errors import invalid, required
from gangsim.load.fields import Obj, shown
from gangsim.load.limits import MAX_DURATION_MS, MAX_INT64, check_count, check_duration_ms, check_number
from gangsim.load.selectors import label_selector

DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "uniform": ("min", "max"),  # durations
    "exponential": ("mean",),
    "lognormal": ("median", "sigma"),  # median a duration, sigma a number (of the log)
}
MAX_SIGMA = 10.0


@dataclass(frozen=True, slots=True)
class DurationRule:
    selector: LabelSelector
    duration_ms: int | None  # a fixed duration, or
    distribution: tuple[str, tuple[float, ...]] | None  # (type, parameters in ms / numbers)
    seed: int = 0


@dataclass(frozen=True, slots=True)
class Durations:
    default_ms: int | None = None
    rules: tuple[DurationRule, ...] = ()


def decode_duration(o: Obj, key: str) -> int:
    """A duration field (``90s``, ``1h30m``, seconds) in ms, at most 100 years."""
    try:
        ms = parse_duration_ms(o.raw(key))
    except DurationError as exc:
        raise o.error(key, invalid(o.fp(key), shown(o.raw(key)), str(exc))) from None
    return check_duration_ms(ms, o.fp(key), line=o.ln(key), raw=o.raw(key))


def decode_rule(o: Obj) -> DurationRule:
    """One item of a Trace's ``durations`` list."""
    o.check_keys({"selector", "duration", "distribution"})
    selector = label_selector(o.obj("selector")) or LabelSelector((), ())
    if ("duration" in o) == ("distribution" in o):
        raise o.error("duration", required(o.fp("duration"), "exactly one of duration or distribution"))
    if "duration" in o:
        return DurationRule(selector, decode_duration(o, "duration"), None)
    d = o.obj("distribution", req=True)
    kind = d.enum("type", tuple(DISTRIBUTIONS))
    if not kind:
        raise d.error("type", required(d.fp("type"), f"one of {', '.join(DISTRIBUTIONS)}"))
    params = DISTRIBUTIONS[kind]
    d.check_keys({"type", "seed", *params})
    values: list[float] = []
    for p in params:
        if p not in d:
            raise d.error(p, required(d.fp(p), f"a {kind} distribution needs {' and '.join(params)}"))
        values.append(check_number(d.raw(p), d.fp(p), 0.0, MAX_SIGMA, line=d.ln(p)) if p == "sigma" else float(decode_duration(d, p)))
    if kind == "uniform" and values[0] > values[1]:
        raise d.error("max", invalid(d.fp("max"), shown(d.raw("max")), "must not be less than min"))
    seed = 0 if d.raw("seed") is None else check_count(d.raw("seed"), d.fp("seed"), MAX_INT64, line=d.ln("seed"))
    return DurationRule(selector, None, (kind, tuple(values)), seed)


class _Draws:
    """One generator per rule, drawn in trace order."""

    def __init__(self, durations: Durations) -> None:
        self._rngs = [np.random.default_rng(r.seed) if r.distribution else None for r in durations.rules]

    def draw(self, i: int, rule: DurationRule) -> int:
        kind, p = rule.distribution  # type: ignore[misc]
        rng = self._rngs[i]
        if kind == "uniform":
            value = rng.uniform(p[0], p[1])
        elif kind == "exponential":
            value = rng.exponential(p[0])
        else:
            value = p[0] * math.exp(rng.normal(0.0, p[1]))
        return min(MAX_DURATION_MS, max(1, round(value)))


def apply_durations(events: list[TraceEvent], durations: Durations, cli_default_ms: int | None) -> list[TraceEvent]:
    """``events`` with a duration set on every Pod and Job that has none and that a rule or a default covers."""
    default = cli_default_ms if cli_default_ms is not None else durations.default_ms
    if default is None and not durations.rules:
        return events
    draws = _Draws(durations)
    chosen: dict[tuple[str, str, str], int | None] = {}
    specs: dict[tuple[int, int], PodSpec] = {}
    out: list[TraceEvent] = []
    for ev in events:
        obj = ev.obj
        if ev.op is Op.DELETE or not isinstance(obj, (Pod, Job)):
            out.append(ev)
            continue
        spec = obj.spec if isinstance(obj, Pod) else obj.template
        if spec.duration_ms is not None:
            out.append(ev)
            continue
        key = (ev.kind, ev.namespace, ev.name)
        if ev.op is Op.CREATE or key not in chosen:
            chosen[key] = _choose(spec, durations, draws, default)
        ms = chosen[key]
        if ms is None:
            out.append(ev)
            continue
        new_spec = specs.get((id(spec), ms))
        if new_spec is None:
            new_spec = specs[(id(spec), ms)] = replace(spec, duration_ms=ms)
        new_obj = replace(obj, spec=new_spec) if isinstance(obj, Pod) else replace(obj, template=new_spec)
        out.append(replace(ev, obj=new_obj))
    return out


def _choose(spec: PodSpec, durations: Durations, draws: _Draws, default: int | None) -> int | None:
    for i, rule in enumerate(durations.rules):
        if rule.selector.matches(spec.labels):
            return rule.duration_ms if rule.duration_ms is not None else draws.draw(i, rule)
    return default


def has_durations(events: list[TraceEvent]) -> bool:
    """Whether any Pod or Job of the trace has a duration (else nothing ever finishes)."""
    for ev in events:
        obj = ev.obj
        if isinstance(obj, Pod) and obj.spec.duration_ms is not None:
            return True
        if isinstance(obj, Job) and obj.template.duration_ms is not None:
            return True
    return False


__all__ = ["DISTRIBUTIONS", "DurationRule", "Durations", "apply_durations", "decode_duration", "decode_rule", "has_durations"]
