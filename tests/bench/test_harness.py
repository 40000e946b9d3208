"""The benchmark harness (benchmarks/): which cases run, the timeout, the baseline worktree, the
cache and results.json. No timing is asserted: the figures belong to the machine."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from benchmarks import __main__ as bench
from benchmarks import baseline, cases, inputs, measure, runner

ROOT = Path(__file__).resolve().parents[2]
TINY = cases.CliCase(
    "tiny", "20 nodes, 60 pods", "pod", cases.Generated("scheduling_basic", (("nodes", 20), ("pods", 60))),
    "-", cases.Target("≥ 1 pod/s", pods_per_s=1), fast=True, per=("pods", 60),
)  # fmt: skip
ISSUE16_ROWS = {"RICC-gang", "RICC-pod", "RICC-3d-out", "NASA-gang", "NASA-permit", "NASA-pod", "HPC2N-pod", "Gavel-gang", "SB-50k", "Gangs-10k"}


def _ctx(tmp_path: Path, **kw) -> measure.Context:
    return measure.Context(data=None, cache=tmp_path / "cache", timeout_s=kw.pop("timeout_s", 300), **kw)


# ---- selection -------------------------------------------------------------------------------


def test_every_row_of_issue_16_has_a_case_with_a_target():
    assert set(cases.BY_KEY) == ISSUE16_ROWS
    assert set(bench.select(["issue16"])) == ISSUE16_ROWS
    for case in cases.CLI_CASES:
        bounds = (case.target.whole_s, case.target.rss_mib, case.target.pods_per_s, case.target.ms_per_gang)
        assert any(b is not None for b in bounds), case.key


def test_default_runs_the_fast_cases_and_long_ones_only_by_name():
    default = bench.select([])
    assert {"SB-50k", "Gangs-10k", "B1", "B2", "B6"} <= set(default)
    assert not {"RICC-gang", "RICC-pod", "RICC-3d-out", "NASA-pod", "HPC2N-pod", "Gavel-gang", "B3-TAS"} & set(default)
    assert bench.select(["RICC-gang"]) == ["RICC-gang"]
    assert bench.select(["NASA-pod", "HPC2N-pod", "NASA-gang"]) == ["NASA-gang", "NASA-pod", "HPC2N-pod"]  # suite order
    assert set(bench.select(["long"])) == ISSUE16_ROWS - {"SB-50k", "Gangs-10k"} | {"B3-TAS"}


def test_b6_brings_b1_and_b7_is_both_sizes():
    assert bench.select(["B6"]) == ["B1", "B6"]
    assert bench.select(["B7"]) == ["B7a", "B7b"]


def test_an_unknown_case_is_named_and_exits_2(capsys):
    with pytest.raises(KeyError, match="'RICC':.*RICC-gang"):
        bench.select(["RICC"])
    assert bench.main(["RICC"]) == 2
    assert "unknown case 'RICC'" in capsys.readouterr().err


def test_horizon_replaces_the_case_horizon_and_out_goes_last():
    case = cases.BY_KEY["RICC-3d-out"]
    assert case.argv("swf:X", None, Path("/o")) == ["run", "swf:X", "-p", "gang", "--horizon", "3d", "--out", "/o"]
    assert case.argv("swf:X", "1d", None) == ["run", "swf:X", "-p", "gang", "--horizon", "1d"]
    assert cases.BY_KEY["HPC2N-pod"].command() == "gangsim run swf:$DATA/pwa-hpc2n-2002-head/hpc2n.swf -p pod --seed 7"
    assert cases.BY_KEY["Gavel-gang"].command().startswith("gangsim import gavel $DATA/microsoft-philly-partial/gavel-per-vc-traces-seed0 --nodes 10 -o T.jsonl")


@pytest.mark.parametrize(
    ("target", "m", "met"),
    [
        (cases.Target("", whole_s=10, rss_mib=100), {"status": "ok", "whole_s": 9.0, "peak_rss_mib": 99.0}, True),
        (cases.Target("", whole_s=10, rss_mib=100), {"status": "ok", "whole_s": 9.0, "peak_rss_mib": 101.0}, False),
        (cases.Target("", whole_s=10), {"status": "timeout", "whole_s": 5.0}, False),
        (cases.Target("", pods_per_s=100), {"status": "ok", "pods_per_s": 100.0}, True),
        (cases.Target("", pods_per_s=100), {"status": "ok", "pods_per_s": None}, False),
        (cases.Target("", ms_per_gang=0.4), {"status": "ok", "ms_per_gang": 0.41}, False),
    ],
)
def test_target_met(target, m, met):
    assert target.met(m) is met


# ---- the process runner and the timeout --------------------------------------------------------


def test_a_case_over_its_timeout_is_stopped_and_says_how_far_it_got():
    script = "import sys, time\nsys.stderr.write('gangsim-bench: sim-day 3 at 0.1 s\\n'); sys.stderr.flush()\ntime.sleep(120)\n"
    start = time.perf_counter()
    done = runner.run([sys.executable, "-c", script], timeout_s=1.0)
    assert time.perf_counter() - start < 60
    assert (done.status, done.returncode, done.sim_day) == ("timeout", None, 3)
    row = measure._figures(TINY, done, measure.Context(data=None, cache=Path("."), timeout_s=1.0))
    assert row["note"] == "did not finish within 1 s (reached simulated day 3)"
    assert row["pods_per_s"] is None and not TINY.target.met(row)


def test_a_child_ignoring_sigterm_is_killed(monkeypatch):
    monkeypatch.setattr(runner, "GRACE_S", 0.5)
    script = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('up', flush=True)\ntime.sleep(120)\n"
    done = runner.run([sys.executable, "-c", script], timeout_s=1.0)
    assert done.status == "timeout" and done.stdout == b"up\n"


def test_interrupting_the_harness_stops_the_child(tmp_path, monkeypatch):
    pidfile = tmp_path / "pid"
    script = f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)\n"
    real_sleep, raised = time.sleep, []

    def interrupted(seconds):  # Ctrl-C once the child is up
        if not raised and pidfile.exists() and pidfile.read_text():
            raised.append(True)
            raise KeyboardInterrupt
        real_sleep(seconds)

    monkeypatch.setattr(runner.time, "sleep", interrupted)
    with pytest.raises(KeyboardInterrupt):
        runner.run([sys.executable, "-c", script], timeout_s=60)
    with pytest.raises(ProcessLookupError):
        os.kill(int(pidfile.read_text()), 0)  # gone and reaped


def test_exit_code_and_usage_of_that_child_alone():
    # From a small parent, as ``python -m benchmarks`` is: Linux counts the memory a child had
    # before its exec (a copy of its parent's) in its peak RSS, and a pytest worker holds hundreds
    # of MiB by now.
    script = """if True:
        import sys, orjson
        from benchmarks import runner
        done = runner.run([sys.executable, "-c", "import sys; b = bytearray(200 * 2**20); sys.exit(4)"])
        small = runner.run([sys.executable, "-c", "pass"])
        print(orjson.dumps([[d.status, d.returncode, d.peak_rss_mib, d.cpu_s] for d in (done, small)]).decode())
    """
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, check=True).stdout
    (status, code, peak, cpu), (small_status, _, small_peak, _) = orjson.loads(out)
    assert (status, code) == ("failed", 4)
    assert peak >= 200 and cpu > 0
    assert small_status == "ok" and small_peak < 200  # not the maximum over all children


# ---- whole-process cases through the driver ----------------------------------------------------


def test_a_whole_process_case_reports_phases_and_pods_per_second(tmp_path):
    tree = baseline.current(ROOT)
    row = measure.measure_cli(TINY, tree, _ctx(tmp_path))
    assert set(row) == set(measure.MEASUREMENT_KEYS)
    assert row["status"] == "ok", row["note"]
    assert all(row[k] is not None and row[k] >= 0 for k in ("startup_s", "load_s", "replay_s", "report_s", "peak_rss_mib", "cpu_s"))
    assert row["load_s"] + row["replay_s"] + row["report_s"] <= row["whole_s"]
    assert row["pods_per_s"] == pytest.approx(60 / row["whole_s"], rel=0.01)  # whole_s is rounded in the row


def test_the_driver_leaves_gangsims_output_unchanged(tmp_path):
    trace = inputs.generated(tmp_path, "gang", cases.shapes.gang_docs, nodes=6, gangs=5, size=3)
    env = inputs.tree_env(ROOT)
    args = ["run", str(trace), "-p", "gang", "-f", "json"]
    plain = subprocess.run([sys.executable, "-m", "gangsim.cli", *args], capture_output=True, env=env, cwd=ROOT, check=True)
    timed = subprocess.run([sys.executable, str(measure.DRIVER), *args], capture_output=True, env=env, cwd=ROOT, check=True)
    assert timed.stdout == plain.stdout and b'"started":5' in plain.stdout.replace(b" ", b"")
    assert b"gangsim-bench: phases {" in timed.stderr and b"gangsim-bench" not in plain.stderr


def test_a_case_without_its_data_is_skipped(tmp_path):
    row = measure.measure_cli(cases.BY_KEY["NASA-pod"], baseline.current(ROOT), _ctx(tmp_path))
    assert row["status"] == "skipped" and "pwa-nasa-ipsc-1993" in row["note"]


# ---- the cache ---------------------------------------------------------------------------------


def test_generated_traces_are_built_once(tmp_path):
    first = inputs.generated(tmp_path, "scheduling_basic", cases.shapes.scheduling_basic_docs, nodes=2, pods=3)
    stamp = first.stat().st_mtime_ns
    again = inputs.generated(tmp_path, "scheduling_basic", cases.shapes.scheduling_basic_docs, nodes=2, pods=3)
    other = inputs.generated(tmp_path, "scheduling_basic", cases.shapes.scheduling_basic_docs, nodes=2, pods=4)
    assert again == first and again.stat().st_mtime_ns == stamp and other != first
    kinds = [orjson.loads(line)["kind"] for line in first.read_bytes().splitlines()]
    assert kinds == ["Trace", "Node", "Node", "Pod", "Pod", "Pod"]


def test_imports_are_cached_by_input_importer_and_options(tmp_path):
    fixture = ROOT / "tests" / "importers" / "fixtures" / "gavel"
    path, took = inputs.imported(tmp_path, ROOT, "gavel", [fixture], ["--nodes", "1"])
    assert took is not None and b'"kind":"NodePool"' in path.read_bytes()
    assert inputs.imported(tmp_path, ROOT, "gavel", [fixture], ["--nodes", "1"]) == (path, None)
    assert inputs.imported(tmp_path, ROOT, "gavel", [fixture], ["--nodes", "2"])[0] != path
    copy = tmp_path / "copy"
    (copy / "gangsim" / "load" / "importers").mkdir(parents=True)
    (copy / "gangsim" / "load" / "importers" / "gavel.py").write_text("# another importer\n")
    assert inputs.files_digest(sorted((copy / "gangsim" / "load" / "importers").glob("*.py"))) != inputs.files_digest(
        sorted((ROOT / "gangsim" / "load" / "importers").glob("*.py"))
    )


# ---- the baseline worktree ---------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


def test_baseline_is_a_temporary_worktree_of_the_revision(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    for text in ("old\n", "new\n"):
        (repo / "f.txt").write_text(text)
        _git(repo, "add", "f.txt")
        _git(repo, "commit", "-qm", text)
    old = _git(repo, "rev-parse", "HEAD~1")
    with baseline.worktree(repo, "HEAD~1") as tree:
        assert (tree.path / "f.txt").read_text() == "old\n"
        assert (tree.label, tree.rev, tree.commit) == ("baseline", "HEAD~1", old)
        assert len(_git(repo, "worktree", "list").splitlines()) == 2
        kept = tree.path
    assert not kept.exists() and len(_git(repo, "worktree", "list").splitlines()) == 1
    with pytest.raises(RuntimeError, match="no-such-rev"):
        with baseline.worktree(repo, "no-such-rev"):
            pass
    assert len(_git(repo, "worktree", "list").splitlines()) == 1
    here = baseline.current(repo)
    assert here.commit == _git(repo, "rev-parse", "HEAD") and not here.dirty


def test_each_tree_runs_byte_compiled_as_an_installed_gangsim(tmp_path, monkeypatch):
    """``byte_compile`` writes the ``__pycache__`` a wheel install has, also when the machine says
    not to write bytecode (``PYTHONDONTWRITEBYTECODE``): children then load it, not the sources."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    package = tmp_path / "gangsim" / "load"
    package.mkdir(parents=True)
    (tmp_path / "gangsim" / "__init__.py").write_text("")
    (package / "m.py").write_text("X = 1\n")
    inputs.byte_compile(tmp_path)
    tag = sys.implementation.cache_tag
    assert (package / "__pycache__" / f"m.{tag}.pyc").is_file()
    assert (tmp_path / "gangsim" / "__pycache__" / f"__init__.{tag}.pyc").is_file()


