"""Policy specs ``NAME[+VARIANT...][:CONFIG]`` (``gangsim.whatif.variants``): what each variant
switches in the SchedulerConfig, how fast-path switches combine, and the usage errors."""

import pytest

from gangsim.api.config import FastPath, SchedulerConfig
from gangsim.errors import UsageError
from gangsim.whatif.variants import parse_policy_spec, parse_policy_specs

BASE = SchedulerConfig()


@pytest.mark.parametrize(
    ("spec", "policy", "want"),
    [
        pytest.param("gang", "gang", None, id="plain: the trace's own config"),
        pytest.param("gang+partial-success", "gang", BASE.with_changes(partial_success=True), id="kep-variant"),
        pytest.param("permit+no-batching", "permit", BASE.with_changes(opportunistic_batching=False), id="reference-path"),
        pytest.param("gang+no-doomed-pass", "gang", BASE.with_changes(fast_path=FastPath(doomed_pass=False)), id="one-shortcut"),
        pytest.param(
            "pod+no-static-cache+no-windowed-search",
            "pod",
            BASE.with_changes(fast_path=FastPath(static_filter_cache=False, windowed_search=False)),
            id="shortcuts-combine",
        ),
        pytest.param(
            "gang+no-signature-cache+old-timestamp",
            "gang",
            BASE.with_changes(fast_path=FastPath(signature_cache=False), requeue_leftovers_with_old_timestamp=True),
            id="shortcut-and-kep-variant",
        ),
    ],
)
def test_a_spec_names_a_policy_and_its_config(spec, policy, want):
    parsed = parse_policy_spec(spec)
    assert (parsed.label, parsed.policy, parsed.config(BASE)) == (spec, policy, want)


def test_without_the_signature_cache_the_window_the_doomed_pass_and_the_repeated_failure_are_off_too():
    config = parse_policy_spec("gang+no-signature-cache").config(BASE)
    assert config is not None and config.effective_fast_path == FastPath(True, False, False, False, False, False, static_scores=False, run_passes=False, bulk_retries=False)  # static_scores keeps raw scores in the signature cache, run_passes looks at it; bulk_retries needs the doomed pass


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        pytest.param(["gang+fast"], "unknown variant 'fast'", id="unknown-variant"),
        pytest.param(["gang+no-doomed-pass+no-doomed-pass"], "given twice", id="twice"),
        pytest.param(["kube"], "unknown policy 'kube'", id="unknown-policy"),
        pytest.param(["gang", "gang"], "every policy label must be unique", id="duplicate-label"),
    ],
)
def test_bad_specs_are_usage_errors(specs, message):
    with pytest.raises(UsageError, match=message):
        parse_policy_specs(specs)
