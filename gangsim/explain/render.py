"""The explanation as text: Markdown (``--format markdown``) and the terminal form (``--format
table``, the same lines through rich without markup). JSON is the document itself."""

from __future__ import annotations

import orjson


def render_json(doc: dict) -> bytes:
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def _t(s: float | None) -> str:
    return "-" if s is None else f"{s:g}s"


def _runs(attempts: list[dict]) -> list[list[dict]]:
    """Consecutive attempts with the same outcome, one row each (the JSON keeps every attempt)."""
    runs: list[list[dict]] = []
    for a in attempts:
        same = ("evaluated", "placed", "unplaced", "first_fit_error", "group_status")
        if runs and all(runs[-1][-1][k] == a[k] for k in same):
            runs[-1].append(a)
        else:
            runs.append([a])
    return runs


def render_markdown(doc: dict) -> str:
    target = doc["target"]
    spec = doc["spec"]
    hist = doc["history"]
    out = [f"# gangsim explain: {target['kind']} {target['name']} ({doc['trace']}, policy {doc['policy']})", "", "## Verdict", "", doc["verdict"], ""]
    out += ["## Spec as the scheduler saw it", ""]
    out += [f"- {k}: {v if v not in (None, '') else '-'}" for k, v in spec.items()]
    out += ["", "## Checks", ""]
    out += [f"- [{'x' if c['ok'] else ' '}] {c['check']}: {c['detail']}" for c in doc["checks"]]
    out += ["", "## History", "", f"arrived {_t(hist['arrival_s'])}, started {_t(hist['started_s'])}, finished {_t(hist['finished_s'])}, state {hist['state']}", ""]
    if hist["attempts"]:
        out += ["| attempts | t | evaluated | placed | unplaced | first FitError | group status |", "|---:|---:|---:|---:|---:|---|---|"]
        for run in _runs(hist["attempts"]):
            a, b = run[0], run[-1]
            when = _t(a["t_s"]) if len(run) == 1 else f"{_t(a['t_s'])} – {_t(b['t_s'])}"
            out.append(f"| {len(run)} | {when} | {a['evaluated']} | {a['placed']} | {a['unplaced']} | {a['first_fit_error'] or '-'} | {a['group_status'] or '-'} |")
        out.append("")
    if hist["events"]:
        out += ["| t | object | reason | node | message |", "|---:|---|---|---|---|"]
        groups: list[list[dict]] = []  # the same reason and message at the same instant: one row
        for e in hist["events"]:
            if groups and all(groups[-1][0][k] == e[k] for k in ("t_s", "reason", "message")):
                groups[-1].append(e)
            else:
                groups.append([e])
        for g in groups:
            e = g[0]
            who = e["object"] if len(g) == 1 else f"{e['object']} … {g[-1]['object']} ({len(g)})"
            nodes = e["node"] if len(g) == 1 else f"{len({x['node'] for x in g if x['node']})} nodes" if any(x["node"] for x in g) else ""
            out.append(f"| {_t(e['t_s'])} | {who} | {e['reason']} | {nodes or '-'} | {e['message'] or '-'} |")
        out.append("")
    for title, key in (("Victims it triggered", "victims_triggered"), ("Preemptions it suffered", "victims_suffered")):
        if hist[key]:
            out += [f"## {title}", "", "| t | victim | gang | priority | node | preemptor | in vain |", "|---:|---|---|---:|---|---|---|"]
            out += [f"| {_t(v['t_s'])} | {v['victim']} | {v['victim_gang'] or '-'} | {v['priority']} | {v['node']} | {v['preemptor']} | {'yes' if v['in_vain'] else 'no'} |" for v in hist[key]]
            out.append("")
    att = doc["attempt"]
    if att is not None:
        out += [f"## Attempt at {_t(att['t_s'])} (cycle {att['cycle']}, {att['num_nodes']} nodes)", ""]
        if att["placed"]:
            out.append("placed: " + ", ".join(f"{p['pod']} → {p['node']}" for p in att["placed"]))
            out.append("")
        if att.get("fit_error"):
            out += [f"{att['failed_pod']}: `{att['fit_error']}`", "", "| Filter plugin | nodes it rejects (on its own) |", "|---|---:|"]
            out += [f"| {p} | {n} |" for p, n in att["filter"]["rejected_by_plugin"].items()]
            out += ["", "| closest node | rejected by | lacking |", "|---|---|---|"]
            for m in att["closest_nodes"]:
                plugins = "; ".join(f"{p}: {', '.join(r) or 'rejects'}" for p, r in m["plugins"].items()) or "-"
                lacking = ", ".join(f"{r} {v['requested']} wanted, {v['free']} free" for r, v in m["lacking"].items()) or "-"
                out.append(f"| {m['node']} | {plugins} | {lacking} |")
            out.append("")
        for s in att.get("scores", []):
            out += [f"Score of {s['pod']} on {s['node']}:", "", "| Score plugin | weight | raw | normalized |", "|---|---:|---:|---:|"]
            out += [f"| {p['plugin']} | {p['weight']} | {'skip' if p['raw'] is None else p['raw']} | {p['normalized']} |" for p in s["plugins"]]
            out.append("")
    return "\n".join(out).rstrip() + "\n"