# ---- results.json ------------------------------------------------------------------------------


def test_results_json_schema(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cases, "CLI_CASES", [TINY])
    monkeypatch.setattr(cases, "BY_KEY", {"tiny": TINY})
    out = tmp_path / "results.json"
    assert bench.main(["tiny", "--json", str(out), "--cache-dir", str(tmp_path / "cache"), "--timeout", "300"]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].startswith("gangsim benchmarks on ") and "tiny" in printed and "met yes" in printed
    doc = orjson.loads(out.read_bytes())
    assert doc["schema"] == bench.SCHEMA and doc["baseline"] is None and doc["timeout_s"] == 300 and doc["complete"] is True
    assert {"cpu_count", "cpus_usable", "cpu_model", "load_avg_1m", "python", "platform"} == set(doc["machine"])
    assert doc["machine"]["python"] == sys.version.split()[0]
    (row,) = doc["results"]
    assert {"case", "kind", "title", "policy", "command", "today_issue16", "target", "met", "now", "baseline", "speedup", "speedup_at_least"} == set(row)
    assert (row["case"], row["kind"], row["met"], row["baseline"]) == ("tiny", "whole-process", "yes", None)
    assert set(row["now"]) == set(measure.MEASUREMENT_KEYS) and row["now"]["status"] == "ok"


