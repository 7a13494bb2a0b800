"""BlockState: which blocks the graph pane shows closed (the overview of a big graph).

Above :data:`~mxexplorer.core.render.blocks.COLLAPSE_ABOVE` visible nodes the pane shows
blocks by default, the biggest opened while the picture stays within a budget; the
user opens a block with a double-click, closes it from the menu, or asks for every
node.  Plain Python: the pane owns one and asks it what to draw.
"""
from __future__ import annotations

from mxexplorer.core.analysis.shapes import Shape, format_shape
from mxexplorer.core.analysis.stats import AnalysisResult, human_bytes, human_count
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.render import blocks, drawing
from mxexplorer.gui.host import DialogHost


class BlockState:
    def __init__(self) -> None:
        self.wanted: bool | None = None          # None: blocks when the graph is big
        self.expanded: frozenset[str] | None = None   # None: the default overview
        self.tree: blocks.BlockTree | None = None     # of the graph drawn last
        # the last collapse: (key, graph, source, and what the key's ids refer to)
        self._last: tuple[object, drawing.VisibleGraph, str, object, object] | None = None

    def active(self, base: drawing.VisibleGraph) -> bool:
        if self.wanted is not None:
            return self.wanted
        return len(base.nodes) > blocks.COLLAPSE_ABOVE

    def shown(self, doc: GraphDocument, base: drawing.VisibleGraph,
              previewed: drawing.VisibleGraph) -> tuple[drawing.VisibleGraph, str]:
        """What to draw and its layout source (equal source, equal layout)."""
        if not self.active(base):
            self.tree = None
            return previewed, drawing.document_layout_source(doc, base.show_params)
        tree = self.tree = blocks.block_tree(doc, base)
        if self.expanded is None or not self.expanded <= set(tree.blocks):
            self.expanded = blocks.default_expansion(tree)
        key = (id(tree), id(previewed), self.expanded)
        if self._last is None or self._last[0] != key:    # asked twice per layout
            graph = blocks.collapse(previewed, tree, self.expanded)
            self._last = (key, graph, drawing.layout_source(graph), previewed, tree)
        return self._last[1], self._last[2]

    # ------------------------------------------------------------- asking
    def key_of(self, node_id: int) -> str | None:
        """The block a drawn block node stands for."""
        if self.tree is None or not blocks.is_block(node_id):
            return None
        return self.tree.by_id.get(node_id)

    def shown_for(self, node: int) -> int | None:
        """The drawn node standing for document node ``node`` when a closed block holds
        it (None: no closed block does)."""
        if self.tree is None or self.expanded is None:
            return None
        key = blocks.block_of(self.tree, node, self.expanded)
        return self.tree.ids[key] if key is not None else None

    def members(self, node_id: int) -> list[int]:
        key = self.key_of(node_id)
        return self.tree.members(key) if key is not None and self.tree else []

    def open_block_of(self, node: int) -> str | None:
        """The innermost open block holding ``node`` (what "close block" closes)."""
        if self.tree is None or self.expanded is None:
            return None
        chain = [k for k in self.tree.chain(node) if k in self.expanded]
        return chain[-1] if chain else None

    def drawn(self, nodes: list[int]) -> set[int]:
        """The drawn nodes standing for ``nodes`` (a closed block for what it holds)."""
        out = set()
        for node in nodes:
            shown = self.shown_for(node)
            out.add(node if shown is None else shown)
        return out

    @staticmethod
    def confirm_all(host: DialogHost, count: int, time_limit: float) -> bool:
        """Ask before every node of a big graph is laid out (True: go on)."""
        if count <= blocks.COLLAPSE_ABOVE:
            return True
        return host.ask_yes_no(
            "Show every node?",
            f"Laying out all {count:,} nodes can take graphviz minutes; after "
            f"{time_limit:.0f} s a faster layered layout is drawn instead. Show every node?")

    # ------------------------------------------------------------- changing
    def open(self, key: str) -> None:
        assert self.tree is not None and self.expanded is not None
        up, keys = key, {key}
        while (up := self.tree.blocks[up].parent) is not None:    # its parents too
            keys.add(up)
        self.expanded = self.expanded | keys

    def close(self, key: str) -> None:
        assert self.tree is not None and self.expanded is not None
        inside = {key}
        stack = [key]
        while stack:
            for child in self.tree.blocks[stack.pop()].children:
                inside.add(child)
                stack.append(child)
        self.expanded = self.expanded - inside

    def set_wanted(self, on: bool | None) -> None:
        self.wanted = on
        self.expanded = None

    # ------------------------------------------------------------- words
    def tooltip(self, node_id: int, analysis: AnalysisResult | None,
                edges: tuple[drawing.VisEdge, ...]) -> str:
        """A block's tooltip: its name, op count, parameters, MACs, activation memory
        and the shapes leaving it (figures when the analysis is fresh)."""
        key = self.key_of(node_id)
        if key is None or self.tree is None:
            return ""
        block = self.tree.blocks[key]
        rows = [f"<b>{drawing._html(key)}</b>",
                f"block of {block.ops:,} operators ({block.size:,} nodes); double-click "
                "to open it"]
        if analysis is not None:
            members = self.tree.members(key)
            st = analysis.stats
            params = sum(st.per_node[i].params for i in members if i in st.per_node)
            macs = sum(st.per_node[i].macs for i in members if i in st.per_node)
            inside = set(members)
            memory = sum(v for (i, _), v in st.per_entry_bytes.items() if i in inside)
            rows.append(f"params {human_count(params)}, MACs {human_count(macs)}, "
                        f"activations {human_bytes(memory)}")
            outs: list[Shape] = []
            for e in edges:
                if e.src == node_id:
                    shape = analysis.shapes.by_entry.get(e.entry)
                    if shape and shape not in outs:
                        outs.append(shape)
            if outs:
                rows.append("out: " + ", ".join(format_shape(s) for s in outs[:4]))
        return "<br/>".join(rows)
