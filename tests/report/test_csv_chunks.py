"""``--out`` writes a CSV file a piece at a time (``write.csv_chunks``): the pieces joined are
byte for byte the one-shot ``write_csv`` the golden reports were recorded with."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gangsim.load import load_trace
from gangsim.report import build_report, write_report
from gangsim.report.write import csv_chunks
from gangsim.sim.replay import replay

ROOT = Path(__file__).resolve().parents[2]


def whole(frame: pl.DataFrame) -> bytes:
    return frame.write_csv(None, null_value="", line_terminator="\n", include_header=True).encode("utf-8")


@pytest.fixture(scope="module")
def report():
    return build_report(replay(load_trace([ROOT / "traces" / "victims-in-vain.yaml"]), "gang"))


@pytest.mark.parametrize("rows", [1, 2, 7, 1_000_000])
def test_report_tables_in_pieces_are_the_whole_file(report, rows):
    for name, frame in report.tables.items():
        pieces = list(csv_chunks(frame, rows))
        assert b"".join(pieces) == whole(frame), name
        assert len(pieces) == max(1, -(-frame.height // rows))


def test_an_empty_table_is_its_header():
    frame = pl.DataFrame({"a": pl.Series([], dtype=pl.Int64), "b": pl.Series([], dtype=pl.String)})
    assert list(csv_chunks(frame, 3)) == [b"a,b\n"]


def test_written_csv_files_are_the_whole_file(report, tmp_path, monkeypatch):
    monkeypatch.setattr("gangsim.report.write.CSV_CHUNK_ROWS", 3)
    write_report(report, tmp_path / "out")
    for name, frame in report.tables.items():
        assert (tmp_path / "out" / f"{name}.csv").read_bytes() == whole(frame)


cells = st.one_of(st.none(), st.text(alphabet=st.sampled_from('ab,"\n\r é'), max_size=6))
numbers = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False), st.integers(-10, 10).map(float))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(cells, numbers), max_size=25), st.integers(1, 6))
def test_any_frame_in_pieces_is_the_whole_file(rows, size):
    frame = pl.DataFrame({"s": [r[0] for r in rows], "x": [r[1] for r in rows]}, schema={"s": pl.String, "x": pl.Float64})
    assert b"".join(csv_chunks(frame, size)) == whole(frame)
