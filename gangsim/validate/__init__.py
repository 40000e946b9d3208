"""``gangsim validate``: the API rules and the known pitfalls of a trace, without simulating.

Two kinds of findings, one line each (``render_findings``):

- **errors** (``load_errors``): everything ``load_trace`` rejects, with the loader's exact message,
  as many as can be found, each problem once;
- **warnings** (``pitfalls``): the pitfalls of EXAMPLES.md §5 and SEMANTICS.md §1.5 / §8.7 that can
  be seen in the loaded trace without running the scheduler (codes in ``WARNING_CODES``).

``findings`` holds the ``Finding`` type, the codes, the ordering and rendering, and ``exit_code``
(1 when there is an error, else 0 — warnings are advice).

Layering: like ``pipeline``, this package sits above ``load`` and uses its public per-step
functions only; it never imports ``scheduler`` or ``sim`` (no numpy, fast).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gangsim.validate.findings import ERROR, ERROR_CODES, WARNING, WARNING_CODES, Finding, Findings, exit_code, render_findings
from gangsim.validate.load_errors import StepwiseLoader
from gangsim.validate.pitfalls import LARGE_GANG_PODS, MSG_PREEMPTION_POLICY, MSG_PRIORITY, MSG_SCHEDULER_NAME, Pitfalls


def validate_paths(paths: Sequence[str | Path], *, config_path: str | Path | None = None) -> list[Finding]:
    """Every error the loader would raise (as many as can be found) and the pitfall warnings.

    Findings are sorted by file (command-line order), line, then errors before warnings.
    """
    findings = Findings()
    loader = StepwiseLoader(findings)
    trace = loader.load(paths, config_path)
    Pitfalls(trace, loader.broken, findings).run()
    return findings.result()


__all__ = [
    "ERROR",
    "ERROR_CODES",
    "LARGE_GANG_PODS",
    "MSG_PREEMPTION_POLICY",
    "MSG_PRIORITY",
    "MSG_SCHEDULER_NAME",
    "WARNING",
    "WARNING_CODES",
    "Finding",
    "exit_code",
    "render_findings",
    "validate_paths",
]
