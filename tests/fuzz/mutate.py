"""Structured mutation of gangsim's inputs, deterministic given a seed.

``make_case(seed)`` picks a target (``run`` / ``validate`` of a trace, ``run --config`` of a
scheduler configuration, or ``import KIND`` of an importer input), a valid seed document and one
to three mutations, all drawn from ``random.Random(seed)`` (never the global random state), and
returns a ``Case``: the files to write, the CLI arguments and a human description of what was
done. ``tests/fuzz/runner.py`` runs a case and classifies the outcome; the pytest suite
(``tests/fuzz/test_fuzz.py``) and ``python -m benchmarks fuzz N`` share both.

Mutations of structured documents (YAML / JSON Lines, parsed then re-serialised in the same
format): replace a random field's value by a value of another type (list, map, 10**30, 1e308,
a negative number, "", a 10,000-character string, "300000000000000000000Ti", …), delete a field,
nest a value one level deeper, duplicate an object, change ``kind``. Of tabular importer inputs
(openb CSV, SWF, Gavel): replace / delete a cell, duplicate a row, gzip the file. Of any file's
bytes: truncate at a random byte, inject invalid UTF-8.
"""

from __future__ import annotations

import copy
import gzip
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
HORIZON = "1h"  # keeps valid replays quick

# -- seed documents --------------------------------------------------------------------------

# Bundled traces of the workload kinds (gangsim.load.controllers): the "workloads" family mutates
# them; the other families leave them out, so that adding one keeps every recorded seed's case.
WORKLOAD_TRACES = ("jobset-gpu.yaml", "lws-gpu.yaml", "pytorchjob.yaml", "volcano-job.yaml")


def trace_seeds() -> list[Path]:
    """Valid traces: the bundled ones and the golden ones (sorted: the order is part of a seed)."""
    bundled = sorted(p for p in (ROOT / "traces").glob("*.yaml") if p.name not in WORKLOAD_TRACES)
    found = bundled + sorted(p for p in (ROOT / "tests" / "golden" / "traces").iterdir() if p.suffix in (".yaml", ".yml", ".jsonl", ".json"))
    return found


def workload_seeds() -> list[Path]:
    """Valid traces of the workload kinds: the bundled ones and the controller test fixtures."""
    fixtures = sorted(p for p in (ROOT / "tests" / "load" / "controllers").glob("*.yaml") if p.name != "pool.yaml")
    return [ROOT / "traces" / name for name in WORKLOAD_TRACES] + fixtures


CONFIG_SEEDS = ("traces/configs/binpack-gpus.yaml",)
CONFIG_TRACE = "traces/deadlock.yaml"  # the trace replayed with a mutated --config
KUBECTL_SEEDS = ("tests/importers/fixtures/kubectl-cluster.yaml",)

# Small valid inputs of the tabular importers, in the shape of tests/importers/test_*.py.
OPENB_NODES = "sn,cpu_milli,memory_mib,gpu,model\nn-0,32000,262144,2,T4\nn-1,64000,524288,8,V100M32\n"
OPENB_PODS = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    "p-0,4000,1024,1,500,,BE,Running,10,100,12\n"
    "p-1,4000,1024,1,600,,BE,Running,20,200,20\n"
    "p-2,4000,1024,1,1000,T4,LS,Running,30,300,30\n"
    "p-3,4000,1024,1,1000,,LS,Pending,40,400,\n"
    "p-4,8000,4096,2,1000,V100M32,LS,Running,50,500,55\n"
)


def _swf_line(job: int, submit: int, wait: int, run: int, procs: int, status: int = 1, queue: int = 1, req: int = -1) -> str:
    fields = [job, submit, wait, run, procs, -1, -1, req, 3600, -1, status, 1, 1, -1, queue, 1, -1, -1]
    return " ".join(str(f) for f in fields) + "\n"


SWF = (
    "; Version: 2.2\n; MaxNodes: 4\n; MaxProcs: 32\n; MaxQueues: 2\n"
    + _swf_line(1, 0, 5, 100, 12) + _swf_line(2, 10, 0, 50, 3, queue=2) + _swf_line(3, 20, 30, 0, 8, status=5)
    + _swf_line(4, 30, 0, 60, -1, req=16, status=0) + _swf_line(5, 40, 0, 70, 2)
)  # fmt: skip
GAVEL = "A3C\tcmd\t-n\t1\t100\t0.0\t16\nA3C\tcmd\t-n\t1\t100\t5\t4\nResNet-18\tcmd\t-n\t2\t5000\t60.5\t8\n"

