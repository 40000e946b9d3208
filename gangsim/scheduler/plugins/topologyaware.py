"""TopologyPlacementGenerator (``framework/plugins/topologyaware``, KEP-5732): the candidate
placements of a PodGroup with ``schedulingConstraints.topology[0].key``.

- no constraint: one placement, every node (the parent placement);
- otherwise one placement per value of that node label, holding the nodes that carry it (nodes
  without the label are in none);
- members already scheduled (assumed or bound) pin the group to their domain: only that
  placement is generated, even if it leaves the group below minCount; members in two domains,
  or on a node without the label, are an Error with upstream's messages.

Upstream builds the placements from a map (random order) and breaks equal placement scores
with a random number; gangsim lists them by domain name (``sort.Strings``, as the generator's
newer revision does) so every tie goes to the first domain in that order.
"""

from __future__ import annotations

import numpy as np

from gangsim.scheduler.framework.handle import Handle
from gangsim.scheduler.framework.interface import Code, Placement, PlacementGeneratePlugin, Status
from gangsim.scheduler.framework.types import NO_NODE, PluginArgs, PodGroupState, PodInfo, PodPhase
from gangsim.scheduler.plugins import names

ERR_DOMAIN = "cannot determine domain for already scheduled pods: {}"
ERR_MORE_THAN_ONE = "more than 1 domain found for pod group: {}, {}"
ERR_NO_DOMAIN = "no topology domain found for pod {}"
ALL_NODES = ""  # the name of the one placement of a group without a topology constraint


def topology_key(group: PodGroupState) -> str:
    """``getTopologyKey``: the group's one topology key ("" without a constraint)."""
    keys = group.group.policy.topology_keys if group.group is not None else ()
    return keys[0] if keys else ""


class TopologyPlacementGenerator(PlacementGeneratePlugin):
    NAME = names.TOPOLOGY_PLACEMENT_GENERATOR

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.snapshot = handle.snapshot
        # fast path (``FastPath.placement_passes``): the domains of a key, kept while no node's
        # labels changed and no node came or went (the node table's static generation)
        self._keep = args.config.effective_fast_path.placement_passes
        self._domains: dict[str, tuple[int, dict[str, np.ndarray]]] = {}

    def domains(self, key: str) -> dict[str, np.ndarray]:
        """Each value of node label ``key`` and the live rows carrying it, in node-list order."""
        nodes = self.snapshot.nodes
        kept = self._domains.get(key)
        if kept is not None and kept[0] == nodes.static_generation:
            return kept[1]
        members: dict[str, list[int]] = {}
        for row in nodes.order.tolist():
            domain = nodes.nodes[row].labels.get(key)
            if domain is not None:
                members.setdefault(domain, []).append(row)
        found = {d: np.array(rows, dtype=np.int64) for d, rows in members.items()}
        if self._keep:
            self._domains[key] = (nodes.static_generation, found)
        return found

    def generate_placements(self, group: PodGroupState, pods: list[PodInfo]) -> tuple[list[Placement], Status | None]:
        nodes = self.snapshot.nodes
        key = topology_key(group)
        if not key:
            return [Placement(ALL_NODES, nodes.order.copy())], None
        required: str | None = None
        for m in sorted(group.members.values(), key=lambda p: p.uid):
            if m.phase not in (PodPhase.BOUND, PodPhase.WAITING) or m.node_row == NO_NODE:
                continue
            domain = nodes.nodes[m.node_row].labels.get(key)
            if domain is None:
                return [], Status(Code.ERROR, (ERR_DOMAIN.format(ERR_NO_DOMAIN.format(f"{m.namespace}/{m.name}")),), self.NAME)
            if required is not None and domain != required:
                return [], Status(Code.ERROR, (ERR_DOMAIN.format(ERR_MORE_THAN_ONE.format(required, domain)),), self.NAME)
            required = domain
        domains = self.domains(key)
        names = sorted(domains) if required is None else [required] if required in domains else []
        return [Placement(d, domains[d]) for d in names], None
