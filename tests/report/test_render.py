from __future__ import annotations

import io

import orjson
from rich.console import Console

from gangsim.report import build_report, render_json, render_markdown, render_terminal

from .logs import empty_log, gang, make_log, small_log, victim, waits_log

RICH_SMALL = """\
Summary

  metric                                      unit    value
 ───────────────────────────────────────────────────────────
  trace                                               small
  policy                                               gang
  horizon_s                                   time    6m40s
  gpu
    capacity_s                                GPU-h    1.78
    busy_s                                    GPU-s   2,400
    stranded_s                                GPU-s   1,000
    free_while_pending_s                      GPU-s   2,200
    utilization                               %        37.5
  gangs
    total                                                 2
    started                                               2
    completed                                             1
    never_started                                         0
    wait_p50_s (started only)                 time    1m40s
    wait_p90_s (started only)                 time    4m10s
    wait_p99_s (started only)                 time    4m10s
    wait_max_s (started only)                 time    4m10s
    wait_censored_p50_s                       time    1m40s
    wait_censored_p90_s                       time    4m10s
    wait_censored_p99_s                       time    4m10s
  preemption
    victims                                               1
    victims_in_vain                                       0
    lost_gpu_s                                GPU-s     200
    gangs_broken                                          1
  pods
    total                                                 5
    bound                                                 5
    pending_at_end                                        1
    restarts                                              1
  scheduler
    cycles                                                0
    podgroup_attempts_scheduled                           0
    podgroup_attempts_unschedulable                       0
    podgroup_attempts_waiting_on_preemption               0
    podgroup_attempts_error                               0
    podgroup_preemption_attempts                          0

Slowest gangs
ml/train-b
    pods                                          2
    gpus                                          8
    priority                                     10
    wait                                      4m10s
    restarts                                      1
    preemptions                                   1
    state                                   Stalled
    why          0/4: 4 Insufficient nvidia.com/gpu
ml/train-a
    pods                                          2
    gpus                                          8
    priority                                    100
    wait                                      1m40s
    restarts                                      0
    preemptions                                   0
    state                                 Completed
Top preemptors

  preemptor   victims   in vain   GPU-s lost
 ────────────────────────────────────────────
  ml/urgent         1         0          200

Gangs that paid

  victim gang   victims   GPU-s lost
 ────────────────────────────────────
  ml/train-b          1          200

"""

RICH_EMPTY = """\
Summary

  metric                                      unit    value
 ───────────────────────────────────────────────────────────
  trace                                               empty
  policy                                                pod
  horizon_s                                   time       0s
  gpu
    capacity_s                                GPU-s       0
    busy_s                                    GPU-s       0
    stranded_s                                GPU-s       0
    free_while_pending_s                      GPU-s       0
    utilization                               %         0.0
  gangs
    total                                                 0
    started                                               0
    completed                                             0
    never_started                                         0
    wait_p50_s (started only)                 time       0s
    wait_p90_s (started only)                 time       0s
    wait_p99_s (started only)                 time       0s
    wait_max_s (started only)                 time       0s
    wait_censored_p50_s                       time       0s
    wait_censored_p90_s                       time       0s
    wait_censored_p99_s                       time       0s
  preemption
    victims                                               0
    victims_in_vain                                       0
    lost_gpu_s                                GPU-s       0
    gangs_broken                                          0
  pods
    total                                                 0
    bound                                                 0
    pending_at_end                                        0
    restarts                                              0
  scheduler
    cycles                                                0
    podgroup_attempts_scheduled                           0
    podgroup_attempts_unschedulable                       0
    podgroup_attempts_waiting_on_preemption               0
    podgroup_attempts_error                               0
    podgroup_preemption_attempts                          0

Slowest gangs: no gangs in this trace.
Preemption: no victims.
"""

MARKDOWN_SMALL = """\
# gangsim report: small (policy gang)

## Summary

| metric | unit | value |
|---|---|---:|
| trace |  | small |
| policy |  | gang |
| horizon_s | time | 6m40s |
| **gpu** |  |  |
|   capacity_s | GPU-h | 1.78 |
|   busy_s | GPU-s | 2,400 |
|   stranded_s | GPU-s | 1,000 |
|   free_while_pending_s | GPU-s | 2,200 |
|   utilization | % | 37.5 |
| **gangs** |  |  |
|   total |  | 2 |
|   started |  | 2 |
|   completed |  | 1 |
|   never_started |  | 0 |
|   wait_p50_s (started only) | time | 1m40s |
|   wait_p90_s (started only) | time | 4m10s |
|   wait_p99_s (started only) | time | 4m10s |
|   wait_max_s (started only) | time | 4m10s |
|   wait_censored_p50_s | time | 1m40s |
|   wait_censored_p90_s | time | 4m10s |
|   wait_censored_p99_s | time | 4m10s |
| **preemption** |  |  |
|   victims |  | 1 |
|   victims_in_vain |  | 0 |
|   lost_gpu_s | GPU-s | 200 |
|   gangs_broken |  | 1 |
| **pods** |  |  |
|   total |  | 5 |
|   bound |  | 5 |
|   pending_at_end |  | 1 |
|   restarts |  | 1 |
| **scheduler** |  |  |
|   cycles |  | 0 |
|   podgroup_attempts_scheduled |  | 0 |
|   podgroup_attempts_unschedulable |  | 0 |
|   podgroup_attempts_waiting_on_preemption |  | 0 |
|   podgroup_attempts_error |  | 0 |
|   podgroup_preemption_attempts |  | 0 |

## Slowest gangs

| gang | pods | gpus | priority | wait | restarts | preemptions | state | why |
|---|---:|---:|---:|---:|---:|---:|---|---|
| ml/train-b | 2 | 8 | 10 | 4m10s | 1 | 1 | Stalled | 0/4: 4 Insufficient nvidia.com/gpu |
| ml/train-a | 2 | 8 | 100 | 1m40s | 0 | 0 | Completed |  |

## Preemption

### Top preemptors

| preemptor | victims | in vain | GPU-s lost |
|---|---:|---:|---:|
| ml/urgent | 1 | 0 | 200 |

### Gangs that paid

| victim gang | victims | GPU-s lost |
|---|---:|---:|
| ml/train-b | 1 | 200 |
"""

