"""Fixtures for the loader tests: write small trace files into a temp dir and load them.

Tests run inside the temp dir so messages name files as a user would give them (``t.yaml:5``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from gangsim.api.trace import Trace
from gangsim.errors import InputError
from gangsim.load import load_trace


@pytest.fixture
def write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str, str], str]:
    monkeypatch.chdir(tmp_path)

    def _write(name: str, text: str) -> str:
        path = Path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return name

    return _write


@pytest.fixture
def load(write: Callable[[str, str], str]) -> Callable[..., Trace]:
    """``load(text, name="t.yaml", config=None)`` → Trace."""

    def _load(text: str, name: str = "t.yaml", config: str | None = None) -> Trace:
        return load_trace([write(name, text)], config_path=config)

    return _load


@pytest.fixture
def load_error(load: Callable[..., Trace]) -> Callable[..., str]:
    """``load_error(text, name="t.yaml")`` → the one-line message of the InputError."""

    def _error(text: str, name: str = "t.yaml", config: str | None = None) -> str:
        with pytest.raises(InputError) as info:
            load(text, name, config)
        message = str(info.value)
        assert "\n" not in message
        return message

    return _error
