from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import gangsim.report.write as write_mod
from gangsim.errors import OutputError
from gangsim.report import TABLE_NAMES, build_report, render_json, write_report
from gangsim.report.write import report_files

from .logs import empty_log, small_log

FILES = sorted(
    [f"{t}.parquet" for t in ("gangs", "pods", "victims", "timeline", "events")]
    + [f"{t}.csv" for t in ("gangs", "pods", "victims", "timeline", "events")]
    + ["summary.json"]
)


def snapshot(directory: Path) -> dict[str, bytes]:
    """What a reader sees at the top of ``directory``: each name that resolves to a file, its bytes."""
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def listing(directory: Path) -> list[str]:
    """The top-level names, without gangsim's own ``.gangsim`` folder."""
    return sorted(n for n in os.listdir(directory) if n != write_mod.META_DIR)


class Boom(RuntimeError):
    pass


def test_writes_every_file_and_nothing_else(tmp_path):
    write_report(build_report(small_log()), tmp_path / "out")
    assert listing(tmp_path / "out") == FILES == sorted(report_files())
    assert os.listdir(tmp_path) == ["out"]  # nothing outside DIR
    # inside .gangsim: the pointer and exactly one generation
    meta = tmp_path / "out" / ".gangsim"
    assert sorted(os.listdir(meta)) == sorted(["current", os.readlink(meta / "current")])


def test_summary_json_is_render_json(tmp_path):
    report = build_report(small_log())
    write_report(report, str(tmp_path / "out"))  # str paths work too
    assert (tmp_path / "out" / "summary.json").read_bytes() == render_json(report)


@pytest.mark.parametrize("make", [small_log, empty_log], ids=["small", "empty"])
def test_parquet_round_trips_with_dtypes(tmp_path, make):
    report = build_report(make())
    write_report(report, tmp_path / "out")
    for name in TABLE_NAMES:
        back = pl.read_parquet(tmp_path / "out" / f"{name}.parquet")
        assert back.schema == report.tables[name].schema, name
        assert back.equals(report.tables[name]), name


def test_csv_nulls_empty_and_floats_plain(tmp_path):
    write_report(build_report(small_log()), tmp_path / "out")
    pods = (tmp_path / "out" / "pods.csv").read_text().splitlines()
    assert pods[0] == (
        "pod,attempt,gang,namespace,node,gpus,priority,created_s,bound_s,ended_s,end_reason,"
        "scheduling_attempts,waiting_reason,milli_cpu,memory_bytes,devices,gpu_milli"
    )
    # a null is empty; an empty string is "" (so the two survive a round trip)
    assert pods[4] == 'ml/train-b-1,0,ml/train-b,ml,n4,4,10,0.0,250.0,,"",3,"",0,0,"",0'
    assert pods[6] == 'ml/train-b-0,1,ml/train-b,ml,"",4,10,330.0,,,"",1,0/4 nodes are available: 4 Insufficient nvidia.com/gpu.,0,0,"",0'

    victims = (tmp_path / "out" / "victims.csv").read_text().splitlines()
    assert victims == [
        "t_s,victim_pod,victim_attempt,victim_gang,victim_priority,node,preemptor,preemptor_priority,gpus,lost_gpu_s,in_vain,ended_s",
        "300.0,ml/train-b-0,0,ml/train-b,10,n3,ml/urgent,1000,4,200.0,false,330.0",
    ]
    events = (tmp_path / "out" / "events.csv").read_text().splitlines()
    assert events[1] == '0.0,Pod,ml/train-a-0,"",Created,""'



@pytest.mark.parametrize("make", [small_log, empty_log], ids=["small", "empty"])
def test_bytes_identical_across_builds_and_writes(tmp_path, make):
    write_report(build_report(make()), tmp_path / "a")
    write_report(build_report(make()), tmp_path / "b")
    first, second = snapshot(tmp_path / "a"), snapshot(tmp_path / "b")
    assert list(first) == FILES
    assert first == second


def test_out_dir_is_a_file(tmp_path):
    target = tmp_path / "report.txt"
    target.write_text("mine")
    with pytest.raises(OutputError, match=r"^cannot write report to .*report.txt: \[Errno 20\] Not a directory$"):
        write_report(build_report(small_log()), target)
    assert target.read_text() == "mine"
    assert os.listdir(tmp_path) == ["report.txt"]


