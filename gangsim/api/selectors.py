"""Label selectors and node selector terms, with the matching rules of apimachinery."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

LABEL_VALUE_MAX = 63
LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")  # validation.IsValidLabelValue


def is_label_value(value: str) -> bool:
    """``validation.IsValidLabelValue`` (apimachinery): at most 63 characters of the label regex."""
    return len(value) <= LABEL_VALUE_MAX and LABEL_VALUE_RE.match(value) is not None


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist (| Gt | Lt for node selectors)
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if op in ("Gt", "Lt"):
            if self.key not in labels:
                return False
            try:
                have = int(labels[self.key])
            except ValueError:
                return False
            want = int(self.values[0])
            return have > want if op == "Gt" else have < want
        raise ValueError(f"unknown operator {op}")  # rejected at load; a bug if seen here


@dataclass(frozen=True, slots=True)
class LabelSelector:
    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.match_labels and not self.match_expressions

    def matches(self, labels: Mapping[str, str]) -> bool:
        """An empty selector matches everything (``LabelSelectorAsSelector``)."""
        for k, v in self.match_labels:
            if labels.get(k) != v:
                return False
        return all(r.matches(labels) for r in self.match_expressions)


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()  # only metadata.name is valid

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        """A term with no requirements matches nothing (``nodeaffinity`` semantics); so does a
        term whose selector does not parse (``nodeSelectorRequirementsAsSelector`` in
        component-helpers nodeaffinity: ``labels.NewRequirement`` rejects an In/NotIn value that
        is not a valid label value, and the term's parse error makes it match no node)."""
        if not self.match_expressions and not self.match_fields:
            return False
        if not _parses(self):
            return False
        if not all(r.matches(labels) for r in self.match_expressions):
            return False
        fields = {"metadata.name": node_name}
        return all(r.matches(fields) for r in self.match_fields)


@lru_cache(maxsize=4096)
def _parses(term: NodeSelectorTerm) -> bool:
    return all(is_label_value(v) for r in term.match_expressions if r.operator in ("In", "NotIn") for v in r.values)


def node_selector_matches(terms: tuple[NodeSelectorTerm, ...], labels: Mapping[str, str], node_name: str) -> bool:
    """Terms are ORed."""
    return any(t.matches(labels, node_name) for t in terms)


def node_matches_pod(spec, labels: Mapping[str, str], node_name: str) -> bool:  # noqa: ANN001 - api.PodSpec
    """``nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`` (component-helpers): the pod's
    ``nodeSelector`` and required node affinity terms."""
    for k, v in spec.node_selector.items():
        if labels.get(k) != v:
            return False
    aff = spec.affinity
    if aff is not None and aff.node_required is not None:
        return node_selector_matches(aff.node_required, labels, node_name)
    return True
