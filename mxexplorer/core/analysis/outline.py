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

from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.kinds import NodeKind

GROUPS = [("Data inputs", NodeKind.DATA), ("Parameters", NodeKind.PARAM),
          ("Auxiliary states", NodeKind.AUX), ("Operators", NodeKind.OP)]


class Kids(dict):  # type: ignore[type-arg]
    """Row -> its child rows; rows without children (nearly all) take no room."""

    def __missing__(self, row: int) -> tuple[int, ...]:
        return ()


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
    children: Kids = field(default_factory=Kids)
    top: list[int] = field(default_factory=list)
    #: node -> its first row; the others of a node shown twice in ``more_rows``
    first_row: dict[int, int] = field(default_factory=dict)
    more_rows: dict[int, list[int]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.parent)

    def rows_of(self, node: int) -> list[int]:
        first = self.first_row.get(node)
        if first is None:
            return []
        return [first] + self.more_rows.get(node, [])

    def _siblings(self, parent: int) -> list[int]:
        if parent < 0:
            return self.top
        kids = self.children.get(parent)
        if kids is None:
            kids = self.children[parent] = []
        return kids

    def _note(self, node: int, r: int) -> None:
        if node in self.first_row:
            self.more_rows.setdefault(node, []).append(r)
        else:
            self.first_row[node] = r

    def add_many(self, parent: int, entries: list[int], nodes: list[int]) -> None:
        """Rows for these entries (of these nodes) under ``parent``, at once (a filter
        rebuilds the outline per keystroke: 22,747 rows one call each took 36 ms)."""
        siblings = self._siblings(parent)
        first, count = len(self.parent), len(entries)
        self.parent.extend([parent] * count)
        self.position.extend(range(len(siblings), len(siblings) + count))
        self.entry.extend(entries)
        self.node.extend(nodes)
        self.label.extend([None] * count)
        siblings.extend(range(first, first + count))
        for r, node in zip(range(first, first + count), nodes):
            if node >= 0:
                self._note(node, r)

    def add(self, parent: int, entry: int, node: int, label: str | None = None) -> int:
        siblings = self._siblings(parent)
        r = len(self.parent)
        self.parent.append(parent)
        self.position.append(len(siblings))
        self.entry.append(entry)
        self.node.append(node)
        self.label.append(label)
        siblings.append(r)
        if node >= 0:
            self._note(node, r)
        return r


def outline(doc: GraphDocument, grouped: bool = True,
            keep: frozenset[int] | None = None) -> Outline:
    """The rows of ``doc``'s internals tree (computed once per revision); with ``keep``,
    only those internal outputs (a filter's matches), under the same headings."""
    if keep is not None:
        return _build(doc, grouped, keep)
    result: Outline = doc.cached(f"outline:{grouped}", lambda: _build(doc, grouped))
    return result


def search_index(doc: GraphDocument) -> list[str]:
    """Per internal output, "name\nop" in lower case (what a filter matches)."""
    def build() -> list[str]:
        nodes = doc.nodes
        return [f"{e.name}\n{'' if nodes[e.node].is_variable else nodes[e.node].op}".lower()
                for e in doc.internals()]
    result: list[str] = doc.cached("search_index", build)
    return result


def matching(doc: GraphDocument, text: str, regex: bool = False
             ) -> tuple[frozenset[int] | None, str | None]:
    """The internal outputs whose name or op matches ``text`` (a substring, any case;
    or a regular expression), or None for no filter; and the error of a bad pattern
    (then nothing matches)."""
    import re

    if not text:
        return None, None
    index = search_index(doc)
    if not regex:
        needle = text.lower()
        return frozenset(k for k, s in enumerate(index) if needle in s), None
    try:
        pattern = re.compile(text, re.IGNORECASE | re.MULTILINE)
    except re.error as exc:
        return frozenset(), f"invalid regular expression: {exc}"
    return frozenset(k for k, s in enumerate(index) if pattern.search(s)), None


def _build(doc: GraphDocument, grouped: bool, keep: frozenset[int] | None = None) -> Outline:
    internals = doc.internals()
    kinds = doc.kinds()
    outputs = doc.output_entries()
    key = (grouped, tuple((e.node, e.index) for e in internals), tuple(kinds),
           tuple((e.node, e.index) for e in outputs), keep)
    out = Outline(grouped, key)
    shown_entries = range(len(internals)) if keep is None else sorted(keep)
    if not grouped:
        entries = list(shown_entries)
        out.add_many(-1, entries, [internals[k].node for k in entries])
        return out
    by_kind: dict[NodeKind, list[int]] = {k: [] for _, k in GROUPS}
    for k in shown_entries:
        entry = internals[k]
        by_kind[kinds[entry.node]].append(k)
    for title, kind in GROUPS:
        rows = by_kind[kind]
        if keep is not None and not rows:
            continue                      # filtered: no empty headings
        if kind != NodeKind.OP:
            group = out.add(-1, -1, -1, f"{title} ({len(rows)})")
            out.add_many(group, rows, [internals[k].node for k in rows])
            continue
        count = len(dict.fromkeys(internals[k].node for k in rows))
        group = out.add(-1, -1, -1, f"{title} ({count})")
        multi: dict[int, int] = {}
        shown = Counter(internals[k].node for k in rows)    # visible outputs per node
        run: list[int] = []                  # single-output rows, added in bulk
        for k in rows:
            nid = internals[k].node
            if shown[nid] == 1:
                run.append(k)
                continue
            if run:
                out.add_many(group, run, [internals[j].node for j in run])
                run = []
            if nid not in multi:
                multi[nid] = out.add(group, k, nid, doc.nodes[nid].name)
            out.add(multi[nid], k, nid)
        if run:
            out.add_many(group, run, [internals[j].node for j in run])
    index_of = {(e.node, e.index): k for k, e in enumerate(internals)}
    heads = [index_of[(e.node, e.index)] for e in outputs if (e.node, e.index) in index_of]
    heads = [k for k in heads if keep is None or k in keep]
    if keep is not None and not heads:
        return out
    group = out.add(-1, -1, -1, f"Graph outputs ({len(heads)})")
    for k in heads:
        out.add(group, k, internals[k].node)
    return out


def warm(doc: GraphDocument) -> None:
    """Compute what every view asks for first; a worker calls this on a document
    nobody else holds yet, so the GUI thread finds it ready."""
    outline(doc, grouped=True)
    doc.data_inputs()
    doc.unknown_ops()
