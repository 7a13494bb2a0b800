"""The internals outline: the rows of the internals tree, grouped by kind.

Pure data built once per document revision (and warmed on the worker that opens a
file), so the GUI's item model only indexes into it.  Must not import Qt.

Rows are numbered; row ``r`` has ``parent[r]`` (-1 at the top), its position
``position[r]`` among its siblings, the internal-output index ``entry[r]`` it shows
(-1 for a group heading), its ``node[r]`` (-1 for a heading) and a ``label[r]`` (the
heading's title, or the node name on the parent row of a node with several outputs;
None when the row shows its entry's own name).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from mxexplorer.core.document import GraphDocument, NodeKind

GROUPS = [("Data inputs", NodeKind.DATA), ("Parameters", NodeKind.PARAM),
          ("Auxiliary states", NodeKind.AUX), ("Operators", NodeKind.OP)]


@dataclass
class Outline:
    grouped: bool
    #: equal keys, equal rows (names and attributes aside): a view only repaints
    key: tuple[object, ...]
    parent: list[int] = field(default_factory=list)
    position: list[int] = field(default_factory=list)
    entry: list[int] = field(default_factory=list)
    node: list[int] = field(default_factory=list)
    label: list[str | None] = field(default_factory=list)
    children: list[list[int]] = field(default_factory=list)
    top: list[int] = field(default_factory=list)
    by_node: dict[int, list[int]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.parent)

    def add(self, parent: int, entry: int, node: int, label: str | None = None) -> int:
        siblings = self.children[parent] if parent >= 0 else self.top
        r = len(self.parent)
        self.parent.append(parent)
        self.position.append(len(siblings))
        self.entry.append(entry)
        self.node.append(node)
        self.label.append(label)
        self.children.append([])
        siblings.append(r)
        if node >= 0:
            self.by_node.setdefault(node, []).append(r)
        return r


def outline(doc: GraphDocument, grouped: bool = True) -> Outline:
    """The rows of ``doc``'s internals tree (computed once per revision)."""
    result: Outline = doc.cached(f"outline:{grouped}", lambda: _build(doc, grouped))
    return result


def _build(doc: GraphDocument, grouped: bool) -> Outline:
    internals = doc.internals()
    kinds = doc.kinds()
    outputs = doc.output_entries()
    key = (grouped, tuple((e.node, e.index) for e in internals), tuple(kinds),
           tuple((e.node, e.index) for e in outputs))
    out = Outline(grouped, key)
    if not grouped:
        for k, entry in enumerate(internals):
            out.add(-1, k, entry.node)
        return out
    by_kind: dict[NodeKind, list[int]] = {k: [] for _, k in GROUPS}
    for k, entry in enumerate(internals):
        by_kind[kinds[entry.node]].append(k)
    for title, kind in GROUPS:
        rows = by_kind[kind]
        if kind != NodeKind.OP:
            group = out.add(-1, -1, -1, f"{title} ({len(rows)})")
            for k in rows:
                out.add(group, k, internals[k].node)
            continue
        count = len(dict.fromkeys(internals[k].node for k in rows))
        group = out.add(-1, -1, -1, f"{title} ({count})")
        multi: dict[int, int] = {}
        shown = Counter(internals[k].node for k in rows)    # visible outputs per node
        for k in rows:
            nid = internals[k].node
            if shown[nid] == 1:
                out.add(group, k, nid)
                continue
            if nid not in multi:
                multi[nid] = out.add(group, k, nid, doc.nodes[nid].name)
            out.add(multi[nid], k, nid)
    group = out.add(-1, -1, -1, f"Graph outputs ({len(outputs)})")
    index_of = {(e.node, e.index): k for k, e in enumerate(internals)}
    for e in outputs:
        if (e.node, e.index) in index_of:
            out.add(group, index_of[(e.node, e.index)], e.node)
    return out
