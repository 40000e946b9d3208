"""A self-contained HTML report: headings, tables, PNG figures (base64 ``data:`` URIs) and the
plotted data as JSON.

One file, no scripts, no network: it opens from a CI artifact or an e-mail attachment. The data
block is ``<script type="application/json" id="gangsim-data">…</script>`` — a JSON island browsers
never execute; ``<``, ``>`` and ``&`` inside it are written as ``\\u003c`` … so no string in the
data can end the element. Deterministic bytes for the same inputs.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from gangsim.report.render_diff import ToneGrid
from gangsim.report.summary import Grid

__all__ = ["DATA_ELEMENT_ID", "Heading", "Image", "Paragraph", "extract_data", "render_html"]

DATA_ELEMENT_ID = "gangsim-data"


@dataclass(frozen=True, slots=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True, slots=True)
class Paragraph:
    text: str
    tone: str = ""  # "better" | "worse" | ""


@dataclass(frozen=True, slots=True)
class Image:
    name: str  # the PNG's file name next to report.html
    png: bytes
    alt: str


Block = Heading | Paragraph | Image | Grid | ToneGrid

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px;
       color: #222; padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; } h3 { font-size: 1.05rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
th, td { padding: 0.2rem 0.7rem; border-bottom: 1px solid #e3e3e3; }
th { text-align: left; border-bottom: 2px solid #999; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: 0.3rem 0; }
.better { color: #1a7f37; } .worse { color: #cf222e; } .same { color: #888; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5rem 0 1rem; }
footer { color: #888; font-size: 0.8rem; margin-top: 3rem; }
"""


def _table(grid: Grid | ToneGrid) -> str:
    tones = grid.tones if isinstance(grid, ToneGrid) else tuple(("",) * len(grid.columns) for _ in grid.rows)
    parts = [f"<table><caption>{html.escape(grid.title)}</caption><thead><tr>"]
    for name, numeric in zip(grid.columns, grid.numeric, strict=True):
        attr = ' class="num"' if numeric else ""
        parts.append(f"<th{attr}>{html.escape(name)}</th>")
    parts.append("</tr></thead><tbody>")
    for row, row_tones in zip(grid.rows, tones, strict=True):
        parts.append("<tr>")
        for cell, numeric, tone in zip(row, grid.numeric, row_tones, strict=True):
            classes = " ".join(c for c in ("num" if numeric else "", tone if tone in ("better", "worse", "same") else "") if c)
            attr = f' class="{classes}"' if classes else ""
            parts.append(f"<td{attr}>{html.escape(cell)}</td>")
        parts.append("</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def _block(block: Block) -> str:
    if isinstance(block, Heading):
        level = min(max(block.level, 1), 6)
        return f"<h{level}>{html.escape(block.text)}</h{level}>"
    if isinstance(block, Paragraph):
        attr = f' class="{block.tone}"' if block.tone else ""
        return f"<p{attr}>{html.escape(block.text)}</p>"
    if isinstance(block, Image):
        data = base64.b64encode(block.png).decode("ascii")
        return f'<figure><img alt="{html.escape(block.alt)}" title="{html.escape(block.name)}" src="data:image/png;base64,{data}"></figure>'
    return _table(block)


def _json_island(data: dict) -> str:
    raw = orjson.dumps(data, option=orjson.OPT_INDENT_2)
    safe = raw.replace(b"&", b"\\u0026").replace(b"<", b"\\u003c").replace(b">", b"\\u003e")
    return safe.decode("utf-8")


def render_html(title: str, blocks: Sequence[Block], data: dict) -> bytes:
    """The whole document as UTF-8 bytes."""
    body = "\n".join(_block(b) for b in blocks)
    doc = (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n{body}\n"
        f'<script type="application/json" id="{DATA_ELEMENT_ID}">\n{_json_island(data)}\n</script>\n'
        "<footer>Written by gangsim. The figures' data is embedded in this file as JSON "
        f'(element <code>#{DATA_ELEMENT_ID}</code>).</footer>\n'
        "</body>\n</html>\n"
    )
    return doc.encode("utf-8")


def extract_data(document: str | bytes) -> dict:
    """The JSON data block of a report written by :func:`render_html` (for tests and scripts)."""
    text = document.decode("utf-8") if isinstance(document, bytes) else document
    start_tag = f'<script type="application/json" id="{DATA_ELEMENT_ID}">'
    start = text.index(start_tag) + len(start_tag)
    end = text.index("</script>", start)
    return orjson.loads(text[start:end])