# -- replacement values ------------------------------------------------------------------------

LONG = "x" * 10_000
HUGE_QTY = "300000000000000000000Ti"


def _values(rng: random.Random, old) -> tuple[object, str]:
    """A value of another type (or out of range) to put where ``old`` was, and its label."""
    choices = [
        ([1, 2], "a list"),
        ({"a": 1}, "a map"),
        (10**30, "10**30"),
        (-(10**30), "-10**30"),
        (1e308, "1e308"),
        (10**8, "10**8"),
        ("", "an empty string"),
        (LONG, "a 10,000-character string"),
        (HUGE_QTY, repr(HUGE_QTY)),
        (None, "null"),
        (True, "true"),
        ("1e308", "'1e308'"),
        (-1, "-1"),
    ]
    if isinstance(old, bool):
        pass
    elif isinstance(old, (int, float)):
        choices.append((-old if old else -1, "its negative"))
        choices.append((float(old) + 0.5, "a fraction"))
    elif isinstance(old, str) and old[:1].isdigit():
        choices.append(("-" + old, "its negative"))
    return rng.choice(choices)


def _text_values(rng: random.Random, old: str) -> tuple[str, str]:
    """Replacement cells for the tabular formats."""
    choices = ["[1, 2]", "{a: 1}", str(10**30), "1e308", "-1", "", LONG, HUGE_QTY, "nan", "inf", "0", "x", "1.5", str(2**63), str(10**8)]
    if old[:1].isdigit():
        choices.append("-" + old)
    value = rng.choice(choices)
    label = "a 10,000-character string" if value == LONG else repr(value)
    return value, label



KINDS = ["Trace", "NodePool", "Node", "Pod", "Job", "PodGroup", "Workload", "PriorityClass", "List", "Deployment", "KubeSchedulerConfiguration", "", "Nonsense"]

# -- the case ------------------------------------------------------------------------------------


@dataclass
class Case:
    seed: int
    family: str | None
    target: str  # run, validate, config, import:KIND
    source: str  # the seed document(s), relative to the repository (or "<builtin …>")
    files: dict[str, bytes]  # name -> content, written into a scratch folder
    args: list[str]  # CLI args; "{dir}" is replaced by the scratch folder
    mutations: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return f"seed={self.seed} family={self.family or 'all'} target={self.target} source={self.source} mutations={'; '.join(self.mutations) or 'none'}"


