"""The --fail-if / --target comparison language (gangsim.report.diff), as tables."""

import pytest

from gangsim.errors import UsageError
from gangsim.report.diff import direction, is_metric_key, metric_keys, parse_condition

LABELS = ["gang", "pod", "gang+partial-success", "pod:traces/configs/binpack-gpus.yaml", "permit+no-batching"]


@pytest.mark.parametrize(
    ("text", "left", "op", "right"),
    [
        pytest.param("pod.gangs.started < gang.gangs.started", ("pod", "gangs.started"), "<", ("gang", "gangs.started"), id="two-keys"),
        pytest.param("gang.gpu.stranded_s > 0", ("gang", "gpu.stranded_s"), ">", 0.0, id="key-number"),
        pytest.param("0 < gang.gpu.stranded_s", 0.0, "<", ("gang", "gpu.stranded_s"), id="number-key"),
        pytest.param("pod.gangs.started<gang.gangs.started", ("pod", "gangs.started"), "<", ("gang", "gangs.started"), id="no-spaces"),
        pytest.param("gang+partial-success.gangs.wait_p99_s > gang.gangs.wait_p99_s", ("gang+partial-success", "gangs.wait_p99_s"), ">",
                     ("gang", "gangs.wait_p99_s"), id="variant-label-longest-first"),
        pytest.param("pod:traces/configs/binpack-gpus.yaml.gpu.utilization >= 0.5", ("pod:traces/configs/binpack-gpus.yaml", "gpu.utilization"),
                     ">=", 0.5, id="config-label-with-dots-and-slashes"),
        pytest.param("permit+no-batching.pods.restarts != 3", ("permit+no-batching", "pods.restarts"), "!=", 3.0, id="not-equal"),
        pytest.param("gang.gangs.wait_p95_s <= 10m", ("gang", "gangs.wait_p95_s"), "<=", 600.0, id="duration-and-extra-percentile"),
        pytest.param("gang.horizon_s == 1_000", ("gang", "horizon_s"), "==", 1000.0, id="top-level-key"),
        pytest.param("gang.gpu.utilization > -1e-3", ("gang", "gpu.utilization"), ">", -0.001, id="signed-exponent"),
    ],
)
def test_parses(text, left, op, right):
    c = parse_condition(text, LABELS)
    got = [(o.label, o.key) if o.key is not None else o.number for o in (c.left, c.right)]
    assert (got[0], c.op, got[1]) == (left, op, right)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        pytest.param("gnag.gangs.started > 1", 'unknown policy label "gnag"', id="unknown-label"),
        pytest.param("gang.gangz.started > 1", 'unknown section "gangz"', id="unknown-section"),
        pytest.param("gang.gangs.startd > 1", 'unknown key "gangs.startd"', id="unknown-key"),
        pytest.param("gang.gangs.wait_p0_s > 1", 'unknown key "gangs.wait_p0_s"', id="percentile-out-of-range"),
        pytest.param("gang.gangs.started = 1", 'bad operator "="', id="single-equals"),
        pytest.param("gang.gangs.started => 1", 'bad operator "=>"', id="swapped-operator"),
        pytest.param("gang.gangs.started", "missing operator", id="no-operator"),
        pytest.param("gang.gangs.started >", 'missing operand after ">"', id="no-right-operand"),
        pytest.param("> 1", 'starts with operator ">"', id="no-left-operand"),
        pytest.param("gang.gangs.started > 1 2", 'unexpected "2"', id="extra-token"),
        pytest.param("gang.gangs.started > 1 < 3", 'unexpected "<"', id="chained"),
        pytest.param("gang.gangs.started 1", 'unexpected "1"', id="operand-operand"),
        pytest.param("gang.gangs.started > 10x", 'bad number "10x"', id="bad-number"),
        pytest.param("gangs.started > 1", '"gangs.started" needs a policy label', id="missing-label"),
        pytest.param("1 < 2", "compares two numbers", id="constant"),
        pytest.param("", "empty expression", id="empty"),
    ],
)
def test_bad_expressions_name_the_token(text, needle):
    with pytest.raises(UsageError) as err:
        parse_condition(text, LABELS)
    message = str(err.value)
    assert message.startswith(f"--fail-if '{text}': ")
    assert needle in message
    assert "\n" not in message


def test_plan_targets_take_a_default_label():
    c = parse_condition("gangs.wait_p95_s <= 600", ["gang"], default_label="gang", option="--target")
    assert (c.left.label, c.left.key, c.right.number) == ("gang", "gangs.wait_p95_s", 600.0)
    with pytest.raises(UsageError, match=r"^--target 'gangs\.wait_p95x_s <= 600': unknown key"):
        parse_condition("gangs.wait_p95x_s <= 600", ["gang"], default_label="gang", option="--target")


def test_evaluate_and_undefined_operands():
    c = parse_condition("pod.gangs.wait_p99_s > 600", ["pod"])
    assert c.evaluate(lambda label, key: 700.0, undefined_holds=True).held
    assert not c.evaluate(lambda label, key: 500.0, undefined_holds=True).held
    undefined = c.evaluate(lambda label, key: None, undefined_holds=True)
    assert undefined.held and undefined.undefined and "n/a" in undefined.describe()
    assert not c.evaluate(lambda label, key: None, undefined_holds=False).held


def test_every_summary_key_is_a_metric_and_has_a_direction():
    keys = metric_keys()
    assert keys[:3] == ("horizon_s", "gpu.capacity_s", "gpu.busy_s")
    assert "gangs.wait_p99_s" in keys and is_metric_key("gangs.wait_p95_s") and not is_metric_key("gangs.wait_p101_s")
    assert direction("gpu.stranded_s") < 0 < direction("gangs.completed")
    assert direction("gangs.started") > 0 and direction("gangs.wait_censored_p95_s") < 0 and direction("preemption.victims") < 0
    # ambiguous: started-only waits drop when a policy starts fewer gangs; utilization counts work later lost
    for neutral in ("gangs.wait_p95_s", "gangs.wait_max_s", "gpu.utilization", "gpu.free_while_pending_s", "pods.bound"):
        assert direction(neutral) == 0, neutral
    assert direction("horizon_s") == 0 and direction("scheduler.cycles") == 0 and direction("gangs.total") == 0
