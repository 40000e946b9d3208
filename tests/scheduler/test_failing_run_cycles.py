"""The cycles of pod runs that fail again after a release (issue 16, RICC under ``pod``) are
cheaper and unchanged: ``run_pass.plan`` gives up before looking at the rotation when the
signature's feasible rows cannot hold ``MIN_PODS`` searches, and ``PodStrategy._among_equals``
reuses its message for a fresh diagnosis with the same counts. Both are exact (the same None,
the same string); these tests show that they fire on a congested trace and that its report is the
reference path's byte for byte."""

from types import SimpleNamespace

import numpy as np

from ab import congested_rigid_jobs, report_bytes
from gangsim.scheduler.fastpath import run_pass
from gangsim.scheduler.fastpath.signatures import SignatureCache
from gangsim.scheduler.framework.preemption import evaluator
from gangsim.scheduler.framework.types import Diagnosis
from gangsim.sim.replay import replay


def _strategy(memo: list | None, codes: np.ndarray, nodes: int) -> evaluator.PodStrategy:
    handle = SimpleNamespace(snapshot=SimpleNamespace(nodes=SimpleNamespace(num_nodes=nodes)))
    return evaluator.PodStrategy(handle, None, evaluator.CandidateLimits(), None, None, Diagnosis(codes=codes), memo)  # type: ignore[arg-type]


def test_among_equals_reuses_the_message_of_the_same_counts_only():
    memo = [None, 0, 0, ""]
    fresh = [np.array(c, dtype=np.int8) for c in ([2, 2, 3], [2, 3, 2], [2, 3, 3], [2, 2, 3])]
    for nodes in (3, 4):
        for codes in fresh:
            assert _strategy(memo, codes, nodes)._among_equals() == _strategy(None, codes, nodes)._among_equals()
    assert _strategy([None, 0, 0, ""], np.zeros(0, dtype=np.int8), 0)._among_equals() == _strategy(None, np.zeros(0, dtype=np.int8), 0)._among_equals()


def test_congested_runs_take_the_shortcuts_and_write_the_reference_report(tmp_path, monkeypatch):
    trace = congested_rigid_jobs(tmp_path, 1, priorities=1)
    fired = {"plan": 0, "message": 0}
    seen = {"entry": None, "looked": False, "rendered": 0}
    real_plan, real_entry, real_flat = run_pass.plan, SignatureCache.entry, np.flatnonzero
    real_among, real_histogram = evaluator.PodStrategy._among_equals, evaluator.reason_histogram

    def plan(fw, pods):  # an early exit: the entry was there, the rotation never looked at
        seen["entry"] = None
        result = real_plan(fw, pods)
        if result is None and seen["entry"] is not None and not seen["looked"]:
            fired["plan"] += 1
        seen["entry"] = None
        return result

    def entry(self, pod):
        out = real_entry(self, pod)
        seen["entry"], seen["looked"] = out, False
        return out

    def flatnonzero(a):
        seen["looked"] = True
        return real_flat(a)

    def histogram(*args, **kwargs):
        seen["rendered"] += 1
        return real_histogram(*args, **kwargs)

    def among(self):  # a fresh diagnosis (not the memo's object) answered without rendering
        fresh = self.equals_memo is not None and self.equals_memo[0] is not self.diagnosis.codes
        before = seen["rendered"]
        out = real_among(self)
        if fresh and seen["rendered"] == before:
            fired["message"] += 1
        return out

    monkeypatch.setattr(run_pass, "plan", plan)
    monkeypatch.setattr(SignatureCache, "entry", entry)
    monkeypatch.setattr(np, "flatnonzero", flatnonzero)
    monkeypatch.setattr(evaluator, "reason_histogram", histogram)
    monkeypatch.setattr(evaluator.PodStrategy, "_among_equals", among)
    replay(trace, "pod", seed=1)
    monkeypatch.undo()
    assert fired["plan"] >= 100 and fired["message"] >= 5, fired  # (684 and 14 when written)
    on = report_bytes(trace, "pod", tmp_path / "on", seed=1)
    assert on == report_bytes(trace, "pod", tmp_path / "ref", seed=1, opportunistic_batching=False)
