"""Policy specs: what one ``--policy`` value names, e.g. ``gang``, ``gang+partial-success``,
``pod:configs/binpack.yaml`` or ``gang+old-timestamp+no-batching:cfg.yaml``.

Grammar: ``NAME[+VARIANT...][:CONFIG]``, NAME one of ``pod | permit | gang``.

- ``:CONFIG`` is a file holding one KubeSchedulerConfiguration (read with
  :func:`gangsim.load.load_config`); it replaces the trace's own configuration for this policy.
- each ``+VARIANT`` switches one :class:`~gangsim.api.config.SchedulerConfig` field on top of
  that (:data:`VARIANTS`), so one ``gangsim diff`` can compare the KEP design with the shipped code.

The whole spec string is the policy's *label*: the column header in tables, the ``label`` in JSON
and the first part of a ``--fail-if`` operand (``gang+partial-success.gangs.wait_p99_s``).
Everything is checked here, before any replay: a bad name, variant or config file is exit 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from gangsim.api.config import SchedulerConfig
from gangsim.api.duration import DurationError, parse_duration_ms
from gangsim.errors import UsageError
from gangsim.load import load_config

__all__ = ["POLICY_NAMES", "VARIANTS", "PolicySpec", "duration_option", "parse_policy_spec", "parse_policy_specs"]

POLICY_NAMES: tuple[str, ...] = ("pod", "permit", "gang")


def duration_option(value: object, where: str = "--horizon") -> int | None:
    """A duration given as an option (``24h``, ``90s``, seconds) in ms; None stays None."""
    if value is None:
        return None
    try:
        return parse_duration_ms(value)
    except DurationError as exc:
        raise UsageError(f"{where}: Invalid value: {value!r}: {exc}") from None

# variant → the SchedulerConfig fields it sets (SEMANTICS §8.5: KEP behaviours not in the shipped code)
# (``fast_path.X``: one switch of ``api.config.FastPath``; the other switches keep their values)
VARIANTS: dict[str, dict[str, object]] = {
    "partial-success": {"partial_success": True},
    "old-timestamp": {"requeue_leftovers_with_old_timestamp": True},
    "tas": {"topology_aware_workload_scheduling": True},  # KEP-5732 TopologyAwareWorkloadScheduling gate (gang only)
    # KEP-6012 CompositePodGroup gate; the newest code schedules a hierarchy only by placements
    "cpg": {"composite_pod_group": True, "topology_aware_workload_scheduling": True},
    "no-batching": {"opportunistic_batching": False},  # every speed shortcut off: the reference path
    "no-static-cache": {"fast_path.static_filter_cache": False},
    "no-signature-cache": {"fast_path.signature_cache": False},
    "no-windowed-search": {"fast_path.windowed_search": False},
    "no-doomed-pass": {"fast_path.doomed_pass": False},
    "no-placement-passes": {"fast_path.placement_passes": False},  # gang+tas: the placement loop's passes on the reference path
    "no-repeated-failure": {"fast_path.repeated_failure": False},
    "no-failure-streaks": {"fast_path.failure_streaks": False},
    "no-row-refresh": {"fast_path.row_refresh": False},
    "no-keep-placements": {"fast_path.keep_placements": False},
    "no-counted-pass": {"fast_path.counted_pass": False},
    "no-gated-siblings": {"fast_path.gated_siblings": False},
    "no-pod-runs": {"fast_path.pod_runs": False},
    "no-repeated-attempts": {"fast_path.repeated_attempts": False},
    "no-static-scores": {"fast_path.static_scores": False},
    "no-gated-prefix": {"fast_path.gated_prefix": False},
    "no-counted-windows": {"fast_path.counted_windows": False},
    "no-run-passes": {"fast_path.run_passes": False},
    "no-sibling-activation": {"fast_path.sibling_activation": False},
    "no-counted-searches": {"fast_path.counted_searches": False},
    "no-pre-enqueue-passed": {"fast_path.pre_enqueue_passed": False},
    "no-joined-runs": {"fast_path.joined_runs": False},
    "no-streak-peel": {"fast_path.streak_peel": False},
    "no-bulk-retries": {"fast_path.bulk_retries": False},
    "no-permit-counts": {"fast_path.permit_counts": False},
    "no-renewed-failures": {"fast_path.renewed_failures": False},
    "no-repeated-post-filter": {"fast_path.repeated_post_filter": False},
    "no-doomed-prefix": {"fast_path.doomed_prefix": False},
}


@dataclass(frozen=True, slots=True)
class PolicySpec:
    """One parsed ``--policy`` value. ``config_path`` ``None``: the trace's own configuration."""

    label: str
    policy: str
    variants: tuple[str, ...] = ()
    config_path: str | None = None

    def config(self, trace_config: SchedulerConfig) -> SchedulerConfig | None:
        """The SchedulerConfig this spec replays with; ``None`` when it is the trace's own, unchanged."""
        if self.config_path is None and not self.variants:
            return None
        base = load_config(self.config_path) if self.config_path is not None else trace_config
        changes: dict[str, object] = {}
        fast: dict[str, object] = {}
        for variant in self.variants:
            for key, value in VARIANTS[variant].items():
                if key.startswith("fast_path."):
                    fast[key.removeprefix("fast_path.")] = value
                else:
                    changes[key] = value
        if fast:
            changes["fast_path"] = replace(base.fast_path, **fast)
        return base.with_changes(**changes) if changes else base


def parse_policy_spec(text: str, option: str = "--policy") -> PolicySpec:
    """``NAME[+VARIANT...][:CONFIG]`` → :class:`PolicySpec`; raises :class:`UsageError` naming the bad part."""
    label = text.strip()
    head, sep, path = label.partition(":")
    if sep and not path:
        raise UsageError(f"{option} {text!r}: empty config path after ':'")
    name, *variants = head.split("+")
    if name not in POLICY_NAMES:
        raise UsageError(f"{option} {text!r}: unknown policy {name!r} (choose one of {', '.join(POLICY_NAMES)})")
    seen: set[str] = set()
    for variant in variants:
        if variant not in VARIANTS:
            raise UsageError(f"{option} {text!r}: unknown variant {variant!r} (known: {', '.join(VARIANTS)})")
        if variant in seen:
            raise UsageError(f"{option} {text!r}: variant {variant!r} given twice")
        seen.add(variant)
    return PolicySpec(label=label, policy=name, variants=tuple(variants), config_path=path or None)


def parse_policy_specs(texts: Sequence[str], option: str = "--policy") -> list[PolicySpec]:
    """Several specs; two identical labels are a usage error (their rows could not be told apart)."""
    specs = [parse_policy_spec(t, option) for t in texts]
    labels: set[str] = set()
    for spec in specs:
        if spec.label in labels:
            raise UsageError(f"{option} {spec.label!r} given twice: every policy label must be unique")
        labels.add(spec.label)
    return specs
