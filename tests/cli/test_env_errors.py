"""Environment errors writing ``--out``: exit 2, one line naming the path and the OS error, no
traceback, DIR unchanged (issue 17, item 5)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import gangsim.report.write as write_mod
from gangsim import cli

ROOT = Path(__file__).resolve().parents[2]
DEADLOCK = str(ROOT / "traces" / "deadlock.yaml")


def gangsim(capsys, *args: str) -> tuple[int, str, str]:
    """``main()`` in process (so monkeypatches apply): exit code, stdout, stderr."""
    old = sys.argv
    sys.argv = ["gangsim", *args]
    try:
        with pytest.raises(SystemExit) as info:
            cli.main()
    finally:
        sys.argv = old
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


def visible(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


@pytest.mark.parametrize(
    "code, text",
    [(28, "No space left on device"), (30, "Read-only file system"), (13, "Permission denied"), (18, "Invalid cross-device link")],
)
def test_os_errors_exit_2_with_one_line(tmp_path, monkeypatch, capsys, code, text):
    out = tmp_path / "out"
    assert gangsim(capsys, "run", DEADLOCK, "--out", str(out), "--format", "json")[0] == 0
    before = visible(out)

    def refuse(kind, path):
        if kind == "write":
            raise OSError(code, text)

    monkeypatch.setattr(write_mod, "_step", refuse)
    rc, _, err = gangsim(capsys, "run", DEADLOCK, "--policy", "pod", "--out", f"{out}/", "--format", "json")
    assert rc == 2
    assert err == f"gangsim: error: cannot write report to {out}: [Errno {code}] {text}\n"  # the CLI's Path drops the "/"
    assert visible(out) == before


def test_out_is_a_file(tmp_path, capsys):
    target = tmp_path / "report.txt"
    target.write_text("mine")
    rc, _, err = gangsim(capsys, "run", DEADLOCK, "--out", str(target), "--format", "json")
    assert (rc, err) == (2, f"gangsim: error: cannot write report to {target}: [Errno 20] Not a directory\n")
    assert target.read_text() == "mine"


def test_parent_is_a_file(tmp_path, capsys):
    (tmp_path / "f").write_text("")
    rc, _, err = gangsim(capsys, "run", DEADLOCK, "--out", str(tmp_path / "f" / "out"), "--format", "json")
    assert (rc, err) == (2, f"gangsim: error: cannot write report to {tmp_path / 'f' / 'out'}: [Errno 20] Not a directory\n")


def test_diff_out_errors_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(write_mod, "_step", lambda kind, path: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    out = tmp_path / "d"
    rc, _, err = gangsim(capsys, "diff", DEADLOCK, "--policy", "gang", "--policy", "pod", "--out", str(out), "--no-progress")
    assert (rc, err) == (2, f"gangsim: error: cannot write report to {out}: [Errno 28] No space left on device\n")
    assert not out.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permission bits")
def test_permission_denied_for_real(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    res = subprocess.run([sys.executable, "-m", "gangsim.cli", "run", DEADLOCK, "--out", str(locked / "out"), "--format", "json"], capture_output=True, text=True)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr == f"gangsim: error: cannot write report to {locked / 'out'}: [Errno 13] Permission denied\n"


def test_read_only_mount_for_real(tmp_path):
    """A tmpfs remounted read-only (root on Linux; skipped elsewhere): exit 2, one line, no traceback."""
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root on Linux")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mnt)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        first = subprocess.run([sys.executable, "-m", "gangsim.cli", "run", DEADLOCK, "--out", str(mnt), "--format", "json"], capture_output=True, text=True)
        assert first.returncode == 0, first.stderr  # --out on a mount point works
        before = visible(mnt)
        if subprocess.run(["mount", "-o", "remount,ro", str(mnt)], capture_output=True).returncode != 0:
            pytest.skip("cannot remount read-only here")
        res = subprocess.run([sys.executable, "-m", "gangsim.cli", "run", DEADLOCK, "--policy", "pod", "--out", str(mnt), "--format", "json"], capture_output=True, text=True)
        assert res.returncode == 2
        assert res.stderr == f"gangsim: error: cannot write report to {mnt}: [Errno 30] Read-only file system\n"
        assert visible(mnt) == before
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