def test_both_trees_in_one_row_with_their_ratio(tmp_path, monkeypatch):
    monkeypatch.setattr(cases, "BY_KEY", {"tiny": TINY})
    here = baseline.current(ROOT)
    twin = baseline.Tree("baseline", ROOT, "HEAD", here.commit)
    row = bench.run_one("tiny", [twin, here], _ctx(tmp_path))
    assert row["baseline"]["status"] == row["now"]["status"] == "ok"
    assert row["speedup"] == round(row["baseline"]["whole_s"] / row["now"]["whole_s"], 2)


def test_the_trees_take_turns_and_a_failing_tree_stops_alone(tmp_path, monkeypatch):
    """Repeats alternate between the trees (A B, B A, A B): the machine's drift falls on both."""
    order: list[str] = []
    walls = {"baseline": iter([5.0, 7.0, 6.0]), "now": iter([3.0, 1.0, 2.0])}

    def fake_run(argv, *, env=None, cwd=None, timeout_s=None):
        label = "baseline" if str(cwd).endswith("base") else "now"
        order.append(label)
        return runner.Finished("ok", 0, next(walls[label]), 50.0, 1.0, b"", b"")

    monkeypatch.setattr(runner, "run", fake_run)
    base, now = baseline.Tree("baseline", tmp_path / "base", "HEAD", None), baseline.Tree("now", tmp_path / "here", "HEAD", None)
    measured = measure.measure_cli_trees(TINY, [base, now], _ctx(tmp_path, repeat=3))
    assert order == ["baseline", "now", "now", "baseline", "baseline", "now"]
    assert (measured["baseline"]["whole_s"], measured["now"]["whole_s"]) == (6.0, 2.0)  # each tree's median run

    order.clear()
    walls["baseline"], walls["now"] = iter([5.0, 7.0]), iter([3.0, 1.0, 2.0])

    def failing_second(argv, *, env=None, cwd=None, timeout_s=None):
        done = fake_run(argv, env=env, cwd=cwd, timeout_s=timeout_s)
        if order.count("baseline") == 2 and order[-1] == "baseline":
            return runner.Finished("failed", 1, done.wall_s, 50.0, 1.0, b"", b"boom")
        return done

    monkeypatch.setattr(runner, "run", failing_second)
    measured = measure.measure_cli_trees(TINY, [base, now], _ctx(tmp_path, repeat=3))
    assert order == ["baseline", "now", "now", "baseline", "now"]  # the baseline stopped at its failure
    assert measured["baseline"]["status"] == "failed" and measured["baseline"]["note"] == "exit 1: boom"
    assert measured["now"]["status"] == "ok" and measured["now"]["whole_s"] == 2.0


