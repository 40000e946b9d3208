"""README examples print what the README shows (issue 14 item 6).

Every ``$ gangsim …`` line of a ``console`` block in README.md is run (from the repository root,
an optional ``| grep PATTERN`` applied to stdout) and its output compared, line by line with
trailing spaces dropped, with the lines the README shows under it. The minimal gang example is a
complete trace that runs.
"""

from __future__ import annotations

import re
import shlex

import pytest

from cli_kit import ROOT, invoke, invoke_json

README = (ROOT / "README.md").read_text()


def _console_examples() -> list[tuple[str, list[str]]]:
    examples: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", README, flags=re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                examples.append((line[2:], []))
            elif examples:
                examples[-1][1].append(line.rstrip())
    return [(cmd, out) for cmd, out in examples if cmd.startswith("gangsim ")]


EXAMPLES = _console_examples()


def test_readme_has_console_examples():
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize(("command", "shown"), EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_console_example_prints_what_readme_shows(command, shown, monkeypatch):
    monkeypatch.chdir(ROOT)
    cmd, _, grep = command.partition(" | grep ")
    res = invoke(*shlex.split(cmd)[1:])
    assert res.exit_code == 0, res.stderr
    lines = [line.rstrip() for line in res.stdout.splitlines()]
    if grep:
        lines = [line for line in lines if grep.strip() in line]
    assert lines == shown


def test_minimal_gang_example_runs(tmp_path):
    start = README.index("A minimal gang")
    body = README[README.index("```yaml\n", start) + len("```yaml\n"):]
    trace = tmp_path / "gang.yaml"
    trace.write_text(body[: body.index("```")])
    summary = invoke_json("run", str(trace))
    assert summary["gangs"]["started"] == summary["gangs"]["total"] == 1
    assert summary["gpu"]["busy_s"] == 128 * 3600.0  # 64 GPUs x 2 h, the figure the README gives
