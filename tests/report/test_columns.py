"""The event log's column store (issue 16 item 4): what is appended and written into the columns is
what the log reads back and what the tables hold.

Each property compares the column store with a plain reference: a list of ``PodRecord`` values
changed in place as the simulator once did (and a table built from them row by row, the way
``tables.py`` did before), and the events as rendered tuples, the ``Scheduled`` message written
out ("Successfully assigned <pod> to <node>", kubernetes pkg/scheduler/schedule_one.go,
bindingCycle). The replay-level check is ``tests/golden``: every bundled trace's report bytes."""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gangsim import eventlog
from gangsim.columns import Coded, Strings
from gangsim.eventlog import ASSIGNED, NO_TIME, EndReason, EventLog, EventReason, PodRecord, render_message
from gangsim.report import build_report
from gangsim.report.tables import EVENTS_SCHEMA, PODS_SCHEMA, REASON_ENUM, Tables, events_table, pods_table
from tests.report.logs import small_log

NAMES = st.sampled_from(["ns/a-0", "ns/a-1", "ns/a-10", "ns/b-2", "other/c-0", "ns/ä-1"])
NODES = st.sampled_from(["", "n1", "n2", "node-10"])
TIMES = st.integers(min_value=0, max_value=10**12)
TEXT = st.sampled_from(["", "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.", "gate: waiting for 3 pods", "ü,\"quoted\"\nline"])

records = st.builds(
    PodRecord,
    pod=NAMES,
    attempt=st.integers(0, 3),
    gang=st.sampled_from(["", "ns/a", "ns/b"]),
    namespace=st.sampled_from(["ns", "other"]),
    gpus=st.integers(0, 8),
    priority=st.integers(-(2**31), 2**31 - 1),
    created_ms=st.integers(0, 5) | TIMES,
    milli_cpu=st.integers(0, 64_000),
    memory_bytes=st.integers(0, 2**40),
    scheduling_attempts=st.integers(0, 5),
    waiting_reason=TEXT,
    gpu_milli_requested=st.integers(0, 8000),
)

# what the simulator does to a recorded pod: (row, action, values)
changes = st.lists(
    st.tuples(
        st.integers(0, 10**6),
        st.sampled_from(["attempt", "wait", "bind", "end"]),
        st.tuples(TIMES, NODES, st.sampled_from(["", "0", "0,1", "3,5,7"]), st.integers(0, 8000), TEXT, st.sampled_from(list(EndReason))),
    ),
    max_size=30,
)


def _reference_pods_table(rows: list[PodRecord]) -> pl.DataFrame:
    """The pods table built row by row from records (the former ``tables.pods_table``)."""
    s = lambda ms: None if ms is None else ms / 1000  # noqa: E731
    data = {
        "pod": [p.pod for p in rows], "attempt": [p.attempt for p in rows], "gang": [p.gang for p in rows],
        "namespace": [p.namespace for p in rows], "node": [p.node for p in rows], "gpus": [p.gpus for p in rows],
        "priority": [p.priority for p in rows], "created_s": [p.created_ms / 1000 for p in rows],
        "bound_s": [s(p.bound_ms) for p in rows], "ended_s": [s(p.ended_ms) for p in rows],
        "end_reason": [str(p.end_reason) for p in rows], "scheduling_attempts": [p.scheduling_attempts for p in rows],
        "waiting_reason": [p.waiting_reason for p in rows], "milli_cpu": [p.milli_cpu for p in rows],
        "memory_bytes": [p.memory_bytes for p in rows], "devices": [p.devices for p in rows], "gpu_milli": [p.gpu_milli for p in rows],
    }  # fmt: skip
    return pl.DataFrame(data, schema=PODS_SCHEMA).sort(["created_s", "pod", "attempt"], maintain_order=True)


@settings(max_examples=150, deadline=None)
@given(st.lists(records, max_size=12), changes)
def test_pod_columns_read_back_what_was_added_and_written(added, writes):
    log = EventLog()
    reference = [copy.copy(r) for r in added]
    rows = [log.pods.add(r) for r in added]
    assert rows == list(range(len(added)))
    for pick, action, (t, node, devices, milli, text, reason) in writes:
        if not added:
            break
        row = pick % len(added)
        ref = reference[row]
        if action == "attempt":
            log.pods.scheduling_attempts[row] += 1
            ref.scheduling_attempts += 1
        elif action == "wait":
            log.pods.waiting_reason[row] = text
            ref.waiting_reason = text
        elif action == "bind":
            log.pods.bind(row, t, node, devices, milli)
            ref.bound_ms, ref.node, ref.devices, ref.waiting_reason, ref.gpu_milli = t, node, devices, "", milli
        else:
            log.pods.end(row, t, reason)
            ref.ended_ms, ref.end_reason = t, reason
    assert list(log.pods) == reference
    assert len(log.pods) == len(reference) and (not reference or log.pods[-1] == reference[-1])
    assert pods_table(log).equals(_reference_pods_table(reference))


