"""``plan``, ``sweep`` and ``explain`` with ``--horizon`` import only what arrives before it, as
``run`` and ``diff`` do (issue 16): each of their replays stops there, so the output is the same
bytes as with the whole import. The reference here is the same command with the cut switched off
(``pipeline.load`` called without the horizon)."""

from __future__ import annotations

import pytest

from gangsim import pipeline
from tests.importers.conftest import invoke
from tests.importers.test_swf_horizon import _congested_log


@pytest.fixture
def loads(monkeypatch):
    """Records the horizon each ``pipeline.load`` is given; ``uncut()`` makes every later load
    ignore it (the whole import, the reference)."""
    seen: list[int | None] = []
    sizes: list[int] = []
    original = pipeline.load
    cut = [True]

    def load(paths, **kwargs):
        seen.append(kwargs.get("horizon_ms"))
        if not cut[0]:
            kwargs["horizon_ms"] = None
        trace = original(paths, **kwargs)
        sizes.append(len(trace.events))
        return trace

    monkeypatch.setattr(pipeline, "load", load)

    class Loads:
        horizons = seen
        events = sizes

        @staticmethod
        def uncut() -> None:
            cut[0] = False

    return Loads


def _both(loads, *args: str):
    cut = invoke(*args)
    loads.uncut()
    whole = invoke(*args)
    assert cut.exit_code == whole.exit_code and cut.exit_code in (0, 1), cut.output + whole.output  # 1: plan's range cannot meet
    assert loads.horizons[0] is not None  # the command asked for the cut...
    assert loads.events[0] < loads.events[-1]  # ...and got a shorter trace
    return cut, whole


@pytest.mark.parametrize("horizon", ["90s", "5m", "12m"])
def test_plan_with_a_horizon_equals_the_whole_import(tmp_path, loads, horizon):
    log = _congested_log(tmp_path, 5, jobs=40)
    cut, whole = _both(
        loads, "plan", f"swf:{log}", "--pool", "swf", "--range", "2..24", "--target", "gangs.wait_p95_s <= 300",
        "--horizon", horizon, "-j", "1", "--format", "json", "--no-progress",
    )
    assert cut.stdout == whole.stdout and '"answer"' in cut.stdout


def test_sweep_with_a_horizon_equals_the_whole_import(tmp_path, loads):
    log = _congested_log(tmp_path, 6, jobs=40)
    cut, whole = _both(
        loads, "sweep", "--trace", f"swf:{log}", "--policy", "gang", "--policy", "pod", "--pool", "swf=3,5",
        "--horizon", "10m", "-j", "1", "--format", "csv", "--no-progress",
    )
    assert cut.stdout == whole.stdout and cut.stdout.count("\n") == 5  # header + 2 policies x 2 sizes


@pytest.mark.parametrize("policy", ["gang", "pod"])
def test_explain_with_a_horizon_equals_the_whole_import(tmp_path, loads, policy):
    log = _congested_log(tmp_path, 7, jobs=40)
    cut, whole = _both(loads, "explain", f"swf:{log}", "--gang", "swf/j3", "--policy", policy, "--horizon", "10m", "--format", "json")
    assert cut.stdout == whole.stdout and '"verdict"' in cut.stdout


def test_explain_of_a_gang_beyond_the_horizon_says_the_same_either_way(tmp_path, loads):
    log = _congested_log(tmp_path, 7, jobs=40)
    args = ("explain", f"swf:{log}", "--gang", "swf/j40", "--horizon", "1m", "--format", "json")
    cut = invoke(*args)
    loads.uncut()
    whole = invoke(*args)
    assert cut.exit_code == whole.exit_code == 2
    assert cut.stderr == whole.stderr and "--gang swf/j40: no such gang in this replay" in cut.stderr
