"""`--help` as a new user reads it (issue 14 item 6): extras named literally, flags without a
value hint, usage lines in the usual CAPS form."""

from __future__ import annotations

import pytest

from cli_kit import invoke

COMMANDS = ("run", "validate", "version", "diff", "plan", "sweep", "import", "generate")


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_markup_losses_value_hints_on_flags_or_braces(command):
    res = invoke(command, "--help")
    assert res.exit_code == 0, res.stderr
    text = res.stdout
    assert "<bool>" not in text
    assert "{" not in text.splitlines()[0]  # usage line: TRACES..., not {traces}...
    assert text.startswith(f"Usage: gangsim {command} [OPTIONS]")


@pytest.mark.parametrize(("command", "extra"), [("run", "gangsim[plot]"), ("diff", "gangsim[plot]"), ("plan", "gangsim[ray]"), ("sweep", "gangsim[ray]")])
def test_help_names_the_extras(command, extra):
    assert extra in invoke(command, "--help").stdout


def test_usage_names_arguments_in_caps():
    assert invoke("run", "--help").stdout.splitlines()[0] == "Usage: gangsim run [OPTIONS] TRACES..."
    assert invoke("import", "--help").stdout.splitlines()[0] == "Usage: gangsim import [OPTIONS] KIND SOURCES..."