MARKDOWN_EMPTY = """\
# gangsim report: empty (policy pod)

## Summary

| metric | unit | value |
|---|---|---:|
| trace |  | empty |
| policy |  | pod |
| horizon_s | time | 0s |
| **gpu** |  |  |
|   capacity_s | GPU-s | 0 |
|   busy_s | GPU-s | 0 |
|   stranded_s | GPU-s | 0 |
|   free_while_pending_s | GPU-s | 0 |
|   utilization | % | 0.0 |
| **gangs** |  |  |
|   total |  | 0 |
|   started |  | 0 |
|   completed |  | 0 |
|   never_started |  | 0 |
|   wait_p50_s (started only) | time | 0s |
|   wait_p90_s (started only) | time | 0s |
|   wait_p99_s (started only) | time | 0s |
|   wait_max_s (started only) | time | 0s |
|   wait_censored_p50_s | time | 0s |
|   wait_censored_p90_s | time | 0s |
|   wait_censored_p99_s | time | 0s |
| **preemption** |  |  |
|   victims |  | 0 |
|   victims_in_vain |  | 0 |
|   lost_gpu_s | GPU-s | 0 |
|   gangs_broken |  | 0 |
| **pods** |  |  |
|   total |  | 0 |
|   bound |  | 0 |
|   pending_at_end |  | 0 |
|   restarts |  | 0 |
| **scheduler** |  |  |
|   cycles |  | 0 |
|   podgroup_attempts_scheduled |  | 0 |
|   podgroup_attempts_unschedulable |  | 0 |
|   podgroup_attempts_waiting_on_preemption |  | 0 |
|   podgroup_attempts_error |  | 0 |
|   podgroup_preemption_attempts |  | 0 |

## Slowest gangs

No gangs in this trace.

## Preemption

No victims.
"""


def terminal(log, **kw) -> str:
    console = Console(file=io.StringIO(), width=100, color_system=None, force_terminal=False)
    render_terminal(build_report(log), console, **kw)
    text = console.file.getvalue()
    # rich pads cells with spaces up to the table width; goldens are compared without them
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def test_rich_golden_small():
    assert terminal(small_log()) == RICH_SMALL


def test_rich_golden_empty():
    assert terminal(empty_log()) == RICH_EMPTY


def test_rich_top_limits_rows_and_never_started_first():
    text = terminal(waits_log([10, 40, 20], never=1), top=2)
    gang_lines = [line.split() for line in text.splitlines() if line.startswith("  ns/")]
    assert gang_lines == [
        ["ns/never0", "1", "1", "0", "never", "0", "0", "Pending"],
        ["ns/g1", "1", "1", "0", "40s", "0", "0", "Running"],
    ]


def test_rich_does_not_read_names_as_markup():
    log = make_log()
    log.gangs.append(gang("ns/[bold]x[/bold]"))
    assert "ns/[bold]x[/bold]" in terminal(log)


def test_rich_renders_bare_pod_victims_as_no_gang():
    log = make_log()
    log.victims.append(victim("ns/lonely", preemptor="ns/[red]p", lost_gpu_ms=90_500))
    rows = [line.split() for line in terminal(log).splitlines()]
    assert ["(no", "gang)", "1", "90.5"] in rows
    assert ["ns/[red]p", "1", "1", "90.5"] in rows  # in_vain None counts as in vain


def test_markdown_golden_small():
    assert render_markdown(build_report(small_log())) == MARKDOWN_SMALL


def test_markdown_golden_empty():
    assert render_markdown(build_report(empty_log())) == MARKDOWN_EMPTY


def test_markdown_escapes_pipes_and_newlines():
    log = make_log(trace="a|b")
    log.gangs.append(gang("ns/x|y", state="Pending\nreally"))
    text = render_markdown(build_report(log))
    assert text.startswith("# gangsim report: a\\|b (policy gang)\n")
    assert "| ns/x\\|y | 1 | 1 | 0 | never | 0 | 0 | Pending really |" in text


def test_markdown_top():
    text = render_markdown(build_report(waits_log([1, 2, 3, 4, 5])), top=2)
    assert [line.split(" | ")[0] for line in text.splitlines() if line.startswith("| ns/")] == ["| ns/g4", "| ns/g3"]


def test_json_bytes():
    report = build_report(small_log())
    data = render_json(report)
    assert data.endswith(b"}\n") and not data.endswith(b"\n\n")
    assert data.startswith(b'{\n  "trace": "small",\n  "policy": "gang",\n  "horizon_s": 400.0,\n  "gpu": {\n    "capacity_s": 6400.0,')
    assert orjson.loads(data) == report.summary
    assert list(orjson.loads(data)) == list(report.summary)  # declared order, not sorted
    assert render_json(build_report(small_log())) == data


def test_json_empty():
    assert orjson.loads(render_json(build_report(empty_log())))["gpu"]["utilization"] == 0.0