def _paths(node, prefix=()):
    """Every (path, value) below ``node`` (not the root itself)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield prefix + (key,), value
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield prefix + (i,), value
            yield from _paths(value, prefix + (i,))


def _parent(docs, path):
    node = docs
    for step in path[:-1]:
        node = node[step]
    return node


def _fmt_path(path) -> str:
    out = f"doc[{path[0]}]"
    for step in path[1:]:
        out += f"[{step}]" if isinstance(step, int) else f".{step}"
    return out


def mutate_docs(rng: random.Random, docs: list, notes: list[str]) -> list:
    """One structural mutation of a list of documents (in place; returns it)."""
    op = rng.choices(["replace", "delete", "nest", "duplicate", "kind"], weights=[50, 15, 12, 10, 13])[0]
    if op == "duplicate":
        doc_i = rng.randrange(len(docs))
        containers = [(p, v) for p, v in _paths(docs) if isinstance(v, list) and v]
        if containers and rng.random() < 0.5:
            path, lst = rng.choice(containers)
            i = rng.randrange(len(lst))
            lst.insert(i, copy.deepcopy(lst[i]))
            notes.append(f"duplicate {_fmt_path(path)}[{i}]")
        else:
            docs.insert(doc_i, copy.deepcopy(docs[doc_i]))
            notes.append(f"duplicate doc[{doc_i}]")
        return docs
    if op == "kind":
        with_kind = [i for i, d in enumerate(docs) if isinstance(d, dict) and "kind" in d]
        if with_kind:
            i = rng.choice(with_kind)
            new = rng.choice(KINDS)
            notes.append(f"doc[{i}].kind: {docs[i]['kind']!r} -> {new!r}")
            docs[i]["kind"] = new
            return docs
        op = "replace"
    paths = [(p, v) for p, v in _paths(docs) if len(p) > 1]
    if not paths:
        return docs
    # prefer leaves (numbers, strings): that is where the loader's parsing lives
    leaves = [pv for pv in paths if not isinstance(pv[1], (dict, list))]
    path, old = rng.choice(leaves if leaves and rng.random() < 0.8 else paths)
    parent = _parent(docs, path)
    key = path[-1]
    if op == "replace":
        value, label = _values(rng, old)
        parent[key] = value
        notes.append(f"replace {_fmt_path(path)} = {_short(old)} with {label}")
    elif op == "delete":
        del parent[key]
        notes.append(f"delete {_fmt_path(path)}")
    else:  # nest
        if rng.random() < 0.5:
            parent[key] = [old]
            notes.append(f"nest {_fmt_path(path)} in a list")
        else:
            parent[key] = {str(key): old}
            notes.append(f"nest {_fmt_path(path)} in a map")
    return docs


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def load_docs(data: bytes, suffix: str) -> list:
    if suffix == ".jsonl":
        return [json.loads(line) for line in data.splitlines() if line.strip()]
    return [d for d in yaml.safe_load_all(data) if d is not None]


def dump_docs(docs: list, suffix: str) -> bytes:
    if suffix == ".jsonl":
        return b"".join(json.dumps(d, separators=(",", ":")).encode() + b"\n" for d in docs)
    return yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True, width=1 << 20).encode()


def mutate_table(rng: random.Random, text: str, sep: str | None, notes: list[str], skip_prefix: str = "") -> str:
    """One mutation of a line-oriented format: replace / delete a cell, duplicate a row."""
    lines = text.splitlines(keepends=True)
    rows = [i for i, line in enumerate(lines) if line.strip() and not (skip_prefix and line.startswith(skip_prefix))]
    i = rng.choice(rows)
    line = lines[i].rstrip("\n")
    op = rng.choices(["replace", "delete", "duplicate"], weights=[70, 15, 15])[0]
    if op == "duplicate":
        lines.insert(i, lines[i] if lines[i].endswith("\n") else lines[i] + "\n")
        notes.append(f"duplicate line {i + 1}")
        return "".join(lines)
    cells = line.split(sep) if sep else line.split()
    j = rng.randrange(len(cells))
    joiner = sep if sep else " "
    if op == "delete":
        del cells[j]
        notes.append(f"delete line {i + 1} cell {j + 1}")
    else:
        value, label = _text_values(rng, cells[j])
        if sep is None:
            value = value.replace(" ", "") or "-"
        elif sep == ",":
            value = value.replace(",", ";")
        notes.append(f"replace line {i + 1} cell {j + 1} = {_short(cells[j])} with {label}")
        cells[j] = value
    lines[i] = joiner.join(cells) + "\n"
    return "".join(lines)


def mutate_bytes(rng: random.Random, data: bytes, notes: list[str]) -> bytes:
    if rng.random() < 0.5:
        cut = rng.randrange(len(data)) if data else 0
        notes.append(f"truncate at byte {cut} of {len(data)}")
        return data[:cut]
    at = rng.randrange(len(data) + 1)
    bad = rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80\x80", b"\xfe\xff"])
    notes.append(f"inject invalid UTF-8 {bad!r} at byte {at}")
    return data[:at] + bad + data[at:]


def _n_mutations(rng: random.Random) -> int:
    return rng.choices([1, 2, 3], weights=[60, 25, 15])[0]


def _structured(rng: random.Random, data: bytes, suffix: str, notes: list[str]) -> bytes:
    docs = load_docs(data, suffix)
    n = _n_mutations(rng)
    byte_level = rng.random() < 0.15
    for _ in range(n):
        mutate_docs(rng, docs, notes)
    out = dump_docs(docs, suffix)
    if byte_level:
        out = mutate_bytes(rng, out, notes)
    return out


def _tabular(rng: random.Random, text: str, sep: str | None, notes: list[str], skip_prefix: str = "") -> bytes:
    for _ in range(_n_mutations(rng)):
        text = mutate_table(rng, text, sep, notes, skip_prefix)
    out = text.encode()
    if rng.random() < 0.15:
        out = mutate_bytes(rng, out, notes)
    return out


def _maybe_gzip(rng: random.Random, name: str, data: bytes, notes: list[str]) -> tuple[str, bytes]:
    if rng.random() >= 0.15:
        return name, data
    packed = gzip.compress(data, mtime=0)
    if rng.random() < 0.5:
        cut = rng.randrange(len(packed))
        notes.append(f"gzip, then truncate at byte {cut} of {len(packed)}")
        packed = packed[:cut]
    else:
        notes.append("gzip")
    return name + ".gz", packed


TARGETS = ["run", "validate", "config", "import:kubectl", "import:openb", "import:swf", "import:gavel"]
WEIGHTS = [30, 20, 5, 15, 12, 10, 8]


FAMILIES = {
    "loader": ("run", "validate", "config"),
    "importers": ("import:kubectl", "import:openb", "import:swf", "import:gavel"),
    "workloads": ("run", "validate"),  # on workload_seeds()
}


def make_case(seed: int, family: str | None = None) -> Case:
    """The case of ``seed``: any target, or one of ``FAMILIES[family]`` (a different case)."""
    rng = random.Random(seed if family is None else f"{family}:{seed}")
    allowed = FAMILIES[family] if family else TARGETS
    target = rng.choices(allowed, weights=[w for t, w in zip(TARGETS, WEIGHTS, strict=True) if t in allowed])[0]
    notes: list[str] = []
    if target in ("run", "validate"):
        seeds = workload_seeds() if family == "workloads" else trace_seeds()
        path = rng.choice(seeds)
        name = "trace" + path.suffix
        data = _structured(rng, path.read_bytes(), path.suffix, notes)
        args = ["run", "{dir}/" + name, "--format", "json", "--horizon", HORIZON, "--no-progress"] if target == "run" else ["validate", "{dir}/" + name]
        return Case(seed, family, target, str(path.relative_to(ROOT)), {name: data}, args, notes)
    if target == "config":
        source = rng.choice(CONFIG_SEEDS)
        data = _structured(rng, (ROOT / source).read_bytes(), ".yaml", notes)
        args = ["run", str(ROOT / CONFIG_TRACE), "--config", "{dir}/config.yaml", "--format", "json", "--horizon", HORIZON, "--no-progress"]
        return Case(seed, family, target, source, {"config.yaml": data}, args, notes)
    kind = target.split(":", 1)[1]
    if kind == "kubectl":
        source = rng.choice(KUBECTL_SEEDS)
        data = _structured(rng, (ROOT / source).read_bytes(), ".yaml", notes)
        files = {"cluster.yaml": data}
        args = ["import", "kubectl", "{dir}/cluster.yaml"]
    elif kind == "openb":
        source = "<builtin openb nodes.csv + pods.csv>"
        which = rng.random()
        nodes, pods = OPENB_NODES.encode(), OPENB_PODS.encode()
        if which < 0.3:
            notes.append("nodes.csv:")
            nodes = _tabular(rng, OPENB_NODES, ",", notes)
        else:
            notes.append("pods.csv:")
            pods = _tabular(rng, OPENB_PODS, ",", notes)
        pods_name, pods = _maybe_gzip(rng, "pods.csv", pods, notes)
        files = {"nodes.csv": nodes, pods_name: pods}
        args = ["import", "openb", "{dir}/nodes.csv", "{dir}/" + pods_name]
    elif kind == "swf":
        source = "<builtin tiny.swf>"
        name, data = _maybe_gzip(rng, "tiny.swf", _tabular(rng, SWF, None, notes), notes)
        files = {name: data}
        args = ["import", "swf", "{dir}/" + name]
    else:
        source = "<builtin vc.trace>"
        files = {"vc.trace": _tabular(rng, GAVEL, "\t", notes)}
        args = ["import", "gavel", "{dir}/vc.trace", "--nodes", "2"]
    return Case(seed, family, target, source, files, args, notes)
