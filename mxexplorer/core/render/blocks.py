"""Blocks: repeated structure folded, so an 8,000-node network has an overview.

Blocks come from name scopes (``stage1_unit12_conv1`` sits in ``stage1`` >
``stage1_unit12``; Gluon's ``resnetv10_stage1_...``; an unrolled LSTM's ``t12_l0_...``);
an operator named without a scope (``_plus387``, ``activation965``) joins the block of
the first input that has one.  A graph whose operators mostly have no scope is cut at
its cut vertices instead (the nodes every input-to-output path passes: a residual
unit's output), segments grouped sixteen to a block.

:func:`collapse` draws a :class:`~mxexplorer.core.render.drawing.VisibleGraph` with the
blocks not in ``expanded`` as single nodes (ids from :data:`BLOCK_BASE` up), edges
between them merged; :func:`default_expansion` opens the biggest blocks while the
picture stays within a node budget.  Must not import Qt or MXNet.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.structure import cut_vertices
from mxexplorer.core.render import drawing

BLOCK_BASE = 1 << 30          # node ids of blocks (under 2**31: Qt signals carry int32)
COLLAPSE_ABOVE = 1500         # visible nodes from which the overview is the default
BUDGET = 300                  # nodes the default overview may show
SEGMENTS_PER_BLOCK = 16
SEGMENT_MAX = 48              # nodes a cut segment holds at most
_SPLIT = re.compile(r"[_/.:]+")


@dataclass(frozen=True)
class Block:
    key: str                     # the scope ("stage1_unit12") or "#k" (cut segments)
    title: str
    parent: str | None
    children: tuple[str, ...]    # sub-blocks
    nodes: tuple[int, ...]       # visible nodes directly in it
    size: int                    # visible nodes in it, sub-blocks included
    ops: int                     # operators among them


@dataclass(frozen=True)
class BlockTree:
    blocks: dict[str, Block]
    top: tuple[str, ...]         # outermost blocks
    loose: tuple[int, ...]       # visible nodes in no block
    owner: dict[int, str]        # node -> its innermost block
    ids: dict[str, int]          # block -> its node id in a collapsed graph
    by_id: dict[int, str]
    source: str                  # "names" or "cut vertices"
    chains: dict[str, tuple[str, ...]]    # block -> the blocks holding it, outermost first

    def chain(self, node: int) -> tuple[str, ...]:
        """The blocks holding ``node``, outermost first."""
        key = self.owner.get(node)
        return self.chains[key] if key is not None else ()

    def members(self, key: str) -> list[int]:
        """Every visible node inside block ``key``."""
        block = self.blocks[key]
        out = list(block.nodes)
        for child in block.children:
            out.extend(self.members(child))
        return out


def is_block(node_id: int) -> bool:
    return node_id >= BLOCK_BASE


def _scopes(name: str) -> list[str]:
    tokens = [t for t in _SPLIT.split(name) if t]
    return ["_".join(tokens[:k]) for k in range(1, len(tokens))]


def block_tree(doc: GraphDocument, graph: drawing.VisibleGraph) -> BlockTree:
    """The blocks of ``graph`` (a visible graph of ``doc``), once per revision."""
    key = f"block_tree:{graph.show_params}"
    tree: BlockTree = doc.cached(key, lambda: _build(doc, graph))
    return tree


def _build(doc: GraphDocument, graph: drawing.VisibleGraph) -> BlockTree:
    nodes = doc.nodes
    order = [n.id for n in graph.nodes]
    own = {i: _scopes(nodes[i].name) for i in order}
    ops = [i for i in order if not nodes[i].is_variable]
    paths = _paths_from_names(doc, graph, own)
    if ops and sum(1 for i in ops if paths.get(i)) * 2 >= len(ops):
        source = "names"
    else:
        paths, source = _paths_from_cuts(doc, order), "cut vertices"
    return _tree(doc, order, paths, source)


def _paths_from_names(doc: GraphDocument, graph: drawing.VisibleGraph,
                      own: dict[int, list[str]]) -> dict[int, list[str]]:
    paths: dict[int, list[str]] = {}
    for n in graph.nodes:                  # producers come first (graph order)
        i = n.id
        if own[i]:
            paths[i] = own[i]
            continue
        for src, _, _ in doc.nodes[i].inputs:
            if paths.get(src) and not doc.nodes[i].is_variable:
                paths[i] = paths[src]      # an unscoped op joins its producer's block
                break
    return paths


def _paths_from_cuts(doc: GraphDocument, order: list[int]) -> dict[int, list[str]]:
    cuts = set(cut_vertices(doc))
    paths: dict[int, list[str]] = {}
    segment = count = 0
    for i in order:
        if doc.nodes[i].is_variable and not any(
                c in cuts or not doc.nodes[c].is_variable for c, _ in doc.consumers()[i]):
            continue
        group = segment // SEGMENTS_PER_BLOCK
        paths[i] = [f"#g{group}", f"#s{segment}"]
        count += 1
        if i in cuts or count >= SEGMENT_MAX:     # few cut vertices: slices of the order
            segment += 1
            count = 0
    return paths


def _tree(doc: GraphDocument, order: list[int], paths: dict[int, list[str]],
          source: str) -> BlockTree:
    # every prefix a node's path names is a block candidate
    direct: dict[str, list[int]] = {}
    parent: dict[str, str | None] = {}
    for i in order:
        path = paths.get(i, [])
        if not path:
            continue
        direct.setdefault(path[-1], []).append(i)
        for k, key in enumerate(path):
            parent.setdefault(key, path[k - 1] if k else None)
            direct.setdefault(key, [])
    children: dict[str | None, list[str]] = {}
    for key, up in parent.items():
        children.setdefault(up, []).append(key)
    size: dict[str, int] = {}

    def total(key: str) -> int:
        if key not in size:
            size[key] = len(direct[key]) + sum(total(c) for c in children.get(key, []))
        return size[key]

    # a block is worth a node when it holds two or more: smaller ones (and the ones
    # holding a single sub-block and nothing else) dissolve into their parent
    kept: dict[str, Block] = {}

    def settle(key: str, up: str | None) -> tuple[list[str], list[int]]:
        """Blocks and loose nodes ``key`` contributes to ``up`` once settled."""
        kids = children.get(key, [])
        sub_blocks: list[str] = []
        loose: list[int] = list(direct[key])
        for kid in kids:
            b, n = settle(kid, key)
            sub_blocks.extend(b)
            loose.extend(n)
        if total(key) < 2 or (not loose and len(sub_blocks) == 1):
            return sub_blocks, loose      # dissolve: its content goes up a level
        kept[key] = Block(key, _title(key, up, source), up, tuple(sub_blocks),
                          tuple(loose), total(key), 0)
        return [key], []

    top_blocks: list[str] = []
    loose_top: list[int] = []
    for key in children.get(None, []):
        b, n = settle(key, None)
        top_blocks.extend(b)
        loose_top.extend(n)
    # parents were recorded before their content settled: point them at kept ones
    blocks: dict[str, Block] = {}

    def fix(key: str, up: str | None) -> None:
        block = kept[key]
        ops = sum(1 for i in block.nodes if not doc.nodes[i].is_variable)
        blocks[key] = replace(block, parent=up, title=_title(key, up, source), ops=ops)
        for child in block.children:
            fix(child, key)
        blocks[key] = replace(blocks[key], ops=ops + sum(blocks[c].ops
                                                          for c in block.children))

    for key in top_blocks:
        fix(key, None)
    owner = {i: key for key, b in blocks.items() for i in b.nodes}
    in_block = set(owner)
    loose = tuple(i for i in order if i not in in_block)
    ids = {key: BLOCK_BASE + k for k, key in enumerate(blocks)}
    chains: dict[str, tuple[str, ...]] = {}
    for key in blocks:                    # parents were fixed before their children
        up = blocks[key].parent
        chains[key] = (chains[up] if up is not None else ()) + (key,)
    return BlockTree(blocks, tuple(top_blocks), loose, owner, ids,
                     {v: k for k, v in ids.items()}, source, chains)


def _title(key: str, parent: str | None, source: str) -> str:
    if source != "names":
        kind, number = key[1], int(key[2:])
        if kind == "g":
            first = number * SEGMENTS_PER_BLOCK + 1
            return f"blocks {first}-{first + SEGMENTS_PER_BLOCK - 1}"
        return f"block {number + 1}"
    return key           # whole: "stage2_unit3", not "unit3" (its stage may be open)


def default_expansion(tree: BlockTree, budget: int = BUDGET) -> frozenset[str]:
    """The blocks to open for a first overview: the biggest first, until the next one
    would take the picture over ``budget`` nodes (stopping there, not skipping to
    smaller ones, keeps one level of detail: stages of units, not some units open)."""
    shown = len(tree.top) + len(tree.loose)
    expanded: set[str] = set()
    frontier = list(tree.top)
    while frontier:
        frontier.sort(key=lambda k: -tree.blocks[k].size)
        key = frontier.pop(0)
        block = tree.blocks[key]
        grows = len(block.children) + len(block.nodes) - 1
        if shown + grows > budget:
            break
        shown += grows
        expanded.add(key)
        frontier.extend(block.children)
    return frozenset(expanded)


def collapse(graph: drawing.VisibleGraph, tree: BlockTree,
             expanded: frozenset[str]) -> drawing.VisibleGraph:
    """``graph`` with every block not in ``expanded`` (nor inside a closed one) drawn as
    one node; edges between the same two shown nodes merged."""
    shown_as: dict[str, int | None] = {}     # per block: the closed block that shows it
    for key, chain in tree.chains.items():
        closed = next((k for k in chain if k not in expanded), None)
        shown_as[key] = tree.ids[closed] if closed is not None else None
    rep: dict[int, int] = {}
    for n in graph.nodes:
        owner = tree.owner.get(n.id)
        target = shown_as[owner] if owner is not None else None
        rep[n.id] = n.id if target is None else target
    stage: set[int] = set()
    again: set[int] = set()
    for n in graph.nodes:            # a block shows the tags of what it holds
        if rep[n.id] != n.id:
            if n.mirror_stage:
                stage.add(rep[n.id])
            if n.recompute:
                again.add(rep[n.id])
    nodes: list[drawing.VisNode] = []
    seen: set[int] = set()
    for n in graph.nodes:
        r = rep[n.id]
        if r in seen:
            continue
        seen.add(r)
        if r == n.id:
            nodes.append(n)
            continue
        block = tree.blocks[tree.by_id[r]]
        nodes.append(drawing.VisNode(
            r, block.title, f"{block.ops:,} ops" if block.ops != 1 else "1 op", "block",
            r in stage, r in again))
    edges: list[drawing.VisEdge] = []
    pairs: set[tuple[int, int]] = set()
    for e in graph.edges:
        s, d = rep[e.src], rep[e.dst]
        if s == d or (s, d) in pairs:
            continue
        pairs.add((s, d))
        edges.append(drawing.VisEdge(s, e.index, d, origin=e.src))
    return drawing.VisibleGraph(tuple(nodes), tuple(edges), graph.show_params)


def block_of(tree: BlockTree, node: int, expanded: frozenset[str]) -> str | None:
    """The closed block that shows ``node`` (None when the node itself is shown)."""
    for key in tree.chain(node):
        if key not in expanded:
            return key
    return None

