"""The SWF parse over columns (``swf_columns.parse_columns``, issue 16) against the reference
line-by-line parse (``swf_parse.parse_lines``): the same header, job columns and counts (in the
same order) on the PWA logs and on generated ones; a decline (None, nothing counted) for
everything the reference would reject or that is not a plain decimal; and the same report bytes
and stderr with the switch ``GANGSIM_REFERENCE_LOADER=1`` on and off."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangsim import pipeline
from gangsim.load.importers import ImportOptions, Stats
from gangsim.load.importers import swf_columns
from gangsim.load.importers.swf_parse import parse_lines
from gangsim.load.switches import REFERENCE_LOADER
from gangsim.report import render_json
from tests.importers.conftest import dataset, invoke
from tests.importers.test_swf import HPC2N, NASA, RICC, SWF_HEADER, _line

COLUMNS = ("submit", "run", "wait", "procs", "number", "queue", "end", "line")


def _both(path: str, **options) -> tuple[tuple | None, tuple]:
    """(columns' (header values, columns, counts) or None, the reference's)."""
    fast_stats, ref_stats = Stats(), Stats()
    fast = swf_columns.parse_columns(str(path), ImportOptions(**options), fast_stats)
    header, jobs = parse_lines(str(path), ImportOptions(**options), ref_stats)
    ref = (header.values, {c: getattr(jobs, c).tolist() for c in COLUMNS}, list(ref_stats.counts.items()))
    if fast is None:
        assert fast_stats.counts == {}  # a decline counts nothing
        return None, ref
    return (fast[0].values, {c: getattr(fast[1], c).tolist() for c in COLUMNS}, list(fast_stats.counts.items())), ref


_OPTIONS = {"default": {}, "delete": {"cancelled": "delete"}, "limit": {"limit": 20_000}}


@pytest.mark.parametrize(("log", "options"), [(log, o) for log in ("nasa", "hpc2n") for o in _OPTIONS] + [("ricc", "default"), ("ricc", "limit")])
def test_pwa_logs_parse_alike(log, options):
    log, options = {"ricc": RICC, "nasa": NASA, "hpc2n": HPC2N}[log], _OPTIONS[options]
    fast, ref = _both(dataset(*log), **options)
    assert fast is not None, "a PWA log is plainly good: the columns decode it"
    assert fast == ref


def test_statuses_and_counts_in_the_references_order(tmp_path):
    """Every kind of skip, in an order that is not the check order: the counts come in the order
    the reference first counts them."""
    path = tmp_path / "tiny.swf"
    path.write_text(
        SWF_HEADER
        + _line(1, 0, 0, 60, 4, status=0)  # failed: replayed
        + _line(2, 10, 0, -1, 2)  # unknown run time
        + _line(3, 20, 30, 0, 8, status=5)  # cancelled before it started
        + "; a comment among the jobs\n\n"
        + _line(4, -1, 0, 60, 2)  # unknown submit time
        + _line(5, 40, 0, 70, -1)  # unknown processor count
        + _line(6, 50, 0, 70, 3, status=5)  # cancelled while running
        + _line(7, 60, -1, 0, 3, status=5)  # cancelled before it started, no wait: skipped even with delete
    )
    for options in ({}, {"cancelled": "delete"}):
        fast, ref = _both(path, **options)
        assert fast == ref
    keys = [k for k, _ in ref[2]]
    assert keys == ["failed jobs (replayed for their run time)", "jobs skipped (unknown run time)", "cancelled-before-start jobs (deleted at cancellation)",
                    "jobs skipped (unknown submit time)", "jobs skipped (unknown processor count)",
                    "jobs cancelled while running (replayed for their run time)", "cancelled-before-start jobs skipped"]  # fmt: skip


DECLINED = {
    "exponent": _line(1, 0, 0, 10, 4).replace(" 3600 ", " 36e2 "),
    "underscore": _line(1, 0, 0, 10, 4).replace(" 3600 ", " 3_600 "),
    "nbsp": _line(1, 0, 0, 10, 4).replace(" 3600 ", " 3600\xa0"),
    "negative": _line(1, 0, 0, -7, 4),
    "nan": _line(1, 0, 0, 10, 4).replace(" 3600 ", " nan "),
    "zero-procs": _line(1, 0, 0, 10, 0),
    "fractional-procs": _line(1, 0, 0, 10, 4).replace(" 0 10 4 ", " 0 10 4.5 "),
    "19-fields": _line(1, 0, 0, 10, 4).strip() + " 7\n",
    "time-past-100-years": _line(1, 0, 0, 10, 4).replace(" 0 10 4 ", " 0 3200000000 4 "),
    "int-past-int64": "9223372036854775808" + _line(1, 0, 0, 10, 4)[1:],
}


@pytest.mark.parametrize("case", sorted(DECLINED))
def test_declines_what_it_does_not_decode_itself(tmp_path, case):
    path = tmp_path / "tiny.swf"
    path.write_text(SWF_HEADER + _line(7, 0, 0, 5, 1) + DECLINED[case])
    stats = Stats()
    assert swf_columns.parse_columns(str(path), ImportOptions(), stats) is None
    assert stats.counts == {}


def test_a_corrupt_gzip_or_non_utf8_file_is_declined_and_the_reference_names_it(tmp_path):
    good = (SWF_HEADER + _line(1, 0, 0, 10, 4) * 3000).encode()
    cut = tmp_path / "cut.swf.gz"
    cut.write_bytes(gzip.compress(good)[:-200])
    latin = tmp_path / "latin.swf"
    latin.write_bytes(good + b"; caf\xe9\n")
    for path in (cut, latin):
        assert swf_columns.parse_columns(str(path), ImportOptions(), Stats()) is None
        res = invoke("import", "swf", str(path), "-o", str(tmp_path / "out.jsonl"))
        assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "not UTF-8 text" in res.stderr


def test_crlf_tabs_bom_and_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(swf_columns, "CHUNK", 3)  # jobs across several chunks
    body = "".join(_line(n, 10 * n, 0, 60, 1 + n % 9).replace(" ", "\t", n % 3) for n in range(1, 12))
    path = tmp_path / "crlf.swf"
    path.write_bytes(("\ufeff" + SWF_HEADER + body + "; trailer: x\n").replace("\n", "\r\n").encode())
    for options in ({}, {"limit": 7}):
        fast, ref = _both(path, **options)
        assert fast is not None and fast == ref
    assert len(ref[1]["line"]) == 7 and ref[0]["Version"] == "2.2"


_PLAIN = st.sampled_from(["-1", "0", "1", "7", "60", "3600", "1.5", "0.25", "12.", ".5"])
_ODD = st.sampled_from(["1e3", "-3", "nan", "x", "1_0", "--1", "1.2.3"])


@st.composite
def _logs(draw) -> str:
    lines = [SWF_HEADER]
    for n in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["job", "job", "job", "comment", "blank"]))
        if kind == "comment":
            lines.append(f"; Note{n}: {draw(st.sampled_from(['a', 'b: c', '']))}\n")
        elif kind == "blank":
            lines.append(draw(st.sampled_from(["\n", "  \t\n"])))
        else:
            fields = [str(n + 1), draw(st.sampled_from(["-1", "0", "5", "20.5"])), draw(_PLAIN), draw(_PLAIN),
                      draw(st.sampled_from(["-1", "1", "4", "8", "2.5"])), "-1", "-1", draw(st.sampled_from(["-1", "2", "16"])), "3600", "-1",
                      draw(st.sampled_from(["-1", "0", "1", "5"])), "1", "1", "-1", draw(st.sampled_from(["1", "2"])), "1", "-1", "-1"]  # fmt: skip
            if draw(st.integers(0, 9)) == 0:
                fields[draw(st.integers(0, 17))] = draw(_ODD)
            lines.append(draw(st.sampled_from([" ", "  ", "\t"])).join(fields) + "\n")
    return "".join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_logs(), delete=st.booleans(), limit=st.sampled_from([None, 0, 3]))
def test_generated_logs_parse_alike_or_are_declined(tmp_path, text, delete, limit):
    path = tmp_path / "gen.swf"
    path.write_text(text)
    options = {"cancelled": "delete" if delete else None, "limit": limit}
    try:
        fast, ref = _both(path, **options)
    except Exception as exc:  # the reference rejects the log: the columns declined it
        assert swf_columns.parse_columns(str(path), ImportOptions(**options), Stats()) is None, exc
        return
    if fast is None:  # declined: only for a spelling it leaves to the reference
        assert any(odd in text for odd in ("1e3", "1_0")), text
    else:
        assert fast == ref


def _report(label: str, policy: str) -> bytes:
    trace = pipeline.load([label])
    return render_json(pipeline.run_policy(trace, policy, seed=7))


@pytest.mark.parametrize("policy", ["gang", "pod"])
def test_report_bytes_with_the_switch_on_and_off(tmp_path, monkeypatch, policy):
    path = tmp_path / "log.swf"
    path.write_text(SWF_HEADER + "".join(_line(n, 7 * n, 0, 30 + n % 5 * 60, 1 + n % 24, status=(1, 0, 5)[n % 3]) for n in range(1, 80)))
    fast = _report(f"swf:{path}", policy)
    monkeypatch.setenv(REFERENCE_LOADER, "1")
    assert _report(f"swf:{path}", policy) == fast


def test_hpc2n_report_bytes_and_stderr_with_the_switch_on_and_off(monkeypatch):
    label = f"swf:{dataset(*HPC2N)}"
    fast = invoke("run", label, "--policy", "gang", "--horizon", "5d", "--format", "json")
    monkeypatch.setenv(REFERENCE_LOADER, "1")
    ref = invoke("run", label, "--policy", "gang", "--horizon", "5d", "--format", "json")
    assert fast.exit_code == ref.exit_code == 0
    assert fast.stdout == ref.stdout and fast.stderr == ref.stderr
