"""report.bundle.write_files: all files or none (INTERFACE rule 1 for diff/plan --out)."""

import pytest

from gangsim.errors import OutputError
import gangsim.report.write as write_mod
from gangsim.report.bundle import write_files


def files(out):
    """What a reader sees at the top of ``out``."""
    return {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}


def test_writes_every_file_and_replaces_earlier_ones(tmp_path):
    out = tmp_path / "out"
    write_files(out, {"a.json": b"1", "b.md": b"2"})
    write_files(out, {"a.json": b"3"})
    assert files(out) == {"a.json": b"3", "b.md": b"2"}
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # nothing outside DIR


def test_a_failed_write_leaves_the_directory_as_it_was(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_files(out, {"a.json": b"old"})

    def failing(kind, path):
        if kind == "write" and path.endswith("c.png"):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(write_mod, "_step", failing)
    with pytest.raises(OutputError, match=r"\[Errno 28\] No space left on device"):
        write_files(out, {"a.json": b"new", "b.md": b"md", "c.png": b"png"})
    assert files(out) == {"a.json": b"old"}
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_never_replaces_a_directory(tmp_path):
    (tmp_path / "out" / "c.png").mkdir(parents=True)
    with pytest.raises(OutputError, match="c.png exists and is a directory"):
        write_files(tmp_path / "out", {"c.png": b"png"})
    assert (tmp_path / "out" / "c.png").is_dir()


def test_a_file_in_the_way_is_an_input_error(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(OutputError, match=r"\[Errno 20\] Not a directory"):
        write_files(tmp_path / "f", {"a": b""})
