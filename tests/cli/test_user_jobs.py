"""Done-when of issue 12 item 3 through the CLI: plain Jobs without any duration give a non-zero GPU
report with --default-duration 1h; without it, stderr says that nothing has a duration."""

from __future__ import annotations

import json

import pytest
from cli_kit import invoke

PLAIN = """\
apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status: {allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}}
---
apiVersion: batch/v1
kind: Job
metadata: {generateName: train-, namespace: ml, labels: {kueue.x-k8s.io/queue-name: team-a}}
spec:
  parallelism: 2
  completions: 6
  completionMode: Indexed
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 4}}}]
"""

NO_DURATION = "gangsim: warning: no Pod or Job in plain has a duration (gangsim.dev/duration, the Trace's durations or defaultDuration, or --default-duration D): no pod ever finishes, so without --horizon the replay stops after the last event and reports no GPU time\n"


@pytest.fixture
def plain(tmp_path):
    path = tmp_path / "plain.yaml"
    path.write_text(PLAIN)
    return str(path)


def test_default_duration_gives_a_non_zero_gpu_report(plain):
    res = invoke("run", plain, "--default-duration", "1h", "--format", "json", "--no-progress")
    assert res.exit_code == 0, res.stderr
    s = json.loads(res.stdout)
    # 6 completions, 2 pods x 4 GPUs at a time: three 1 h waves fill the 8-GPU node
    assert (s["horizon_s"], s["gpu"]["busy_s"], s["gpu"]["utilization"]) == (10_800.0, 86_400.0, 1.0)
    assert "no Pod or Job" not in res.stderr
    assert res.stderr.count("replayed as admitted") == 2  # suspend and the Kueue label, once each


def test_without_any_duration_stderr_says_so(plain):
    res = invoke("run", plain, "--format", "json", "--no-progress")
    assert res.exit_code == 0
    assert res.stderr.endswith(NO_DURATION)
    assert json.loads(res.stdout)["gpu"]["busy_s"] == 0.0


@pytest.mark.parametrize("command", [["diff", "-p", "gang", "-p", "pod"], ["run"]])
def test_default_duration_option_is_checked(plain, command):
    res = invoke(*command, plain, "--default-duration", "soon", "--no-progress")
    assert res.exit_code == 2
    assert res.stderr.startswith("gangsim: error: --default-duration: Invalid value: 'soon'")


def test_diff_takes_the_default_duration(plain):
    res = invoke("diff", plain, "-p", "gang", "-p", "pod", "--default-duration", "1h", "--format", "json", "--no-progress")
    assert res.exit_code == 0, res.stderr
    assert "no Pod or Job" not in res.stderr


def test_sweep_takes_the_default_duration_and_the_job_workloads_switch(plain):
    res = invoke("sweep", "--trace", plain, "--default-duration", "1h", "--no-job-workloads", "-j", "1", "-f", "csv", "--no-progress")
    assert res.exit_code == 0, res.stderr
    header, row = res.stdout.splitlines()[:2]
    assert float(dict(zip(header.split(","), row.split(","), strict=True))["gpu.busy_s"]) == 86_400.0
    assert "no Pod or Job" not in res.stderr
