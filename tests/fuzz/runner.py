"""Run a fuzz case through the CLI in-process and classify the outcome.

A case runs in a child process (``Sandbox``) that keeps running cases until one exceeds the time
limit; then the child is killed (a hang) and a new one started. The child calls
``typer.testing.CliRunner().invoke(gangsim.cli.app, args, standalone_mode=False)`` and maps
exceptions to exit codes exactly as ``gangsim.cli.main`` does (a GangsimError or a usage error:
2, ``typer.Abort`` / ``KeyboardInterrupt``: 130, anything else: 3 with a traceback), so a crash
is seen as the user would see it. Its address space is capped (``MEMORY_LIMIT``) so that an
input asking for 10**8 pods becomes a MemoryError (exit 3) rather than an OOM of the machine.

Outcome classes (``Outcome.failure``, None when fine):

* ``exit3:<Exception>``  an uncaught exception (what ``gangsim`` prints as an internal error);
* ``exit130:<cause>``    ``typer.Abort`` without an interrupt (click turns EOFError into one);
* ``traceback``          "Traceback (most recent call last)" in the output with exit 0/1/2;
* ``hang``               no answer within the time limit;
* ``long-line``          a stderr line (or a ``validate`` error finding) longer than 300 characters;
* ``exit<N>``            any other exit code than 0, 1, 2.

For ``import`` cases that exit 0, the written trace is then replayed (``run --horizon 1h``);
a failure there is classified the same way, prefixed ``roundtrip-``; ``roundtrip-rejected``
(import accepted, run says exit 2) is a failure too: whatever ``import`` writes, ``run`` accepts.
Notes also count exit-2 errors that are not one line or do not name the input file.
"""

from __future__ import annotations

import multiprocessing as mp
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.fuzz.mutate import HORIZON, Case, make_case

TIME_LIMIT_S = 60.0
MAX_LINE = 300
MEMORY_LIMIT = 6 * 2**30


@dataclass
class Outcome:
    seed: int
    target: str
    exit_code: int
    failure: str | None
    last_line: str
    longest_line: int
    seconds: float
    notes: list[str] = field(default_factory=list)
    description: str = ""
    detail: str = ""  # exit 3: the innermost frame and the message; long-line: the line's start

    def report(self) -> str:
        family = self.description.split(" family=", 1)[1].split(" ", 1)[0] if " family=" in self.description else "all"
        replay = f"python -m benchmarks fuzz --replay {self.seed}" + (f" --family {family}" if family != "all" else "")
        return (
            f"{self.failure} (exit {self.exit_code}, {self.seconds:.1f}s): {self.description}\n"
            f"    last output line: {self.last_line[:300]!r}\n"
            + (f"    detail: {self.detail[:300]!r}\n" if self.detail else "")
            + f"    replay: {replay}"
        )

    def signature(self) -> str:
        """The failure class: failure, target and the last line with paths, numbers and quoted
        values blanked (so one bug found by many seeds counts once)."""
        line = re.sub(r"/tmp/gangsim-fuzz-[^/ :]+/", "", self.detail if self.failure in ("long-line", "exit3") or (self.failure or "").startswith(("exit3", "roundtrip-exit3")) else self.last_line)
        line = re.sub(r"(\"[^\"]*\"|'[^']*'|\d+)", "_", line)
        return f"{self.failure} {self.target}: {line[:90]}"


def _invoke(args: list[str]) -> tuple[int, str, str, str | None, str]:
    """(exit code as `gangsim` would give it, stdout, stderr, exception class or None)."""
    import typer
    from typer.testing import CliRunner

    from gangsim.cli import _CLICK_EXCEPTION, app
    from gangsim.errors import GangsimError

    result = CliRunner().invoke(app, args, standalone_mode=False)
    exc = result.exception
    try:
        stdout = result.stdout
    except ValueError:
        stdout = ""
    try:
        stderr = result.stderr
    except ValueError:
        stderr = ""
    if exc is None:
        code = result.return_value if isinstance(result.return_value, int) else result.exit_code
        return code, stdout, stderr, None, ""
    if isinstance(exc, SystemExit):
        return result.exit_code, stdout, stderr, None, ""
    if isinstance(exc, GangsimError):
        return 2, stdout, stderr + f"gangsim: error: {exc}\n", None, ""
    if isinstance(exc, typer.Abort):
        cause = exc.__cause__ or exc.__context__
        detail = f"{type(cause).__name__}: {cause}" if cause is not None else ""
        return 130, stdout, stderr + "gangsim: aborted\n", type(cause).__name__ if cause is not None else "Abort", detail
    if isinstance(exc, _CLICK_EXCEPTION):
        return 2, stdout, stderr + f"gangsim: error: {exc.format_message()}\n", None, ""
    import traceback

    text = "".join(traceback.format_exception(exc))
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    where = f"{frame.filename.split('/gangsim/', 1)[-1]}:{frame.lineno} {frame.name}"
    detail = f"{where}: {type(exc).__name__}: {str(exc)[:200]}"
    return 3, stdout, stderr + text + f"gangsim: internal error ({type(exc).__name__}); this is a bug\n", type(exc).__name__, detail