def test_parent_is_a_file(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(OutputError, match=r"f/out: \[Errno 20\] Not a directory"):
        write_report(build_report(small_log()), tmp_path / "f" / "out")
    assert os.listdir(tmp_path) == ["f"]


def test_creates_missing_parents(tmp_path):
    write_report(build_report(small_log()), tmp_path / "x" / "y" / "out")
    assert listing(tmp_path / "x" / "y" / "out") == FILES


def test_overwrites_an_earlier_report_and_keeps_other_files(tmp_path):
    out = tmp_path / "out"
    write_report(build_report(small_log()), out)
    (out / "notes.md").write_text("keep me")
    write_report(build_report(empty_log()), out)
    assert listing(out) == sorted([*FILES, "notes.md"])
    assert (out / "summary.json").read_bytes() == render_json(build_report(empty_log()))
    assert (out / "notes.md").read_text() == "keep me"
    assert os.listdir(tmp_path) == ["out"]
    assert len(os.listdir(out / ".gangsim")) == 2  # the old generation is gone


def test_extra_files_are_kept_by_a_later_write_without_them(tmp_path):
    out = tmp_path / "out"
    write_report(build_report(small_log()), out, extra={"a.png": b"png"})
    write_report(build_report(empty_log()), out)
    assert snapshot(out)["a.png"] == b"png"
    assert snapshot(out)["summary.json"] == render_json(build_report(empty_log()))


def test_adopts_a_report_written_as_plain_files(tmp_path):
    """A DIR holding plain files (an older gangsim, or by hand) becomes links, bytes unchanged first."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_bytes(b"old")
    (out / "gangs.csv").write_bytes(b"old csv")
    (out / "notes.md").write_text("keep me")
    write_report(build_report(empty_log()), out)
    assert (out / "summary.json").is_symlink() and (out / "summary.json").read_bytes() == render_json(build_report(empty_log()))
    assert not (out / "notes.md").is_symlink() and (out / "notes.md").read_text() == "keep me"
    assert listing(out) == sorted([*FILES, "notes.md"])


def test_a_stale_staging_folder_is_removed_by_the_next_run(tmp_path):
    out = tmp_path / "out"
    write_report(build_report(small_log()), out)
    stale = out / ".gangsim" / "0123456789abcdef"
    stale.mkdir()
    (stale / "gangs.csv").write_text("half")
    (out / ".gangsim" / "current.0123456789abcdef").symlink_to("0123456789abcdef")
    write_report(build_report(empty_log()), out)
    meta = out / ".gangsim"
    assert sorted(os.listdir(meta)) == sorted(["current", os.readlink(meta / "current")])


def test_a_directory_in_the_way_is_an_output_error(tmp_path):
    (tmp_path / "out" / "summary.json").mkdir(parents=True)
    with pytest.raises(OutputError, match="summary.json exists and is a directory"):
        write_report(build_report(small_log()), tmp_path / "out")
    assert os.listdir(tmp_path / "out") == ["summary.json"]


# --- a failure or a kill at every step ---------------------------------------------------------


class Killed(BaseException):
    """Stands for SIGKILL: raised at a step with ``_abort`` disabled, so no cleanup runs."""


def count_steps(monkeypatch, run) -> list[tuple[str, str]]:
    steps: list[tuple[str, str]] = []
    monkeypatch.setattr(write_mod, "_step", lambda kind, path: steps.append((kind, path)))
    run()
    monkeypatch.undo()
    return steps


def fail_at(monkeypatch, k: int, exc: BaseException) -> None:
    calls = [0]

    def step(kind, path):
        calls[0] += 1
        if calls[0] == k:
            raise exc

    monkeypatch.setattr(write_mod, "_step", step)


SCENARIOS = ["new-dir", "over-report", "over-plain-files"]


def prepare(tmp_path: Path, scenario: str) -> Path:
    out = tmp_path / "out"
    if scenario == "over-report":
        write_report(build_report(small_log()), out)
        (out / "notes.md").write_text("keep me")
    elif scenario == "over-plain-files":  # written by the old design: plain files
        write_report(build_report(small_log()), tmp_path / "tmp")
        out.mkdir()
        for name, data in snapshot(tmp_path / "tmp").items():
            (out / name).write_bytes(data)
        shutil.rmtree(tmp_path / "tmp")
    return out


def new_report_snapshot(tmp_path: Path, scenario: str) -> dict[str, bytes]:
    ref = tmp_path.parent / f"{tmp_path.name}-ref"
    out = prepare(ref, scenario)
    write_report(build_report(empty_log()), out)
    result = snapshot(out)
    shutil.rmtree(ref)
    return result


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_step_is_covered(tmp_path, monkeypatch, scenario):
    """The steps the parametrised tests below fail at, and that there are as many as expected."""
    out = prepare(tmp_path, scenario)
    kinds = [k for k, _ in count_steps(monkeypatch, lambda: write_report(build_report(empty_log()), out))]
    assert kinds.count("write") == len(FILES)
    assert "symlink" in kinds and "rename" in kinds
    assert len(kinds) <= MAX_STEPS


MAX_STEPS = 60  # the parametrised tests below try steps 1 … MAX_STEPS (the extra ones succeed)


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("k", range(1, MAX_STEPS + 1))
def test_a_kill_at_any_step_leaves_the_previous_or_the_new_report(tmp_path, monkeypatch, scenario, k):
    out = prepare(tmp_path, scenario)
    before = snapshot(out) if out.exists() else {}
    after = new_report_snapshot(tmp_path, scenario)
    monkeypatch.setattr(write_mod, "_abort", lambda undo: None)  # a kill runs no cleanup
    fail_at(monkeypatch, k, Killed())
    try:
        write_report(build_report(empty_log()), out)
    except Killed:
        pass
    seen = snapshot(out) if out.exists() else {}
    assert seen in (before, after)
    assert sorted(os.listdir(tmp_path)) == ["out"] or not out.exists()  # no litter outside DIR
    # the next run cleans up and writes the new report
    monkeypatch.setattr(write_mod, "_step", lambda kind, path: None)
    write_report(build_report(empty_log()), out)
    assert snapshot(out) == after
    meta = out / ".gangsim"
    assert sorted(os.listdir(meta)) == sorted(["current", os.readlink(meta / "current")])
    assert sorted(os.listdir(tmp_path)) == ["out"]


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("k", range(1, MAX_STEPS + 1))
def test_a_failure_at_any_step_leaves_dir_as_it_was(tmp_path, monkeypatch, scenario, k):
    out = prepare(tmp_path, scenario)
    before = snapshot(out) if out.exists() else None
    after = new_report_snapshot(tmp_path, scenario)
    fail_at(monkeypatch, k, OSError(28, "No space left on device"))
    try:
        write_report(build_report(empty_log()), out)
    except OutputError as exc:
        assert str(exc) == f"cannot write report to {out}: [Errno 28] No space left on device"
        if before is None:
            assert os.listdir(tmp_path) == []  # DIR created by this call is removed again
        else:
            assert snapshot(out) == before
            assert sorted(os.listdir(tmp_path)) == ["out"]
    else:  # k is past the switch (or past the last step): the new report is complete
        assert snapshot(out) == after
        assert sorted(os.listdir(tmp_path)) == ["out"]


def test_ctrl_c_before_the_switch_leaves_dir_as_it_was(tmp_path, monkeypatch):
    out = prepare(tmp_path, "over-report")
    before = snapshot(out)
    fail_at(monkeypatch, 5, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        write_report(build_report(empty_log()), out)
    assert snapshot(out) == before
    meta = out / ".gangsim"
    assert sorted(os.listdir(meta)) == sorted(["current", os.readlink(meta / "current")])


@pytest.mark.parametrize(
    "code, text",
    [(28, "No space left on device"), (30, "Read-only file system"), (13, "Permission denied"), (18, "Invalid cross-device link")],
)
def test_os_errors_are_one_line_output_errors(tmp_path, monkeypatch, code, text):
    out = prepare(tmp_path, "over-report")
    before = snapshot(out)

    def refuse(*args, **kwargs):
        raise OSError(code, text)

    monkeypatch.setattr(write_mod.os, "open", refuse)
    with pytest.raises(OutputError) as info:
        write_report(build_report(empty_log()), str(out) + "/")
    assert str(info.value) == f"cannot write report to {out}/: [Errno {code}] {text}"
    monkeypatch.undo()
    assert snapshot(out) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permission bits")
def test_a_read_only_dir_is_an_output_error(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o555)
    try:
        with pytest.raises(OutputError, match=r"\[Errno 13\] Permission denied"):
            write_report(build_report(small_log()), out)
        assert os.listdir(out) == []
    finally:
        out.chmod(0o755)


@pytest.fixture
def mount_point(tmp_path):
    """A tmpfs mounted on ``tmp_path/mnt`` (root on Linux only; skipped elsewhere)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root on Linux")
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_out_on_a_mount_point(tmp_path, mount_point):
    assert os.stat(mount_point).st_dev != os.stat(tmp_path).st_dev
    write_report(build_report(small_log()), mount_point)
    write_report(build_report(empty_log()), mount_point)  # a second run replaces it: still no EXDEV
    assert listing(mount_point) == FILES
    assert snapshot(mount_point)["summary.json"] == render_json(build_report(empty_log()))
    assert sorted(os.listdir(tmp_path)) == ["mnt"]  # no litter next to the mount point


def test_disk_full_on_a_small_tmpfs(tmp_path, mount_point):
    """A real ENOSPC: fill the tmpfs so the report cannot be staged."""
    write_report(build_report(small_log()), mount_point)
    before = snapshot(mount_point)
    filler = mount_point / "filler"
    with open(filler, "wb") as f:
        with contextlib.suppress(OSError):
            while True:
                f.write(b"\0" * (1 << 20))
                f.flush()
    # leave a few bytes, not enough for a report
    size = filler.stat().st_size
    os.truncate(filler, size - 512)
    with pytest.raises(OutputError, match=r"\[Errno 28\] No space left on device"):
        write_report(build_report(small_log()), mount_point)
    assert {k: v for k, v in snapshot(mount_point).items() if k != "filler"} == {k: v for k, v in before.items()}
