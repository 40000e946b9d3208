"""``gangsim`` with phase timers: what the whole-process cases run in their subprocess.

    python benchmarks/driver.py run TRACE -p gang ...     # = gangsim run TRACE -p gang ...

Run as a script (never imported by gangsim): its directory, not the repository, is ``sys.path[0]``,
so ``gangsim`` is whichever tree ``PYTHONPATH`` names — the working tree or the ``--baseline``
worktree. It calls gangsim's own entry point (``gangsim.cli.main``, and leaves as the console
script does: ``gangsim.cli.exit_now`` where the tree has it) after wrapping three functions of
``gangsim.pipeline`` with a clock: ``load`` (read + decode the trace, importers included),
``replay_policy`` (the replay) and ``build_report`` (the report tables).
The wrappers return what they wrap, so stdout and ``--out`` are byte-identical to ``gangsim``'s.
On exit one line on stderr: ``gangsim-bench: phases {JSON}`` with the seconds of each phase seen
(a tree whose pipeline has no such function simply reports fewer phases) and ``startup_s``,
interpreter start to gangsim imported. While replaying, one line per simulated day,
``gangsim-bench: sim-day N at W s``, so a case stopped by its timeout says how far it got.
"""

from __future__ import annotations

import inspect
import sys
import time

T0 = time.perf_counter()
PREFIX = "gangsim-bench:"
DAY_MS = 86_400_000


def _timed(module: object, name: str, phase: str, phases: dict[str, float], wrap_kwargs=None) -> None:
    inner = getattr(module, name, None)
    if inner is None:
        return

    def timed(*args, **kwargs):
        if wrap_kwargs is not None:
            kwargs = wrap_kwargs(inner, kwargs)
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            phases[phase] = phases.get(phase, 0.0) + time.perf_counter() - start

    setattr(module, name, timed)


def _with_heartbeat(inner, kwargs: dict) -> dict:
    """Add a ``progress`` callback printing each simulated day reached, unless one is given (a
    progress bar) or this tree's replay takes none."""
    if kwargs.get("progress") is not None or "progress" not in inspect.signature(inner).parameters:
        return kwargs
    next_day = [DAY_MS]

    def progress(now_ms: int, _until: int, _bound: int, _pending: int) -> None:
        if now_ms >= next_day[0]:
            day = now_ms // DAY_MS
            sys.stderr.write(f"{PREFIX} sim-day {day} at {time.perf_counter() - T0:.1f} s\n")
            sys.stderr.flush()
            next_day[0] = (day + 1) * DAY_MS

    return {**kwargs, "progress": progress}


def main(argv: list[str]) -> None:
    import orjson

    from gangsim import cli, pipeline

    phases: dict[str, float] = {"startup_s": time.perf_counter() - T0}
    _timed(pipeline, "load", "load_s", phases)
    _timed(pipeline, "replay_policy", "replay_s", phases, _with_heartbeat)
    _timed(pipeline, "build_report", "report_s", phases)
    sys.argv = ["gangsim", *argv]
    code: object = 0
    try:
        cli.main()
    except SystemExit as exc:
        code = exc.code
    finally:
        phases["total_s"] = time.perf_counter() - T0
        sys.stderr.write(f"{PREFIX} phases {orjson.dumps(phases).decode()}\n")
        sys.stderr.flush()
    # leave as the console script does: a tree with ``cli.exit_now`` skips the teardown
    exit_now = getattr(cli, "exit_now", None)
    if exit_now is not None:
        exit_now(code)
    sys.exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