def test_a_time_never_set_is_none_in_the_record_and_null_in_the_table():
    log = EventLog()
    log.pods.add(PodRecord("ns/p", 0, "", "ns", 1, 0, 0))
    assert (log.pods.bound_ms[0], log.pods[0].bound_ms, log.pods[0].ended_ms) == (NO_TIME, None, None)
    assert pods_table(log).select("bound_s", "ended_s").row(0) == (None, None)


events = st.lists(
    st.tuples(
        TIMES,
        st.sampled_from(["Pod", "PodGroup", "Job", "Node"]),
        NAMES,
        NODES,
        st.sampled_from([EventReason.SCHEDULED, EventReason.PREEMPTED, EventReason.CREATED, EventReason.GANG_STARTED, "assigned"]),
        TEXT,
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(events)
def test_events_table_holds_what_was_appended(appended):
    """Reasons outside the aggregated ones are recorded every time, so each append is one row;
    an ``assigned`` row's message is the binder's text, rendered from its own object and node."""
    log = EventLog()
    want = []
    for t, kind, obj, node, reason, text in sorted(appended, key=lambda e: e[0]):
        if reason == "assigned":
            log.assigned(t, obj, node)
            want.append((t / 1000, "Pod", obj, node, "Scheduled", f"Successfully assigned {obj} to {node}"))
        else:
            log.event(t, kind, obj, node, reason, text)
            want.append((t / 1000, kind, obj, node, str(reason), text))
    assert [(t / 1000, k, o, n, str(r), m) for t, k, o, n, r, m in zip(log.ev_t_ms, log.ev_kind, log.ev_object, log.ev_node, log.ev_reason, log.ev_message)] == want
    table = events_table(log)
    assert table.schema == EVENTS_SCHEMA and table.rows() == want
    assert table["reason"].dtype == REASON_ENUM


@settings(max_examples=100, deadline=None)
@given(events, st.integers(1, 5), st.sets(st.integers(0, 25)))
def test_buffered_events_are_in_the_columns_whenever_they_are_read(appended, chunk, reads):
    """Events wait in a buffer until ``EVENT_CHUNK`` of them are appended to the columns at
    once; a read of any column (here after the events numbered in ``reads``), a copy for a
    longer window and a pickled log see every event recorded so far, each once."""
    want = []
    log = EventLog()
    original = eventlog.EVENT_CHUNK
    eventlog.EVENT_CHUNK = chunk
    try:
        for i, (t, kind, obj, node, reason, text) in enumerate(sorted(appended, key=lambda e: e[0])):
            if reason == "assigned":
                log.assigned(t, obj, node)
                want.append((t, "Pod", obj, node, "Scheduled", f"Successfully assigned {obj} to {node}"))
            else:
                log.event(t, kind, obj, node, reason, text)
                want.append((t, kind, obj, node, str(reason), text))
            if i in reads:
                assert list(zip(log.ev_t_ms, log.ev_kind, log.ev_object, log.ev_node, map(str, log.ev_reason), log.ev_message)) == want
    finally:
        eventlog.EVENT_CHUNK = original
    unpickled = pickle.loads(pickle.dumps(log))
    log.info.stopped_by = "idle"
    longer = log.over_window(log.info.horizon_ms + 1)
    for read in (unpickled, longer, log):
        assert list(zip(read.ev_t_ms, read.ev_kind, read.ev_object, read.ev_node, map(str, read.ev_reason), read.ev_message)) == want


@given(st.lists(st.sampled_from(["a", "b", "", "ü", "c"]), max_size=30), st.lists(st.text(max_size=6) | NAMES, max_size=30))
def test_extend_is_one_append_per_value(coded, strings):
    """``Coded.extend`` and ``Strings.extend`` (a chunk of events at once) leave each column as
    one ``append`` per value does: the same rows, the same codes in the same order."""
    one_by_one, at_once = Coded(known=["c"]), Coded(known=["c"])
    for v in coded:
        one_by_one.append(v)
    at_once.extend(coded[:7])
    at_once.extend(coded[7:])
    assert (at_once.values, list(at_once.codes)) == (one_by_one.values, list(one_by_one.codes))
    appended, extended = Strings(), Strings()
    for v in strings:
        appended.append(v)
    extended.extend(strings[:5])
    extended.extend(strings[5:])
    assert (bytes(extended.data), list(extended.ends)) == (bytes(appended.data), list(appended.ends))


def test_render_message_joins_the_template_parts():
    assert render_message(ASSIGNED, "", "ns/p-0", "n7") == "Successfully assigned ns/p-0 to n7"
    assert render_message(0, "as recorded", "ns/p-0", "n7") == "as recorded"


@given(st.lists(st.sampled_from(["a", "b", "", "ü"]), max_size=30), st.lists(st.tuples(st.integers(0, 100), st.sampled_from(["a", "c"])), max_size=5))
def test_coded_column_reads_as_the_list_of_its_values(values, writes):
    column = Coded(known=["c"])
    want = list(values)
    for v in values:
        column.append(v)
    for pick, v in writes:
        if want:
            column[pick % len(want)] = v
            want[pick % len(want)] = v
    assert (list(column), len(column), column == want) == (want, len(want), True)
    assert len(column.values) == len(set(column.values)) and column.values[0] == "c"


def test_tables_are_built_when_read_and_build_keeps_nothing():
    log = small_log()
    tables = build_report(log).tables
    assert isinstance(tables, Tables) and list(tables) == ["gangs", "pods", "victims", "timeline", "events"]
    assert tables._kept == {}  # the report built none of them
    pods = tables.build("pods")
    assert tables._kept == {} and pods.equals(pods_table(log))
    assert tables["pods"] is tables["pods"] and set(tables._kept) == {"pods"}
    assert tables.build("pods") is tables["pods"]  # a kept table is not built again


@given(st.lists(st.text(max_size=12) | NAMES, max_size=30))
def test_strings_column_reads_back_every_value_ascii_or_not(values):
    column = Strings()
    for v in values:
        column.append(v)
    assert (column.to_list(), list(column), len(column)) == (values, values, len(values))
    assert [column[i] for i in range(len(values))] == values
    assert all(column[-i] == values[-i] for i in range(1, len(values) + 1))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="ab/-0ü", min_size=1, max_size=4), max_size=200))
