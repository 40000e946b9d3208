from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

import gangsim.report.write as write_mod
from gangsim.errors import InputError
from gangsim.report import TABLE_NAMES, build_report, render_json, write_report
from gangsim.report.write import report_files

from .logs import empty_log, small_log

FILES = sorted(
    [f"{t}.parquet" for t in ("gangs", "pods", "victims", "timeline", "events")]
    + [f"{t}.csv" for t in ("gangs", "pods", "victims", "timeline", "events")]
    + ["summary.json"]
)


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


class Boom(RuntimeError):
    pass


def test_writes_every_file_and_nothing_else(tmp_path):
    write_report(build_report(small_log()), tmp_path / "out")
    assert sorted(os.listdir(tmp_path / "out")) == FILES == sorted(report_files())
    assert os.listdir(tmp_path) == ["out"]  # the temporary directory is gone
    assert report_files()[-1] == "summary.json"  # moved in last: marks a complete report


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
        "scheduling_attempts,waiting_reason"
    )
    # a null is empty; an empty string is "" (so the two survive a round trip)
    assert pods[4] == 'ml/train-b-1,0,ml/train-b,ml,n4,4,10,0.0,250.0,,"",3,""'
    assert pods[6] == 'ml/train-b-0,1,ml/train-b,ml,"",4,10,330.0,,,"",1,0/4 nodes are available: 4 Insufficient nvidia.com/gpu.'

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
    with pytest.raises(InputError, match="report.txt"):
        write_report(build_report(small_log()), target)
    assert target.read_text() == "mine"
    assert os.listdir(tmp_path) == ["report.txt"]


def test_parent_is_a_file(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(InputError, match="f/out"):
        write_report(build_report(small_log()), tmp_path / "f" / "out")


def test_creates_missing_parents(tmp_path):
    write_report(build_report(small_log()), tmp_path / "x" / "y" / "out")
    assert sorted(os.listdir(tmp_path / "x" / "y" / "out")) == FILES


def test_overwrites_an_earlier_report_and_keeps_other_files(tmp_path):
    out = tmp_path / "out"
    write_report(build_report(small_log()), out)
    (out / "notes.md").write_text("keep me")
    write_report(build_report(empty_log()), out)
    assert sorted(os.listdir(out)) == sorted([*FILES, "notes.md"])
    assert (out / "summary.json").read_bytes() == render_json(build_report(empty_log()))
    assert (out / "notes.md").read_text() == "keep me"
    assert os.listdir(tmp_path) == ["out"]


def fail_on_csv(name: str):
    real = write_mod._write_csv

    def writer(frame, path):
        if path.name == name:
            raise Boom(f"disk full writing {name}")
        real(frame, path)

    return writer


def test_failure_while_writing_leaves_no_out_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(write_mod, "_write_csv", fail_on_csv("victims.csv"))
    with pytest.raises(Boom):
        write_report(build_report(small_log()), tmp_path / "out")
    assert os.listdir(tmp_path) == []  # neither out/ nor the temporary directory


def test_failure_while_writing_leaves_existing_dir_untouched(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_report(build_report(small_log()), out)
    before = snapshot(out)
    monkeypatch.setattr(write_mod, "_write_csv", fail_on_csv("timeline.csv"))
    with pytest.raises(Boom):
        write_report(build_report(empty_log()), out)
    assert snapshot(out) == before
    assert os.listdir(tmp_path) == ["out"]


def flaky_replace(monkeypatch, fail_from: int, fail_until: int | None = None) -> list[int]:
    """Make ``os.replace`` raise on calls ``fail_from`` … ``fail_until`` (1-based, inclusive)."""
    real = os.replace
    calls = [0]

    def replace(src, dst):
        calls[0] += 1
        if calls[0] >= fail_from and (fail_until is None or calls[0] <= fail_until):
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(write_mod.os, "replace", replace)
    return calls


def test_failure_while_moving_into_a_new_dir_removes_it(tmp_path, monkeypatch):
    flaky_replace(monkeypatch, fail_from=4, fail_until=4)  # 3 files moved in, the 4th fails
    with pytest.raises(OSError, match="No space left"):
        write_report(build_report(small_log()), tmp_path / "out")
    assert os.listdir(tmp_path) == []


def test_failure_while_moving_into_an_existing_dir_restores_it(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_report(build_report(small_log()), out)
    (out / "notes.md").write_text("keep me")
    before = snapshot(out)
    # each file: move the earlier one aside, move the new one in; call 7 is the 4th file's first move
    flaky_replace(monkeypatch, fail_from=7, fail_until=7)
    with pytest.raises(OSError, match="No space left"):
        write_report(build_report(empty_log()), out)
    assert snapshot(out) == before
    assert os.listdir(tmp_path) == ["out"]


def test_failed_rollback_keeps_the_earlier_files_and_says_where(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_report(build_report(small_log()), out)
    before = snapshot(out)
    flaky_replace(monkeypatch, fail_from=5)  # the commit fails, and so does every move back
    with pytest.raises(OSError) as info:
        write_report(build_report(empty_log()), out)
    (note,) = info.value.__notes__
    kept = Path(note.rsplit(" ", 1)[1])
    assert kept.parent.parent == tmp_path and kept.parent.name.startswith(".out.tmp-")
    # nothing of the earlier run is lost: each file is either still in out/ or kept aside
    recovered = {**snapshot(out), **snapshot(kept)}
    assert {name: recovered[name] for name in before} == before
