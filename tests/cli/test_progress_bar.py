"""The replay progress bar (issue 14 item 5): simulated clock, % of the horizon, pods bound and
pending, ETA; only on a terminal."""

from __future__ import annotations

import io
import sys

from rich.console import Console

from gangsim import cli


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_shows_clock_share_of_horizon_pods_and_eta(monkeypatch):
    monkeypatch.setattr(sys, "stderr", _Tty())
    bar, update = cli._progress_bar(True)
    assert bar is not None
    update(3_600_000, 7_200_000, 1_234, 56)
    console = Console(file=io.StringIO(), width=120, record=True, color_system=None)
    console.print(bar.make_tasks_table(bar.tasks))
    line = console.export_text().strip()
    assert line.startswith("replaying")
    assert " 50% of 2h sim 1h 1,234 bound, 56 pending ETA " in line


def test_no_bar_when_stderr_is_not_a_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert cli._progress_bar(True) == (None, None)
