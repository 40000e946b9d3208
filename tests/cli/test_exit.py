"""How the console script leaves (``gangsim.cli.console`` / ``exit_now``): the same bytes on stdout
and stderr and the same exit code as the interpreter's full teardown (``GANGSIM_FULL_EXIT=1``),
for a success, a --fail-if that held, bad input and a usage error."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gangsim import cli

ROOT = Path(__file__).resolve().parents[2]
DEADLOCK = str(ROOT / "traces" / "deadlock.yaml")
MIXED = str(ROOT / "traces" / "mixed-day.yaml")


def _gangsim(args: list[str], *, full: bool, tmp_path: Path) -> tuple[int, bytes, bytes]:
    """``python -m gangsim.cli ARGS`` (the console script's way out), stdout to a file, as a shell
    redirection does (a file is block-buffered: nothing may be left in the buffer; so buffered,
    whatever ``PYTHONUNBUFFERED`` this process has)."""
    env = {k: v for k, v in os.environ.items() if k not in (cli.FULL_EXIT, "PYTHONUNBUFFERED")}
    if full:
        env[cli.FULL_EXIT] = "1"
    out = tmp_path / f"stdout-{int(full)}"
    with out.open("wb") as fh:
        res = subprocess.run([sys.executable, "-m", "gangsim.cli", *args], stdout=fh, stderr=subprocess.PIPE, env=env)
    return res.returncode, out.read_bytes(), res.stderr


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["run", MIXED, "--format", "json"], 0),
        (["run", DEADLOCK, "--policy", "pod", "--format", "markdown"], 0),
        (["diff", DEADLOCK, "-p", "gang", "-p", "pod", "--horizon", "75m", "--fail-if", "pod.gangs.started < gang.gangs.started"], 1),
        (["run", str(ROOT / "traces" / "no-such-trace.yaml")], 2),
        (["run", DEADLOCK, "--policy", "nope"], 2),
        (["run", DEADLOCK, "--no-such-option"], 2),
    ],
)
def test_console_exit_matches_full_teardown(tmp_path, args, code):
    fast = _gangsim(args, full=False, tmp_path=tmp_path)
    full = _gangsim(args, full=True, tmp_path=tmp_path)
    assert fast[0] == code
    assert fast == full
    if code == 0:
        assert fast[1].endswith(b"\n") and len(fast[1]) > 200  # the whole report, flushed


def test_exit_now_codes(monkeypatch):
    left: list[int] = []
    monkeypatch.delenv(cli.FULL_EXIT, raising=False)
    monkeypatch.setattr(cli.os, "_exit", left.append)
    cli.exit_now(None)
    cli.exit_now(2)
    assert left == [0, 2]
    with pytest.raises(SystemExit) as exc:  # a message: Python prints it and exits 1, as before
        cli.exit_now("gangsim: bye")
    assert exc.value.code == "gangsim: bye"
    monkeypatch.setenv(cli.FULL_EXIT, "1")
    with pytest.raises(SystemExit) as exc:
        cli.exit_now(3)
    assert exc.value.code == 3 and left == [0, 2]


def test_a_failing_flush_takes_the_normal_way_out(monkeypatch):
    class Closed:
        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")

    left: list[int] = []
    monkeypatch.delenv(cli.FULL_EXIT, raising=False)
    monkeypatch.setattr(cli.os, "_exit", left.append)
    monkeypatch.setattr(cli.sys, "stdout", Closed())
    with pytest.raises(SystemExit) as exc:
        cli.exit_now(0)
    assert exc.value.code == 0 and left == []


@pytest.mark.parametrize("hook", ["getprofile", "gettrace"])
def test_a_profiled_or_traced_process_takes_the_normal_way_out(monkeypatch, hook):
    """cProfile and coverage write their results at exit: ``os._exit`` would lose them."""
    left: list[int] = []
    monkeypatch.delenv(cli.FULL_EXIT, raising=False)
    monkeypatch.setattr(cli.os, "_exit", left.append)
    monkeypatch.setattr(cli.sys, hook, lambda: object())
    with pytest.raises(SystemExit) as exc:
        cli.exit_now(2)
    assert exc.value.code == 2 and left == []


def test_cprofile_writes_its_stats(tmp_path):
    stats = tmp_path / "run.prof"
    env = {k: v for k, v in os.environ.items() if k != cli.FULL_EXIT}
    res = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(stats), "-m", "gangsim.cli", "run", DEADLOCK, "--format", "json"], capture_output=True, env=env)
    assert res.returncode == 0, res.stderr
    assert stats.stat().st_size > 1000
