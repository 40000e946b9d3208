"""report.bundle.write_files: all files or none (INTERFACE rule 1 for diff/plan --out)."""

import pytest

from gangsim.errors import InputError
from gangsim.report.bundle import write_files


def test_writes_every_file_and_replaces_earlier_ones(tmp_path):
    out = tmp_path / "out"
    write_files(out, {"a.json": b"1", "b.md": b"2"})
    write_files(out, {"a.json": b"3"})
    assert {p.name: p.read_bytes() for p in out.iterdir()} == {"a.json": b"3", "b.md": b"2"}
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temporary directory left


def test_a_failed_write_leaves_the_directory_as_it_was(tmp_path, monkeypatch):
    import gangsim.report.bundle as bundle

    out = tmp_path / "out"
    write_files(out, {"a.json": b"old"})
    real = bundle.os.replace

    def failing(src, dst):
        if str(src).endswith("c.png"):
            raise OSError("disk full")
        return real(src, dst)

    monkeypatch.setattr(bundle.os, "replace", failing)
    with pytest.raises(OSError, match="disk full"):
        write_files(out, {"a.json": b"new", "b.md": b"md", "c.png": b"png"})
    assert {p.name: p.read_bytes() for p in out.iterdir()} == {"a.json": b"old"}
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_never_replaces_a_directory(tmp_path):
    (tmp_path / "out" / "c.png").mkdir(parents=True)
    with pytest.raises(InputError, match="c.png exists and is a directory"):
        write_files(tmp_path / "out", {"c.png": b"png"})
    assert (tmp_path / "out" / "c.png").is_dir()


def test_a_file_in_the_way_is_an_input_error(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(InputError, match="exists and is not a directory"):
        write_files(tmp_path / "f", {"a": b""})
