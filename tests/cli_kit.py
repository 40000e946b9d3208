"""Shared bits of the command tests (whatif/, report/): paths of bundled traces, the CLI runner."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from gangsim.cli import app

ROOT = Path(__file__).resolve().parents[1]
DEADLOCK = str(ROOT / "traces" / "deadlock.yaml")
BINPACK = str(ROOT / "traces" / "configs" / "binpack-gpus.yaml")
runner = CliRunner()


def invoke(*args: str, columns: int | None = None):
    """Run the CLI as if piped: 100 columns (PIPED_WIDTH) unless ``columns`` sets $COLUMNS (the
    test runner's own $COLUMNS, e.g. xdist's 80, is not inherited)."""
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": str(columns) if columns else None})


def invoke_json(*args: str, code: int = 0) -> dict:
    res = invoke(*args, "--format", "json")
    assert res.exit_code == code, (res.stdout, res.stderr)
    return json.loads(res.stdout)
