"""Small YAML builders for the loader tests."""

from __future__ import annotations

import textwrap


def pod_yaml(name: str = "p", *, spec: str = "containers: [{name: c}]", namespace: str | None = None, annotations: str = "") -> str:
    """A Pod document; ``spec`` is the YAML body of spec (indented by this helper)."""
    ns = f"\n  namespace: {namespace}" if namespace else ""
    ann = f"\n  annotations: {annotations}" if annotations else ""
    body = textwrap.indent(textwrap.dedent(spec).strip("\n"), "  ")
    return f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}{ns}{ann}\nspec:\n{body}\n"


NODE = """\
apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status: {{allocatable: {{cpu: "8", memory: 32Gi, nvidia.com/gpu: "8"}}}}
"""


def node_yaml(name: str = "n1") -> str:
    return NODE.format(name=name)
