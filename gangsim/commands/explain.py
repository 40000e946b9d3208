"""``gangsim explain``: one gang or pod, replayed with the framework's per-plugin results recorded."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from gangsim import pipeline
from gangsim.commands.common import duration_option, stdout_console, user_errors
from gangsim.commands.compare import OutputFormat
from gangsim.errors import UsageError
from gangsim.scheduler.profiles import POLICIES

PolicyName = StrEnum("PolicyName", {name: name for name in POLICIES})


def register(app: typer.Typer) -> None:
    @app.command()
    @user_errors
    def explain(
        traces: Annotated[list[Path], typer.Argument(help="Trace files or directories (merged in order).", show_default=False)],
        gang: Annotated[str | None, typer.Option("--gang", help="The gang to explain, NS/NAME (a PodGroup, or a Job without one).")] = None,
        pod: Annotated[str | None, typer.Option("--pod", help="The pod to explain, NS/NAME.")] = None,
        policy: Annotated[PolicyName, typer.Option("--policy", "-p", case_sensitive=False, help="Scheduler policy.")] = PolicyName["gang"],
        at: Annotated[str | None, typer.Option("--at", help="Explain the attempt at or before this time (e.g. 2h; default: the last).")] = None,
        fmt: Annotated[OutputFormat, typer.Option("--format", "-f", case_sensitive=False, help="What to print on stdout.")] = OutputFormat.table,
        seed: Annotated[int | None, typer.Option("--seed", help="Seed for upstream's random tie-breaks (default: node order).")] = None,
        horizon: Annotated[str | None, typer.Option("--horizon", help="Stop at this simulated time (e.g. 24h).")] = None,
        config: Annotated[Path | None, typer.Option("--config", help="A KubeSchedulerConfiguration file.")] = None,
        plot: Annotated[Path | None, typer.Option("--plot", help="Also draw this gang's timeline (attempts, victims) into this PNG file (needs gangsim[plot]).")] = None,
    ) -> None:
        """Why is this gang stuck, why did it land there, who paid: spec, history, per-plugin Filter
        and Score results of one attempt, and a verdict in plain words."""
        from gangsim.explain import explain as build_explanation
        from gangsim.explain import render_json, render_markdown

        if (gang is None) == (pod is None):
            raise UsageError("give exactly one of --gang NS/NAME and --pod NS/NAME")
        kind, name = ("gang", gang) if gang is not None else ("pod", pod)
        if "/" not in name:
            raise UsageError(f"--{kind} {name}: want NS/NAME")
        if plot is not None:
            from gangsim.report.figures import require_matplotlib

            require_matplotlib()
        horizon_ms = duration_option(horizon)
        trace = pipeline.load([str(t) for t in traces], config_path=config, horizon_ms=horizon_ms)
        doc = build_explanation(trace, policy.value, kind, name, at_ms=duration_option(at), seed=seed, horizon_ms=horizon_ms)
        if plot is not None:
            from gangsim.report.figures import explain_figure

            plot.write_bytes(explain_figure(doc))
        if fmt is OutputFormat.json:
            sys.stdout.buffer.write(render_json(doc))
        elif fmt is OutputFormat.markdown:
            sys.stdout.write(render_markdown(doc))
        else:
            from rich.markdown import Markdown  # (here: markdown-it and pygments cost every command ~40 ms)

            stdout_console().print(Markdown(render_markdown(doc)))
