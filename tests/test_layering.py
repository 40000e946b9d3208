"""The house rules of STYLE.md §3 and issue 11, checked on the source: who may import whom, no
import cycles, no module past ~600 lines, and a runtime that never names a plugin.

Imports are read from each module's AST (function-level imports included); imports under
``if TYPE_CHECKING:`` count for the layering rules but not for cycles (they never run).
"""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gangsim"
MAX_LINES = 600


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@cache
def imports(module: str, *, typing: bool = True) -> frozenset[str]:
    """The gangsim modules ``module`` imports (``from pkg import mod`` counts as ``pkg.mod``)."""
    tree = ast.parse(MODULES[module].read_text())
    skipped: set[int] = set()
    if not typing:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skipped.update(id(n) for n in ast.walk(node))
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in MODULES)
    return frozenset(m for m in out if m.startswith("gangsim") and m != module)


def top(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


# STYLE §3: each top-level unit and the units it may import (besides itself)
PACKAGE_RULES: dict[str, set[str]] = {
    "errors": set(),
    "api": set(),
    "columns": set(),
    "aggregation": set(),  # the event log's similar-events window and failure streaks
    "eventlog": {"api", "columns", "aggregation"},
    "load": {"api", "errors"},
    "scheduler": {"api", "eventlog", "errors"},
    "sim": {"api", "eventlog", "errors", "scheduler"},
    "report": {"api", "eventlog", "errors"},
    "validate": {"api", "errors", "load"},
    "whatif": {"api", "errors", "eventlog", "load", "report", "pipeline", ""},
    "pipeline": {"api", "errors", "eventlog", "load", "report", "sim", "scheduler"},
    # gangsim explain: above sim and report (it replays with a recorder), below the commands
    "explain": {"api", "errors", "eventlog", "report", "scheduler", "sim", "validate"},
}


@pytest.mark.parametrize("unit", sorted(PACKAGE_RULES))
def test_packages_import_downward_only(unit):
    bad = {
        f"{m} -> {i}"
        for m in MODULES
        if top(m) == unit
        for i in imports(m)
        if top(i) != unit and top(i) not in PACKAGE_RULES[unit]
    }
    assert not bad, sorted(bad)


# third-party packages each unit may import (the standard library is always allowed)
THIRD_PARTY: dict[str, set[str]] = {
    "errors": set(),
    "api": set(),
    "columns": set(),
    "aggregation": set(),
    "eventlog": set(),
    "load": {"yaml", "orjson", "numpy"},
    "scheduler": {"numpy"},  # never typer, rich or polars (STYLE §9)
    "sim": {"numpy"},
    "report": {"polars", "rich", "orjson", "numpy"},  # + matplotlib (the ``plot`` extra) in figures.py only
    "validate": set(),
    "whatif": {"polars", "yaml", "ray"},  # ray: the optional ``ray`` extra, imported where used
    "pipeline": set(),
    "cli": {"typer", "rich"},
    "commands": {"typer", "rich"},
}
# one module each beyond its unit: figures the ``plot`` extra; swf_columns Polars, to decode an
# SWF log's job lines over columns (issue 16), the one place ``load`` reads with Polars
OPTIONAL = {"gangsim.report.figures": {"matplotlib"}, "gangsim.load.importers.swf_columns": {"polars"}}


def third_party(module: str) -> set[str]:
    tree = ast.parse(MODULES[module].read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in ("gangsim", "__future__")}


@pytest.mark.parametrize("unit", sorted(THIRD_PARTY))
def test_third_party_imports(unit):
    bad = {
        f"{m} -> {n}"
        for m in MODULES
        if (top(m) or m.rsplit(".", 1)[-1]) == unit
        for n in third_party(m)
        if n not in THIRD_PARTY[unit] | OPTIONAL.get(m, set())
    }
    assert not bad, sorted(bad)


S = "gangsim.scheduler."
CONTRACTS = {S + "framework", S + "framework.interface", S + "framework.types", S + "framework.handle", S + "framework.cycle_state"}
# inside the scheduler: each group of modules and what (else in the scheduler) it may import
SCHEDULER_RULES: list[tuple[str, str, set[str]]] = [
    ("framework contracts", "contracts", set()),
    ("framework.preemption", S + "framework.preemption", {S + "framework.preemption"}),
    ("plugins", S + "plugins", {S + "framework.preemption", S + "plugins", S + "plugins.names", S + "plugins.helper"}),
    ("fastpath", S + "fastpath", {S + "fastpath"}),
    ("runtime", S + "framework.runtime", {S + "fastpath"}),
    ("cache", S + "cache", {S + "cache"}),
    ("queue", S + "queue", {S + "queue"}),
]


def _in_group(module: str, prefix: str) -> bool:
    if prefix == "contracts":
        return module in CONTRACTS
    return module == prefix or module.startswith(prefix + ".")


@pytest.mark.parametrize(("group", "prefix", "allowed"), SCHEDULER_RULES, ids=[r[0] for r in SCHEDULER_RULES])
def test_scheduler_layers(group, prefix, allowed):
    """Plugins import only the framework's contracts (and the preemption machinery, as kube's
    defaultpreemption imports ``framework/preemption``); the fast path and the runtime sit on the
    contracts; nothing below the drivers imports a driver."""
    bad = set()
    for m in MODULES:
        if not _in_group(m, prefix) or m == S + "plugins.registry":
            continue
        for i in imports(m):
            if not i.startswith(S) or i in CONTRACTS:
                continue
            if not any(i == a or i.startswith(a + ".") for a in allowed):
                bad.add(f"{m} -> {i}")
    assert not bad, sorted(bad)


def test_the_simulator_sees_the_scheduler_through_its_informer_and_handle_types():
    allowed = {S + "informer", S + "framework.handle", S + "framework.types"}
    bad = {f"{m} -> {i}" for m in MODULES if m.startswith("gangsim.sim.") and m != "gangsim.sim.replay" for i in imports(m) if i.startswith(S) and i not in allowed}
    assert not bad, sorted(bad)


def _cycles(prefix: str) -> list[list[str]]:
    graph = {m: sorted(i for i in imports(m, typing=False) if i in MODULES and i.startswith(prefix)) for m in MODULES if m.startswith(prefix)}
    found: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in graph.get(m, ()):
            if state.get(n) == 1:
                found.append(stack[stack.index(n) :] + [n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return found


@pytest.mark.parametrize("prefix", ["gangsim.scheduler", "gangsim.sim", "gangsim.load", "gangsim.whatif", "gangsim.validate"])
def test_no_import_cycles(prefix):
    assert _cycles(prefix) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_past_600_lines(module):
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MAX_LINES, f"{module}: {lines} lines; split it by concept"


def _plugin_names() -> set[str]:
    tree = ast.parse(MODULES[S + "plugins.names"].read_text())
    return {node.value.value for node in ast.walk(tree) if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)}


@pytest.mark.parametrize(
    "module",
    [S + "framework.runtime", S + "scheduler", S + "schedule_one", S + "schedule_podgroup", S + "binding", S + "queue.scheduling_queue", S + "cycle_handle"],
)
def test_the_runtime_and_drivers_never_name_a_plugin(module):
    """What a plugin does comes from the Protocols it implements; only profiles (data) and the
    registry name plugins."""
    assert S + "plugins.names" not in imports(module)
    tree = ast.parse(MODULES[module].read_text())
    literals = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    assert not (literals & _plugin_names())
