"""``gangsim import`` (real traces → gangsim JSON Lines) and ``gangsim generate`` (synthetic traces).

Both write to ``-o FILE`` (atomically: a temporary file renamed on success, removed on error) or,
without it, to stdout (spooled, so a failed run prints nothing). Bad input or options: one line
on stderr and exit 2, like every gangsim command.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from gangsim.commands.common import Command
from gangsim.errors import GangsimError, UsageError


class ImporterName(StrEnum):
    openb = "openb"
    swf = "swf"
    gavel = "gavel"
    kubectl = "kubectl"


class TraceFormat(StrEnum):
    jsonl = "jsonl"
    yaml = "yaml"


class SharedGpu(StrEnum):
    milli = "milli"
    whole = "whole"


class ProcResource(StrEnum):
    gpu = "gpu"
    cpu = "cpu"


class Cancelled(StrEnum):
    skip = "skip"
    delete = "delete"


def _user_errors(fn: Callable) -> Callable:
    """As ``gangsim.cli.user_errors``: a GangsimError is one stderr line and exit 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except GangsimError as exc:
            sys.stderr.write(f"gangsim: error: {exc}\n")
            raise typer.Exit(2) from None

    return wrapper


@contextmanager
def _output(path: Path | None):
    """A binary stream that becomes ``path`` (or stdout) only if the block succeeds."""
    if path is None:
        spool = tempfile.SpooledTemporaryFile(max_size=64 * 2**20)
        try:
            yield spool
            spool.seek(0)
            shutil.copyfileobj(spool, sys.stdout.buffer)
            sys.stdout.buffer.flush()
        finally:
            spool.close()
        return
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(directory):
        raise UsageError(f"-o {target}: no such directory: {directory}")
    fd, tmp = tempfile.mkstemp(prefix=".gangsim-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as out:
            yield out
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _format_for(out: Path | None, fmt: TraceFormat | None) -> TraceFormat:
    if fmt is not None:
        return fmt
    if out is not None and out.suffix.lower() in (".yaml", ".yml"):
        return TraceFormat.yaml
    return TraceFormat.jsonl


def _key_values(items: list[str] | None, option: str) -> dict[str, int] | None:
    if not items:
        return None
    out: dict[str, int] = {}
    for item in items:
        key, sep, value = item.partition("=")
        try:
            if not sep or not key.strip():
                raise ValueError
            out[key.strip()] = int(value)
        except ValueError:
            raise UsageError(f"{option}: Invalid value: {item!r}: expected KEY=INTEGER (e.g. LS=1000)") from None
    return out


def _note(text: str, quiet: bool) -> None:
    if not quiet:
        sys.stderr.write(f"gangsim: {text}\n")


def register(app: typer.Typer) -> None:
    @app.command("import", cls=Command)
    @_user_errors
    def import_(
        kind: Annotated[ImporterName, typer.Argument(help="Source format: openb, swf, gavel or kubectl.", case_sensitive=False, show_default=False)],
        sources: Annotated[list[str], typer.Argument(help="Source files or directories ('-' = stdin for kubectl).", show_default=False)],
        out: Annotated[Path | None, typer.Option("--output", "-o", help="Write the trace here (default: stdout).")] = None,
        fmt: Annotated[TraceFormat | None, typer.Option("--format", "-f", case_sensitive=False, help="jsonl (default) or yaml (default for -o *.yaml).")] = None,
        name: Annotated[str | None, typer.Option("--name", help="Trace name (default: from the source).")] = None,
        limit: Annotated[int | None, typer.Option("--limit", min=0, help="Import only the first N jobs/pods of the source (file order).")] = None,
        priority: Annotated[list[str] | None, typer.Option("--priority", help="KEY=VALUE: a PriorityClass for openb QoS, swf queue or gavel VC KEY (repeatable).")] = None,
        shared_gpu: Annotated[SharedGpu | None, typer.Option("--shared-gpu", case_sensitive=False, help="openb: shared-GPU pods pack by gpu-milli (milli) or get whole GPUs (whole).")] = None,
        inflate: Annotated[float | None, typer.Option("--inflate", min=0.0, help="openb: FGD static mode: re-sample pods (--seed) until their GPU request is this × the cluster's GPUs, shuffle, all at t=0, never deleted.")] = None,
        nodes: Annotated[int | None, typer.Option("--nodes", min=1, help="swf, gavel: number of nodes (default: from the header / cluster_specs.json).")] = None,
        cores_per_node: Annotated[int | None, typer.Option("--cores-per-node", min=1, help="swf: processors per node (default: MaxProcs / MaxNodes, else 1).")] = None,
        pod_size: Annotated[int | None, typer.Option("--pod-size", min=1, help="swf: processors, gavel: GPUs per pod at most (default: a whole node).")] = None,
        resource: Annotated[ProcResource | None, typer.Option("--resource", case_sensitive=False, help="swf: a processor is one nvidia.com/gpu (gpu) or one cpu core (cpu).")] = None,
        cancelled: Annotated[Cancelled | None, typer.Option("--cancelled", case_sensitive=False, help="swf: jobs cancelled before starting are skipped or deleted at their cancellation.")] = None,
        gpus_per_node: Annotated[int | None, typer.Option("--gpus-per-node", min=1, help="gavel: GPUs per node (default 8).")] = None,
        throughputs: Annotated[str | None, typer.Option("--throughputs", help="gavel: a Gavel throughputs JSON; duration = steps / V100 throughput.")] = None,
        steps_per_second: Annotated[float | None, typer.Option("--steps-per-second", help="gavel: duration = steps / this rate.")] = None,
        seed: Annotated[int | None, typer.Option("--seed", help="gavel: seed of the default synthetic durations (1-4 h); openb --inflate: seed of the re-sampling and shuffle (default 42).")] = None,
        strict: Annotated[bool, typer.Option("--strict", help="kubectl: unmodelled scheduling fields of pending pods are errors, not warnings.")] = False,
        quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No summary on stderr.")] = False,
    ) -> None:
        """Convert a real trace (Alibaba openb, SWF, Gavel/Philly, kubectl output) into a gangsim trace.

        Streams: records are written as they are produced (cluster first, then workloads in arrival order). Each format's mapping is documented in gangsim/load/importers/<kind>.py. `gangsim run KIND:PATH` imports on the fly with the default options.
        """
        from gangsim.load.importers import ImportOptions, Stats, records, write_jsonl, write_yaml

        options = ImportOptions(
            name=name, limit=limit, priorities=_key_values(priority, "--priority"),
            shared_gpu=shared_gpu.value if shared_gpu else None, inflate=inflate, nodes=nodes, cores_per_node=cores_per_node,
            pod_size=pod_size, resource=resource.value if resource else None, cancelled=cancelled.value if cancelled else None,
            gpus_per_node=gpus_per_node, throughputs=throughputs, steps_per_second=steps_per_second, seed=seed,
            strict=True if strict else None,
        )  # fmt: skip
        stats = Stats()
        started = time.perf_counter()
        chosen = _format_for(out, fmt)
        writer = write_yaml if chosen is TraceFormat.yaml else write_jsonl
        with _output(out) as stream:
            lines = writer(records(kind.value, sources, options, stats), stream)
        elapsed = time.perf_counter() - started
        for note in stats.notes:
            _note(note, quiet)
        where = os.fspath(out) if out is not None else "stdout"
        unit = "documents" if chosen is TraceFormat.yaml else "lines"
        _note(f"imported {kind.value}: {stats.summary()} -> {where} ({lines:,} {unit}, {elapsed:.1f}s)", quiet)

    @app.command(cls=Command)
    @_user_errors
    def generate(
        preset: Annotated[str | None, typer.Option("--preset", help="Start from a preset: " + ", ".join(_preset_names()) + ".")] = None,
        seed: Annotated[int | None, typer.Option("--seed", help="Random seed (same seed and options: same bytes).")] = None,
        name: Annotated[str | None, typer.Option("--name", help="Trace name.")] = None,
        pool: Annotated[list[str] | None, typer.Option("--pool", help="NAME=COUNTxGPUS[,cpu=N][,memory=NGi][,LABEL=VALUE…], e.g. gpu=40x8 (repeatable).")] = None,
        jobs: Annotated[int | None, typer.Option("--jobs", min=0, help="Number of jobs.")] = None,
        hours: Annotated[float | None, typer.Option("--hours", min=0.0, help="Arrival window (Poisson arrivals), hours.")] = None,
        gang_sizes: Annotated[str | None, typer.Option("--gang-sizes", help="Pods per job and weights, e.g. 1:0.5,8:0.3,64:0.2.")] = None,
        gpus_per_pod: Annotated[str | None, typer.Option("--gpus-per-pod", help="GPUs per pod and weights, e.g. 1:0.5,8:0.5.")] = None,
        priority: Annotated[list[str] | None, typer.Option("--priority", help="CLASS=VALUE:WEIGHT, the priority mix (repeatable), e.g. prod=10000:0.2.")] = None,
        duration_median: Annotated[str | None, typer.Option("--duration-median", help="Median job run time (lognormal), e.g. 1h.")] = None,
        duration_sigma: Annotated[float | None, typer.Option("--duration-sigma", min=0.0, help="Lognormal sigma of run times.")] = None,
        duration_max: Annotated[str | None, typer.Option("--duration-max", help="Longest run time, e.g. 12h.")] = None,
        checkpoint_interval: Annotated[str | None, typer.Option("--checkpoint-interval", help="Checkpoint interval (e.g. 30m), or 'none'.")] = None,
        node_failures: Annotated[int | None, typer.Option("--node-failures", min=0, help="Nodes of the first pool that fail at random times.")] = None,
        gangs: Annotated[bool | None, typer.Option("--gangs/--no-gangs", help="Multi-pod jobs get a PodGroup with gang minCount = pods.")] = None,
        namespace: Annotated[str | None, typer.Option("--namespace", help="Namespace of the jobs.")] = None,
        topology: Annotated[str | None, typer.Option("--topology", help="Lay every pool's nodes out in a hierarchy, outermost first: KEY=NODES,…, e.g. block=32,rack=8 (every 8 nodes one rack=rack-<i> label).")] = None,
        gang_topology: Annotated[str | None, typer.Option("--gang-topology", help="Multi-pod gangs must fit in one domain of this node label (PodGroup schedulingConstraints.topology), e.g. rack.")] = None,
        fmt: Annotated[TraceFormat | None, typer.Option("--format", "-f", case_sensitive=False, help="yaml (default) or jsonl (default for -o *.jsonl).")] = None,
        out: Annotated[Path | None, typer.Option("--output", "-o", help="Write the trace here (default: stdout).")] = None,
        list_presets: Annotated[bool, typer.Option("--list-presets", help="List the presets and exit.")] = False,
    ) -> None:
        """Generate a seeded synthetic trace: node pools, Poisson arrivals, gang-size, GPU and duration distributions, a priority mix and optional node failures.

        `gangsim generate --preset mixed-day` reproduces traces/mixed-day.yaml (without its comment header).
        """
        from dataclasses import replace

        from gangsim.load import generate as gen

        if list_presets:
            for key, (about, _) in gen.PRESETS.items():
                sys.stdout.write(f"{key:16} {about}\n")
            return
        if preset is not None:
            try:
                spec = gen.preset(preset)
            except KeyError as exc:
                raise UsageError(f"--preset: {exc.args[0]}") from None
        else:
            spec = gen.GeneratorSpec()
        changes: dict = {}
        if seed is not None:
            changes["seed"] = seed
        if name is not None:
            changes["name"] = name
        if pool:
            changes["pools"] = tuple(_pool(p) for p in pool)
        if jobs is not None:
            changes["jobs"] = jobs
        if hours is not None:
            changes["hours"] = hours
        if gang_sizes is not None:
            changes["gang_sizes"] = _weights(gang_sizes, "--gang-sizes")
        if gpus_per_pod is not None:
            changes["gpus_per_pod"] = _weights(gpus_per_pod, "--gpus-per-pod", lo=0)
        if priority:
            changes["priorities"] = tuple(_priority(p) for p in priority)
        if duration_median is not None:
            changes["duration_median_s"] = _seconds(duration_median, "--duration-median", positive=True)
        if duration_sigma is not None:
            changes["duration_sigma"] = duration_sigma
        if duration_max is not None:
            changes["duration_max_s"] = _seconds(duration_max, "--duration-max", positive=True)
        if checkpoint_interval is not None:
            changes["checkpoint_interval_s"] = None if checkpoint_interval.lower() in ("none", "0", "off") else _seconds(checkpoint_interval, "--checkpoint-interval", positive=True)
        if node_failures is not None:
            changes["node_failures"] = node_failures
        if gangs is not None:
            changes["gang_policy"] = gangs
        if namespace is not None:
            changes["namespace"] = namespace
        if gang_topology is not None:
            changes["gang_topology_key"] = gang_topology
        spec = replace(spec, **changes)
        if topology is not None:
            levels = _topology(topology)
            spec = replace(spec, pools=tuple(replace(p, topology=levels) for p in spec.pools))
        _check_spec(spec)
        chosen = fmt if fmt is not None else (TraceFormat.jsonl if out is not None and out.suffix.lower() in (".jsonl", ".ndjson") else TraceFormat.yaml)
        writer = gen.write_jsonl if chosen is TraceFormat.jsonl else gen.write_yaml
        with _output(out) as stream:
            writer(gen.generate(spec), stream)


def _preset_names() -> Iterable[str]:
    from gangsim.load.generate import PRESETS

    return PRESETS.keys()


_POOL = re.compile(r"^(?P<name>[a-z0-9]([-a-z0-9]*[a-z0-9])?)=(?P<count>\d+)x(?P<gpus>\d+)$")


def _pool(text: str):
    from gangsim.load.generate import PoolSpec

    head, *rest = [p.strip() for p in text.split(",")]
    m = _POOL.match(head)
    if not m:
        raise UsageError(f"--pool: Invalid value: {text!r}: expected NAME=COUNTxGPUS[,cpu=N][,memory=NGi][,LABEL=VALUE], e.g. gpu=40x8")
    cpu, memory_gi, labels = 96, 1024, []
    for item in rest:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--pool: Invalid value: {item!r} in {text!r}: expected KEY=VALUE")
        try:
            if key == "cpu":
                cpu = int(value)
            elif key == "memory":
                memory_gi = int(value.removesuffix("Gi"))
            else:
                labels.append((key, value))
        except ValueError:
            raise UsageError(f"--pool: Invalid value: {item!r}: {key} must be an integer{' (Gi)' if key == 'memory' else ''}") from None
    return PoolSpec(m["name"], int(m["count"]), cpu=cpu, memory_gi=memory_gi, gpus=int(m["gpus"]), labels=tuple(labels))


def _topology(text: str) -> tuple[tuple[str, int], ...]:
    """``--topology block=32,rack=8`` → ((block, 32), (rack, 8)); the loader checks the keys."""
    out = []
    for item in text.split(","):
        key, sep, value = item.strip().partition("=")
        if not sep or not key or not value.isdigit() or int(value) < 1:
            raise UsageError(f"--topology: Invalid value: {item!r} in {text!r}: expected KEY=NODES with NODES >= 1, e.g. block=32,rack=8")
        out.append((key, int(value)))
    return tuple(out)


def _weights(text: str, option: str, lo: int = 1) -> tuple[tuple[int, float], ...]:
    out = []
    for item in text.split(","):
        value, sep, weight = item.strip().partition(":")
        try:
            v = int(value)
            w = float(weight) if sep else 1.0
            if v < lo or w < 0:
                raise ValueError
        except ValueError:
            raise UsageError(f"{option}: Invalid value: {item.strip()!r}: expected SIZE:WEIGHT with SIZE >= {lo} and WEIGHT >= 0") from None
        out.append((v, w))
    if not out or sum(w for _, w in out) <= 0:
        raise UsageError(f"{option}: Invalid value: {text!r}: the weights must not all be zero")
    return tuple(out)


def _priority(text: str) -> tuple[str, int, float]:
    name, sep, rest = text.partition("=")
    value, sep2, weight = rest.partition(":")
    try:
        if not sep or not re.match(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", name):
            raise ValueError
        return name, int(value), float(weight) if sep2 else 1.0
    except ValueError:
        raise UsageError(f"--priority: Invalid value: {text!r}: expected CLASS=VALUE:WEIGHT, e.g. prod=10000:0.2") from None


def _seconds(text: str, option: str, *, positive: bool = False) -> float:
    from gangsim.api.duration import DurationError, parse_duration_ms

    try:
        ms = parse_duration_ms(text)
    except DurationError as exc:
        raise UsageError(f"{option}: Invalid value: {text!r}: {exc}") from None
    if positive and ms <= 0:
        raise UsageError(f"{option}: Invalid value: {text!r}: must be positive")
    return ms / 1000


def _check_spec(spec) -> None:
    if not spec.pools:
        raise UsageError("--pool: give at least one node pool")
    names = [p.name for p in spec.pools]
    if len(set(names)) != len(names):
        raise UsageError(f"--pool: pool names must be unique: {', '.join(names)}")
    if spec.jobs and not any(p.gpus for p in spec.pools):
        raise UsageError("--pool: the jobs ask for GPUs: give at least one pool with GPUs")
    if spec.jobs and not spec.priorities:
        raise UsageError("--priority: give at least one priority class")
    if sum(w for *_, w in spec.priorities) <= 0 and spec.jobs:
        raise UsageError("--priority: the weights must not all be zero")