@pytest.mark.parametrize(
    ("base", "now", "expected"),
    [
        ({"status": "ok", "whole_s": 30.0}, {"status": "ok", "whole_s": 10.0}, (3.0, None)),
        ({"status": "timeout", "whole_s": 900.0}, {"status": "ok", "whole_s": 100.0}, (None, 9.0)),
        ({"status": "ok", "whole_s": 30.0}, {"status": "timeout", "whole_s": 900.0}, (None, None)),
        (None, {"status": "ok", "whole_s": 10.0}, (None, None)),
    ],
)
def test_speedup(base, now, expected):
    assert bench.speedup(base, now) == expected


def test_repeats_report_the_median_run_or_the_first_failure():
    runs = [{"status": "ok", "whole_s": w} for w in (3.0, 1.0, 2.0)]
    assert measure._median_run(runs) is runs[2]
    failed = {"status": "timeout", "whole_s": 9.0}
    assert measure._median_run([*runs, failed]) is failed


def test_an_in_process_case_runs_through_the_trees_own_one_protocol(tmp_path):
    row = measure.measure_inprocess("B6", baseline.current(ROOT), _ctx(tmp_path))
    assert row["status"] == "ok" and row["detail"]["case"] == "B6"
    assert row["replay_s"] == row["detail"]["wall_s"] and row["whole_s"] >= row["replay_s"]


