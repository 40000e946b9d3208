"""Fuzzing (issue 17, item 6): structured mutations of valid inputs through the CLI.

Each example is one case of ``tests/fuzz/mutate.py`` (a seed → a mutated trace, scheduler
configuration or importer input and the command to run), run in-process by
``tests/fuzz/runner.py`` with a 60 s limit. Exit 0, 1 or 2 is fine; exit 3, a traceback, exit 130
without an interrupt, a hang or an error line over 300 characters is a failure, reported with
its seed, mutations and a replay command. A longer run: ``python -m benchmarks fuzz N``.

``KNOWN`` lists inputs whose failure class is known and not fixed yet: the main tests skip exactly
those (family, seed) pairs, and each class has its own strict xfail below, which starts to XPASS
(and so fail) once the class is fixed: then delete the xfail and its seeds from ``KNOWN``.
"""

from __future__ import annotations

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from tests.fuzz.runner import Sandbox

EXAMPLES = 150  # per family: 300 cases in all, ~0.1 s each

# (family, seed) -> the known failure class (the name of its xfail test below); found on this
# suite's own seeds, not yet fixed when the fuzzer was added (issue 17 items 1 and 3)
KNOWN: dict[tuple[str, int], str] = {}


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox() as box:
        yield box


@pytest.mark.parametrize("family", ["loader", "importers"])
def test_mutated_inputs_exit_0_1_or_2_with_short_error_lines(sandbox, family):
    failures = []

    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None, phases=[Phase.explicit, Phase.generate])
    @given(seed=st.integers(min_value=0, max_value=2**32 - 1))
    def check(seed):
        if (family, seed) in KNOWN:
            return
        outcome = sandbox.run(seed, family)
        if outcome.failure is not None:
            failures.append(outcome.report())

    check()
    assert not failures, f"{len(failures)} fuzz failure(s):\n" + "\n".join(failures)


def _known_class_holds(sandbox, name: str) -> None:
    seeds = [key for key, cls in KNOWN.items() if cls == name]
    assert seeds, name
    reports = [o.report() for o in (sandbox.run(seed, family) for family, seed in seeds) if o.failure is not None]
    assert not reports, "\n".join(reports)


@pytest.mark.parametrize(
    ("family", "seed"),
    [
        pytest.param("loader", 3676, id="priorityClassName-beyond-64-bits"),  # was exit 3: orjson TypeError in the spec cache key
        pytest.param("importers", 392, id="kubectl-kind-nested-in-a-list"),  # was exit 3: unhashable kind
        # were error lines over 300 characters (issue 17 item 3), fixed by ``errors.fit`` and short messages
        pytest.param("loader", 128986641, id="unsupported-kind-10000-characters"),
        pytest.param("importers", 105, id="openb-unexpected-header"),
        pytest.param("importers", 15583, id="openb-unexpected-header-2"),
    ],
)
def test_fixed_classes_stay_fixed(sandbox, family, seed):
    outcome = sandbox.run(seed, family)
    assert outcome.failure is None, outcome.report()