def test_next_attempt_counts_the_incarnations_of_a_name(names):
    """What the cluster asked a dict for (the previous attempt of that name, plus one): the same
    through growing the hash table and colliding names."""
    log = EventLog()
    seen: dict[str, int] = {}
    for name in names:
        attempt = log.pods.next_attempt(name)
        assert attempt == seen.get(name, -1) + 1
        seen[name] = attempt
        log.pods.add(PodRecord(name, attempt, "", "ns", 0, 0, 0))
    assert {name: log.pods.next_attempt(name) for name in seen} == {name: n + 1 for name, n in seen.items()}
    assert log.pods.next_attempt("never added") == 0


@pytest.mark.parametrize("fake_crc", [lambda b: 7, lambda b: 0xFFFF_FFF0 + len(b) % 4, lambda b: (len(b) % 2) << 31 | 5])
def test_names_whose_hashes_collide_keep_their_own_attempts(monkeypatch, fake_crc):
    """``PodLog._latest`` keeps each name's hash beside its row and reads a row's name only when
    the hashes agree: names of one hash (all, some, hashes above 2**31 and ones differing only
    in bit 31, which the table keeps) are still told apart by name, through the table's growth."""
    monkeypatch.setattr(eventlog, "crc32", fake_crc)
    log = _created(names := [f"ns/p-{i % 41}" for i in range(300)] + ["x", "xy", "x"])
    assert [(r.pod, r.attempt) for r in log.pods] == [(name, n) for name, n in zip(names, _attempts(names))]
    assert log.pods.next_attempt("never added") == 0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="ab/-0ü", min_size=1, max_size=4), min_size=33, max_size=200))  # (33 rows: the table grows)
def test_created_gives_each_incarnation_its_attempt(names):
    """``PodLog.created`` (the simulator's way to add a row) looks the name up once for the attempt
    and the row: the same attempts as the dict, through the hash table's growth (which moves the
    slot it found) and colliding names."""
    log = _created(names)
    assert [(r.pod, r.attempt) for r in log.pods] == [(name, n) for name, n in zip(names, _attempts(names))]


def _created(names: list[str]) -> EventLog:
    """A log with a row per name through ``PodLog.created``, each row and attempt checked as
    added against a dict, and each name's next attempt after."""
    log = EventLog()
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        row, attempt = log.pods.created(name, "", "ns", 0, 0, i, 0, 0, 0)
        assert (row, attempt) == (i, seen.get(name, -1) + 1)
        seen[name] = attempt
    assert {name: log.pods.next_attempt(name) for name in seen} == {name: n + 1 for name, n in seen.items()}
    return log


def _attempts(names: list[str]) -> list[int]:
    count: dict[str, int] = {}
    out = []
    for name in names:
        out.append(count.get(name, 0))
        count[name] = out[-1] + 1
    return out


def subprocess_next_attempt(pickled: bytes, name: str) -> int:
    code = "import pickle, sys; print(pickle.loads(sys.stdin.buffer.read()).pods.next_attempt(sys.argv[1]))"
    out = subprocess.run([sys.executable, "-c", code, name], input=pickled, capture_output=True, check=True, env={**os.environ, "PYTHONHASHSEED": "12345"})
    return int(out.stdout)


def test_a_log_in_columns_survives_pickling():
    """Sweeps ship logs and reports between processes (``whatif.sweep``)."""
    log = small_log()
    log.assigned(5, "ns/x", "n1")
    back = pickle.loads(pickle.dumps(log))
    # ml/train-b-0's latest row is attempt 0 (small_log adds attempt 1 first)
    assert (back.pods, back.ev_message, back.pods.next_attempt("ml/train-b-0")) == (log.pods, log.ev_message, 1)
    assert subprocess_next_attempt(pickle.dumps(log), "ml/train-b-0") == 1  # another process, another str hash seed
    tables, again = build_report(log).tables, pickle.loads(pickle.dumps(build_report(log))).tables
    assert all(tables[name].equals(again[name]) for name in tables)