def test_ratios_b6_and_b7_from_the_rows_measured(capsys):
    def row(key, replay_s):
        return {"case": key, "now": {"status": "ok", "replay_s": replay_s}}

    derived = bench.derived_rows([row("B1", 0.9), row("B6", 0.3), row("B7a", 1.0), row("B7b", 4.0)])
    assert [(d["case"], d["ratio"], d["met"]) for d in derived] == [("B6/B1", 3.0, "yes"), ("B7", 4.0, "no")]
    assert bench.derived_rows([row("B1", 0.9)]) == []


def test_a_failing_case_is_a_failed_row_with_gangsims_message_and_exit_1(tmp_path, monkeypatch, capsys):
    broken = cases.CliCase("broken", "no such policy", "nosuch", TINY.trace, "-", TINY.target, fast=True)
    monkeypatch.setattr(cases, "CLI_CASES", [broken])
    monkeypatch.setattr(cases, "BY_KEY", {"broken": broken})
    out = tmp_path / "r.json"
    assert bench.main(["broken", "--json", str(out), "--cache-dir", str(tmp_path / "cache")]) == 1
    (row,) = orjson.loads(out.read_bytes())["results"]
    assert row["now"]["status"] == "failed" and row["met"] == "no"
    assert row["now"]["note"].startswith("exit 2: gangsim: error: ") and "nosuch" in row["now"]["note"]
    assert "failed: exit 2" in capsys.readouterr().out


