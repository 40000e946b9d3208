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

EXAMPLES = 150  # per family: 450 cases in all, ~0.1 s each

# (family, seed) -> the known failure class (the name of its xfail test below); found on this
# suite's own seeds, not yet fixed when the fuzzer was added (issue 17 items 1 and 3)
KNOWN: dict[tuple[str, int], str] = {
    ("loader", 128986641): "test_known_unsupported_kind_error_line_over_300_characters",
    ("importers", 105): "test_known_openb_unexpected_header_error_line_over_300_characters",
    ("importers", 1251): "test_known_openb_unexpected_header_error_line_over_300_characters",
    ("importers", 15583): "test_known_openb_unexpected_header_error_line_over_300_characters",
    # the workload kinds (issue 12): the same message classes, with their longer object names and field paths
    ("workloads", 40529): "test_known_unsupported_kind_error_line_over_300_characters",
    ("workloads", 2726): "test_known_rfc1123_name_error_line_over_300_characters",
    ("workloads", 2079): "test_known_long_value_at_a_deep_field_error_line_over_300_characters",
}


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox() as box:
        yield box


@pytest.mark.parametrize("family", ["loader", "importers", "workloads"])
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
    ],
)
def test_fixed_classes_stay_fixed(sandbox, family, seed):
    outcome = sandbox.run(seed, family)
    assert outcome.failure is None, outcome.report()


@pytest.mark.xfail(strict=True, reason='issue 17: "kind: Unsupported value: …: supported values: …" lists every kind, 312 characters with a long name')
def test_known_unsupported_kind_error_line_over_300_characters(sandbox):
    _known_class_holds(sandbox, "test_known_unsupported_kind_error_line_over_300_characters")


@pytest.mark.xfail(strict=True, reason='issue 17: apimachinery\'s RFC 1123 message ("a lowercase RFC 1123 label must consist of …", pinned upstream, ~190 characters) after a long object name and value, ~396 characters')
def test_known_rfc1123_name_error_line_over_300_characters(sandbox):
    _known_class_holds(sandbox, "test_known_rfc1123_name_error_line_over_300_characters")


@pytest.mark.xfail(strict=True, reason="issue 17: a value cut to 80 characters at a deep field path (a LeaderWorkerSet's spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].resources.limits[…]), ~344 characters")
def test_known_long_value_at_a_deep_field_error_line_over_300_characters(sandbox):
    _known_class_holds(sandbox, "test_known_long_value_at_a_deep_field_error_line_over_300_characters")


@pytest.mark.xfail(strict=True, reason="issue 17: openb \"unexpected CSV header '…': expected … or …\" echoes the header and both expected headers, 340 characters")
def test_known_openb_unexpected_header_error_line_over_300_characters(sandbox):
    _known_class_holds(sandbox, "test_known_openb_unexpected_header_error_line_over_300_characters")