def _classify(args: list[str], code: int, stdout: str, stderr: str, exc: str | None, detail: str, prefix: str = "") -> tuple[str | None, str, int, str]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    checked = list(lines)
    if args and args[0] == "validate":  # its findings: errors only (warnings carry long advice by design)
        checked += [line for line in stdout.splitlines() if ": error: " in line]
    longest = max((len(line) for line in checked), default=0)
    last = lines[-1] if lines else (stdout.splitlines()[-1] if stdout.strip() else "")
    if code == 3:
        failure = f"exit3:{exc}"
    elif code == 130:
        failure = f"exit130:{exc}"
    elif code not in (0, 1, 2):
        failure = f"exit{code}"
    elif "Traceback (most recent call last)" in stdout or "Traceback (most recent call last)" in stderr:
        failure = "traceback"
    elif longest > MAX_LINE:
        failure = "long-line"
        detail = next(line for line in checked if len(line) == longest)[:200] + f"… ({longest:,} characters)"
    else:
        failure = None
    return (prefix + failure if failure else None), last, longest, detail


def run_case(case: Case) -> Outcome:
    """Run ``case`` here (no time limit: see ``Sandbox``)."""
    scratch = Path(tempfile.mkdtemp(prefix="gangsim-fuzz-"))
    started = time.perf_counter()
    try:
        for name, data in case.files.items():
            (scratch / name).write_bytes(data)
        args = [a.replace("{dir}", str(scratch)) for a in case.args]
        out = scratch / "imported.jsonl"
        if case.target.startswith("import:"):
            args += ["-o", str(out), "--quiet"]
        code, stdout, stderr, exc, detail = _invoke(args)
        failure, last, longest, detail = _classify(args, code, stdout, stderr, exc, detail)
        notes = []
        if code == 2 and failure is None:
            errors = [line for line in stderr.splitlines() if line.strip()]
            if len(errors) != 1:
                notes.append("exit2-not-one-line")
            elif not any(name.split(".")[0] in errors[0] for name in case.files):
                notes.append("exit2-no-file-named")
        if failure is None and code == 0 and case.target.startswith("import:"):
            rargs = ["run", str(out), "--format", "json", "--horizon", HORIZON, "--no-progress"]
            rcode, rstdout, rstderr, rexc, rdetail = _invoke(rargs)
            failure, rlast, rlongest, rdetail = _classify(rargs, rcode, rstdout, rstderr, rexc, rdetail, prefix="roundtrip-")
            if failure or rcode == 2:
                code, last, longest, detail = rcode, rlast, max(longest, rlongest), rdetail
            if failure is None and rcode == 2:
                failure = "roundtrip-rejected"  # import accepted what run refuses (issue 17 item 1)
        return Outcome(case.seed, case.target, code, failure, last, longest, time.perf_counter() - started, notes, case.describe(), detail)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _child(conn, memory_limit: int | None) -> None:
    if memory_limit:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    import gangsim.cli  # noqa: F401 - imported once, before the first case is timed

    while True:
        try:
            seed, family = conn.recv()
        except EOFError:
            return
        conn.send(run_case(make_case(seed, family)))


class Sandbox:
    """A child process running cases with a time limit; restarted after a hang or a crash."""

    def __init__(self, time_limit: float = TIME_LIMIT_S, memory_limit: int | None = MEMORY_LIMIT):
        self.time_limit = time_limit
        self.memory_limit = memory_limit
        # spawn, not fork: a pytest worker that has already run Polars (or numpy's BLAS) has
        # thread pools, and a forked child can deadlock on their locks (every case then "hangs")
        self.ctx = mp.get_context("spawn")
        self.proc = None
        self.conn = None

    def _start(self) -> None:
        self.conn, theirs = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_child, args=(theirs, self.memory_limit), daemon=True)
        self.proc.start()
        theirs.close()

    def _stop(self) -> None:
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join()
            self.conn.close()
        self.proc = self.conn = None

    def run(self, seed: int, family: str | None = None) -> Outcome:
        if self.proc is None or not self.proc.is_alive():
            self._start()
        started = time.perf_counter()
        self.conn.send((seed, family))
        try:
            ready = self.conn.poll(self.time_limit)
            outcome = self.conn.recv() if ready else None
        except (EOFError, OSError):
            ready, outcome = True, None
        if outcome is not None:
            return outcome
        case = make_case(seed, family)
        self._stop()
        elapsed = time.perf_counter() - started
        if not ready:
            return Outcome(seed, case.target, -1, "hang", f"no answer in {self.time_limit:.0f}s", 0, elapsed, [], case.describe())
        return Outcome(seed, case.target, -1, "child-died", "the fuzz child process died (killed by a signal?)", 0, elapsed, [], case.describe())

    def close(self) -> None:
        self._stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