def test_a_baseline_that_is_no_commit_exits_2(capsys):
    assert bench.main(["B6", "--baseline", "no-such-rev-xyz"]) == 2
    assert "--baseline no-such-rev-xyz: not a commit of" in capsys.readouterr().err


# ---- --instructions (cachegrind) ---------------------------------------------------------------
def _fake_valgrind(tmp_path: Path, monkeypatch, refs: str) -> Path:
    """A ``valgrind`` on PATH that runs the command after its options and says ``refs`` as
    cachegrind ends its report (``==PID== I   refs:      N``)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "valgrind"
    fake.write_text(
        "#!/bin/sh\n"
        'while [ "${1#--}" != "$1" ]; do shift; done\n'  # the --options
        '"$@"; code=$?\n'
        f'echo "==42== I   refs:      {refs}" >&2\n'
        "exit $code\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return fake


def test_instructions_are_read_from_cachegrinds_report(tmp_path, monkeypatch):
    fake = _fake_valgrind(tmp_path, monkeypatch, "1,234,567")
    assert measure.valgrind() == str(fake)
    row = measure.measure_cli(TINY, baseline.current(ROOT), _ctx(tmp_path, instructions=True))
    assert row["status"] == "ok", row["note"]
    assert row["instructions"] == 1_234_567
    assert bench._fmt(row) == "1,234,567 instructions"


def test_instructions_compare_the_trees_by_their_counts(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cases, "BY_KEY", {"tiny": TINY})
    _fake_valgrind(tmp_path, monkeypatch, "2,000")
    here = baseline.current(ROOT)
    row = bench.run_one("tiny", [baseline.Tree("baseline", ROOT, "HEAD", here.commit), here], _ctx(tmp_path, instructions=True))
    assert row["baseline"]["instructions"] == row["now"]["instructions"] == 2_000
    assert row["speedup"] == 1.0 and row["met"].startswith("n/a (--instructions")
    bench.print_row(row, "HEAD")
    assert "now 2,000 instructions | HEAD: 2,000 instructions | 1.00x fewer instructions" in capsys.readouterr().out


def test_instructions_without_valgrind_or_for_in_process_cases_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(measure, "valgrind", lambda: None)
    assert bench.main(["SB-50k", "--instructions", "--json", str(tmp_path / "r.json")]) == 2
    assert "needs valgrind" in capsys.readouterr().err
    monkeypatch.setattr(measure, "valgrind", lambda: "/usr/bin/valgrind")
    assert bench.main(["B1", "--instructions", "--json", str(tmp_path / "r.json")]) == 2
    assert "whole-process cases only, not B1" in capsys.readouterr().err


@pytest.mark.skipif(measure.valgrind() is None, reason="needs valgrind")
def test_the_instruction_count_is_the_same_on_every_run(tmp_path):
    """What makes the count worth having on a shared machine: two runs of the same case count
    nearly the same instructions. What moves it is absolute, ~50 M a run (Polars' thread pool
    starting up, addresses): 2 % of this tiny case, 0.2 % of SB-50k's 28 G."""
    ctx = _ctx(tmp_path, instructions=True, timeout_s=600)
    first, second = (measure.measure_cli(TINY, baseline.current(ROOT), ctx) for _ in range(2))
    assert first["status"] == second["status"] == "ok", (first["note"], second["note"])
    assert first["instructions"] > 10**9  # an interpreter with gangsim and Polars loaded
    assert abs(first["instructions"] - second["instructions"]) < 150_000_000
