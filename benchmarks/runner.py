"""One benchmark process: wall time, peak RSS and CPU time of that process alone, and a timeout.

The child runs in its own session with stdout and stderr in files (no pipe can fill up and stall
it); the parent polls ``os.wait4`` on the child's pid, which gives the resource usage of that child
only (``RUSAGE_CHILDREN`` would be the maximum over every child waited for so far), like
``/usr/bin/time``. On timeout the child's process group gets SIGTERM, then SIGKILL after
:data:`GRACE_S`; the row says how far it got (the last ``sim-day`` line of benchmarks/driver.py).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

GRACE_S = 5.0
POLL_S = 0.05
_SIM_DAY = re.compile(rb"^gangsim-bench: sim-day (\d+) at ", re.M)
_PHASES = re.compile(rb"^gangsim-bench: phases (\{.*\})$", re.M)


@dataclass
class Finished:
    """What one child did: ``status`` ``ok``, ``failed`` (non-zero exit) or ``timeout``."""

    status: str
    returncode: int | None
    wall_s: float
    peak_rss_mib: float
    cpu_s: float
    stdout: bytes
    stderr: bytes
    phases: dict = field(default_factory=dict)
    sim_day: int | None = None

    @property
    def cores_used(self) -> float | None:
        """CPU time over wall time: 1.0 is one core busy the whole time (Polars' threads count)."""
        return round(self.cpu_s / self.wall_s, 2) if self.wall_s > 0 else None


def run(argv: list[str], *, env: dict[str, str] | None = None, cwd: str | Path | None = None, timeout_s: float | None = None) -> Finished:
    """Run ``argv`` to completion or until ``timeout_s`` seconds of wall time have passed."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=cwd, start_new_session=True)
        status, code, usage = "ok", None, None
        deadline = None if timeout_s is None else start + timeout_s
        try:
            while True:
                pid, wait_status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if deadline is not None and time.perf_counter() >= deadline:
                    status = "timeout"
                    usage, wait_status = _stop(proc.pid)
                    break
                time.sleep(POLL_S)
        except BaseException:  # Ctrl-C reaches only this process (the child has its own session)
            try:
                _stop(proc.pid)
            except ChildProcessError:  # reaped already
                pass
            proc.returncode = -1
            raise
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(wait_status)  # reaped by wait4: tell Popen
        if status == "ok":
            code = proc.returncode
            status = "ok" if code == 0 else "failed"
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    days = _SIM_DAY.findall(stderr)
    phases = _PHASES.findall(stderr)
    return Finished(
        status=status, returncode=code, wall_s=wall, peak_rss_mib=usage.ru_maxrss / 1024, cpu_s=usage.ru_utime + usage.ru_stime,
        stdout=stdout, stderr=stderr, phases=orjson.loads(phases[-1]) if phases else {}, sim_day=int(days[-1]) if days else None,
    )  # fmt: skip


def _stop(pid: int):
    """SIGTERM to the child's process group (its own session: nothing else is in it), SIGKILL
    after GRACE_S; the reaped child's (rusage, status)."""
    for sig, wait in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, None)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            pass
        end = None if wait is None else time.perf_counter() + wait
        while end is None or time.perf_counter() < end:
            done, wait_status, usage = os.wait4(pid, 0 if end is None else os.WNOHANG)
            if done:
                return usage, wait_status
            time.sleep(POLL_S)
    raise AssertionError("unreachable: SIGKILL is waited for without a deadline")
