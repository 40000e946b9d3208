"""Shared helpers: where the real datasets are (tests skip cleanly without them) and how to run
an import in-process."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from gangsim.cli import app
from gangsim.load.importers import ImportOptions, Stats, records

ROOT = Path(__file__).resolve().parents[2]
_CANDIDATES = [Path("/work/shared/traces-data"), ROOT.parent / "shared" / "traces-data"]
DATA = next((p for p in _CANDIDATES if p.is_dir()), None)
runner = CliRunner()


def dataset(*parts: str) -> str:
    """Path of a file or folder under traces-data; skips the test when it is not there."""
    if DATA is None:
        pytest.skip("traces-data not available (/work/shared/traces-data)")
    path = DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not available")
    return str(path)


def imported(kind: str, *sources: str, **options) -> tuple[list[dict], Stats]:
    stats = Stats()
    return list(records(kind, list(sources), ImportOptions(**options), stats)), stats


def creates(recs: list[dict], kind: str | None = None) -> list[dict]:
    return [r["create"] for r in recs if "create" in r and (kind is None or r["create"]["kind"] == kind)]


def invoke(*args: str, input: str | bytes | None = None):
    return runner.invoke(app, list(args), input=input)


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    return [orjson.loads(line) for line in Path(path).read_bytes().splitlines() if line.strip()]
