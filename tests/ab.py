"""What the fast-path A/B tests share: a speed shortcut is proven equal to the reference path by
replaying one trace with its switch on and off and comparing what users read — the report files
byte for byte (``report_bytes``), or each pod's outcome and the event log (``outcome``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from hypothesis import strategies as st

from builders import SRC, create, delete, make_group, make_node, make_spec, make_trace, patch

from gangsim.api.objects import Pod, PodSpec
from gangsim.load import load_trace
from gangsim.load.generate import GeneratorSpec, generate, write_jsonl
from gangsim.report import build_report, write_report
from gangsim.sim.replay import replay

ROOT = Path(__file__).resolve().parents[1]
# the real traces beside the project (``../shared/traces-data``); tests needing one skip without it
SHARED = next((p / "shared" / "traces-data" for p in ROOT.parents if (p / "shared" / "traces-data").is_dir()), ROOT.parent / "shared" / "traces-data")


def generated_trace(path: Path, spec: GeneratorSpec, *, horizon_ms: int):
    """``spec``'s generated trace, written to ``path`` and loaded, replayed until ``horizon_ms``."""
    with path.open("wb") as out:
        write_jsonl(generate(spec), out)
    return replace(load_trace([path]), horizon_ms=horizon_ms)


def report_bytes(trace, policy: str, out: Path, *, seed: int | None = None, counters: dict | None = None, **changes) -> dict[str, bytes]:
    """The report files of ``trace`` replayed under ``policy`` with the configuration ``changes``
    (``SchedulerConfig.with_changes``), written to ``out``; the replay's counters into ``counters``."""
    config = trace.config.with_changes(**changes) if changes else trace.config
    log = replay(trace, policy, config=config, seed=seed)
    if counters is not None:
        counters.update(log.counters)
    write_report(build_report(log), out)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if not p.name.startswith(".")}


def outcome(trace, policy: str, **changes) -> tuple[list, list]:
    """Each pod's node, bind and end times, waiting reason and attempts, and every event."""
    log = replay(trace, policy, config=trace.config.with_changes(**changes))
    pods = [(p.pod, p.node, p.bound_ms, p.ended_ms, p.waiting_reason, p.scheduling_attempts) for p in log.pods]
    return pods, list(zip(log.ev_t_ms, log.ev_object, log.ev_reason, log.ev_message))


def arrival_events(ops: list[tuple[str, int, int]], plain: dict[str, PodSpec], gated: dict[str, PodSpec], at: Callable[[int, int], int]) -> list:
    """Pods ``p0``–``p5`` of group ``g`` and ``p6``… of ``h`` created (``gated``: with the spec
    carrying a scheduling gate), deleted and let go (the gate patched away) as the hypothesis ops
    ``(op, pod index, jitter)`` say, op t at ``at(t, jitter)`` seconds; ops that do not apply to a
    pod's state then are skipped."""
    events = []
    live: dict[str, Pod] = {}
    for t, (op, i, dt) in enumerate(ops):
        name, group = f"p{i}", "g" if i < 6 else "h"
        when = at(t, dt)
        if op in ("create", "gated") and name not in live:
            live[name] = Pod(namespace="default", name=name, spec=(gated if op == "gated" else plain)[group], source=SRC)
            events.append(create(live[name], at_s=when))
        elif op == "delete" and name in live:
            events.append(delete("Pod", name, at_s=when))
            del live[name]
        elif op == "ungate" and name in live and live[name].spec.scheduling_gates:
            live[name] = replace(live[name], spec=plain[group])
            events.append(patch(live[name], at_s=when))
    return events


# hypothesis ops for :func:`arrival_events`: (op, pod index, jitter)
ARRIVAL_OPS = st.lists(
    st.tuples(st.sampled_from(["create", "create", "create", "gated", "delete", "ungate"]), st.integers(0, 9), st.integers(0, 2)),
    min_size=1,
    max_size=30,
)


def two_gangs_on_one_node(ops: list[tuple[str, int, int]], min_g: int, min_h: int, cpu: int):
    """Gangs ``g`` (minCount ``min_g``) and ``h`` (``min_h``) of 1-CPU pods arriving as
    :data:`ARRIVAL_OPS` say (several at an instant, some gated, deleted and let go) on one node
    of ``cpu`` CPUs, too small for both: members wait at Permit, time out and come again."""
    plain = {g: make_spec(cpu=1, group=g, duration_s=40) for g in ("g", "h")}
    gated = {g: make_spec(cpu=1, group=g, gates=("wait",), duration_s=40) for g in ("g", "h")}
    events = [create(make_node("n0", cpu=cpu, memory_gi=16)), create(make_group("g", min_g)), create(make_group("h", min_h))]
    events += arrival_events(ops, plain, gated, at=lambda t, dt: 1 + 20 * (t // 4) + dt)
    return make_trace(*events, horizon_s=1200)


def gang_at_once(size: int):
    """A gang ``g`` of ``size`` pods of one spec, all created at 1 s, on a node that holds it all
    (under ``permit`` each waits at Permit until the last releases them)."""
    spec = make_spec(cpu=0.5, group="g", duration_s=60)
    events = [create(make_node("n0", cpu=64, memory_gi=64)), create(make_group("g", size))]
    events += [create(Pod(namespace="default", name=f"p{i:02}", spec=spec, source=SRC), at_s=1) for i in range(size)]
    return make_trace(*events)
