"""Compare two graphs (and two checkpoints): which nodes match, which were added,
removed, renamed or changed, and how the weights differ.

Matching, in order:

1. by name, where the op agrees (the usual case: an edited copy, another epoch);
2. by structure, from the outputs down: two matched nodes with the same op match their
   inputs slot by slot (a ``sha-`` prefix on every name, a renamed layer), then from
   the inputs up: an unmatched node matches the unmatched node of the same op whose
   inputs are the matches of its own inputs (a node inserted or removed upstream);
3. what is left is removed (only in A) or added (only in B).

A matched pair is *changed* when its attributes differ (which keys, old and new
values) or, when shapes are given, its output shapes differ.  Must not import Qt.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from mxexplorer.core.graph import opinfo, params_file
from mxexplorer.core.graph.document import GraphDocument

HIDDEN = ("__mirror_stage__", "mirror_stage")      # planner hints, not the model


@dataclass(frozen=True)
class NodeChange:
    a: int
    b: int
    attrs: dict[str, tuple[str | None, str | None]]   # key -> (in A, in B)
    shapes: tuple[Any, Any] | None = None             # output shapes, when they differ


@dataclass(frozen=True)
class TensorDiff:
    name: str               # in A (B's name follows the match)
    name_b: str
    shape: tuple[tuple[int, ...], tuple[int, ...]]
    max_abs: float | None   # None: the shapes differ
    max_rel: float | None


@dataclass
class GraphDiff:
    pairs: dict[int, int]                 # A node -> B node
    removed: list[int]
    added: list[int]
    renamed: list[tuple[int, int]]
    changed: list[NodeChange]
    by_structure: int = 0                 # pairs found by structure, not by name
    tensors: list[TensorDiff] = field(default_factory=list)
    tensors_only_a: list[str] = field(default_factory=list)
    tensors_only_b: list[str] = field(default_factory=list)
    #: where each side's shape inference stopped ("a"/"b": one line, or None): shapes
    #: are compared only where both sides know them
    inference: dict[str, str | None] = field(default_factory=dict)

    @property
    def same(self) -> bool:
        numeric = any(t.max_abs is None or t.max_abs > 0 for t in self.tensors)
        return not (self.removed or self.added or self.renamed or self.changed or numeric
                    or self.tensors_only_a or self.tensors_only_b)

    def summary(self) -> str:
        if self.same:
            return "no difference"
        parts = [f"{len(self.changed)} changed", f"{len(self.renamed)} renamed",
                 f"{len(self.added)} added", f"{len(self.removed)} removed"]
        words = ", ".join(parts) + f" ({len(self.pairs)} nodes matched"
        words += f", {self.by_structure} of them by structure)" if self.by_structure else ")"
        if self.tensors:
            moved = [t for t in self.tensors if t.max_abs]
            words += f"; {len(moved)} of {len(self.tensors)} tensors differ"
        return words

    def to_dict(self, a: GraphDocument, b: GraphDocument) -> dict[str, Any]:
        return {
            "same": self.same, "summary": self.summary(), "matched": len(self.pairs),
            "matched_by_structure": self.by_structure,
            "removed": [a.nodes[i].name for i in self.removed],
            "added": [b.nodes[j].name for j in self.added],
            "renamed": [{"a": a.nodes[i].name, "b": b.nodes[j].name} for i, j in self.renamed],
            "changed": [{"a": a.nodes[c.a].name, "b": b.nodes[c.b].name,
                         "attrs": {k: {"a": x, "b": y} for k, (x, y) in c.attrs.items()},
                         "shapes": None if c.shapes is None else
                         {"a": c.shapes[0], "b": c.shapes[1]}} for c in self.changed],
            "tensors": [{"name": t.name, "name_b": t.name_b, "shape_a": list(t.shape[0]),
                         "shape_b": list(t.shape[1]), "max_abs": t.max_abs,
                         "max_rel": t.max_rel} for t in self.tensors],
            "tensors_only_a": self.tensors_only_a, "tensors_only_b": self.tensors_only_b,
            "inference": dict(self.inference)}


def _op(doc: GraphDocument, i: int) -> str:
    node = doc.nodes[i]
    return "null" if node.is_variable else opinfo.canonical_op(node.op)


def _attrs(doc: GraphDocument, i: int) -> dict[str, str]:
    return {k: str(v) for k, v in doc.nodes[i].attrs.items() if k not in HIDDEN}


def match(a: GraphDocument, b: GraphDocument) -> tuple[dict[int, int], int]:
    """A node -> B node, and how many pairs came from structure alone."""
    pairs: dict[int, int] = {}
    taken: set[int] = set()

    def pair(i: int, j: int) -> bool:
        if i in pairs or j in taken or _op(a, i) != _op(b, j):
            return False
        pairs[i] = j
        taken.add(j)
        return True

    for i in a.order():                                      # 1. by name
        j = b.node_named(a.nodes[i].name)
        if j is not None:
            pair(i, j)
    by_name = len(pairs)
    # 2a. from the outputs down, slot by slot
    stack = [(e.node, f.node) for e, f in zip(a.output_entries(), b.output_entries())]
    stack += list(pairs.items())
    seen: set[tuple[int, int]] = set()
    while stack:
        i, j = stack.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if pairs.get(i, j) != j or (i not in pairs and not pair(i, j)):
            continue
        ins_a, ins_b = a.nodes[i].inputs, b.nodes[j].inputs
        if len(ins_a) == len(ins_b):
            stack += [(x[0], y[0]) for x, y in zip(ins_a, ins_b)]
    # 2b. from the inputs up: same op, inputs that are each other's matches
    waiting: dict[tuple[str, tuple[int, ...]], list[int]] = {}
    for j in b.order():
        if j not in taken:
            key = (_op(b, j), tuple(s for s, _, _ in b.nodes[j].inputs))
            waiting.setdefault(key, []).append(j)
    for i in a.order():
        if i in pairs or not a.nodes[i].inputs:
            continue
        mapped = tuple(pairs.get(s, -1) for s, _, _ in a.nodes[i].inputs)
        for j in waiting.get((_op(a, i), mapped), []):
            if pair(i, j):
                break
    return pairs, len(pairs) - by_name


def _whole(shape: Any) -> bool:
    """A shape known in full (0 is an unknown dimension: a file's ``__shape__`` hint
    such as a deferred parameter's ``(0,)``)."""
    return shape is not None and 0 not in shape


def compare(a: GraphDocument, b: GraphDocument,
            shapes_a: Mapping[tuple[int, int], Any] | None = None,
            shapes_b: Mapping[tuple[int, int], Any] | None = None,
            stopped: Mapping[str, str | None] | None = None) -> GraphDiff:
    """The differences between the graphs ``a`` and ``b`` (shapes: inferred
    ``by_entry`` of each, when known; ``stopped``: where each side's inference stopped,
    in one line).  An output whose shape one side does not know in full is not a
    difference: past the node where inference stops, every shape is unknown."""
    pairs, by_structure = match(a, b)
    matched_b = set(pairs.values())
    renamed, changed = [], []
    for i, j in pairs.items():
        if a.nodes[i].name != b.nodes[j].name:
            renamed.append((i, j))
        x, y = _attrs(a, i), _attrs(b, j)
        attrs = {k: (x.get(k), y.get(k)) for k in sorted(set(x) | set(y))
                 if x.get(k) != y.get(k)}
        shape_pair = None
        if shapes_a is not None and shapes_b is not None:
            sa = [shapes_a.get((i, k)) for k in range(a.output_count(i))]
            sb = [shapes_b.get((j, k)) for k in range(b.output_count(j))]
            if sa != sb and len(sa) == len(sb) and all(map(_whole, sa + sb)):
                shape_pair = (sa, sb)
        if attrs or shape_pair:
            changed.append(NodeChange(i, j, attrs, shape_pair))
    return GraphDiff(pairs, [i for i in a.order() if i not in pairs],
                     [j for j in b.order() if j not in matched_b], renamed, changed,
                     by_structure, inference=dict(stopped or {}))


def compare_params(diff: GraphDiff, a: GraphDocument, b: GraphDocument, path_a: str,
                   path_b: str) -> None:
    """Fill ``diff``'s tensor figures from two checkpoints (keys matched through the
    node matching, so a renamed parameter is compared with its old self)."""
    import numpy as np

    index_a = {p.name: p for p in params_file.read_params_index(path_a)}
    index_b = {p.name: p for p in params_file.read_params_index(path_b)}
    rename = {a.nodes[i].name: b.nodes[j].name for i, j in diff.pairs.items()}
    seen_b = set()
    for name, info in index_a.items():
        now = a.param_renames.get(name, name)
        target = rename.get(now, now)
        other = index_b.get(b.file_key(target)) or index_b.get(name)
        if other is None:
            diff.tensors_only_a.append(name)
            continue
        seen_b.add(other.name)
        if info.shape != other.shape:
            diff.tensors.append(TensorDiff(name, other.name, (info.shape, other.shape),
                                           None, None))
            continue
        x = params_file.read_array(path_a, info).astype(np.float64)
        y = params_file.read_array(path_b, other).astype(np.float64)
        gap = float(np.abs(x - y).max()) if x.size else 0.0
        scale = float(np.abs(x).max()) if x.size else 0.0
        diff.tensors.append(TensorDiff(name, other.name, (info.shape, other.shape), gap,
                                       gap / scale if scale else gap))
    diff.tensors_only_b = [n for n in index_b if n not in seen_b]
