"""Fixtures: write small traces into a temp dir (the cwd, so findings name ``t.yaml:5``) and validate them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gangsim.validate import Finding, validate_paths


@pytest.fixture
def write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str, str], str]:
    monkeypatch.chdir(tmp_path)

    def _write(name: str, text: str) -> str:
        Path(name).write_text(text)
        return name

    return _write


@pytest.fixture
def validate(write: Callable[[str, str], str]) -> Callable[..., list[Finding]]:
    """``validate(text, name="t.yaml", config=None)`` → findings."""

    def _validate(text: str, name: str = "t.yaml", config: str | None = None) -> list[Finding]:
        cfg = write("config.yaml", config) if config else None
        return validate_paths([write(name, text)], config_path=cfg)

    return _validate
