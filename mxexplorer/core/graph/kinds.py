"""What each node of a graph is: a data input, a parameter, an auxiliary state or an
operator, read from the graph alone (and the open checkpoint's keys), with the user's
word last."""
from __future__ import annotations

import enum
from typing import Callable, Mapping, Sequence

from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.model import Node


class NodeKind(str, enum.Enum):
    DATA = "data"
    PARAM = "param"
    AUX = "aux"
    OP = "op"


#: attributes only learned tensors carry (``lr_mult`` alone is not one: MXNet's own
#: tests put it on a data input)
_LEARNED_ONLY = frozenset({"__init__", "__wd_mult__", "wd_mult"})


def infer_kinds(nodes: Sequence[Node], order: Sequence[int],
                users: Sequence[Sequence[tuple[int, int]]],
                input_roles: Callable[[int], list[str]], checkpoint: Mapping[str, str],
                overrides: Mapping[int, NodeKind]) -> list[NodeKind]:
    """Kind of every node.

    A variable is a parameter when it reaches an operator through a weight-like slot
    (weight, bias, gamma, beta ...) or reaches one only through one-input operators (a
    weight normalised first), when it carries what only learned tensors carry
    (``__init__``, ``__wd_mult__``), when the open checkpoint holds it (``checkpoint``:
    name -> "arg" or "aux"), or when it has a complete ``__shape__`` and joins the
    graph midway (every other input of its consumers is computed from the data: an
    SSD's L2Normalization scale, a YOLO anchor).  ``overrides`` (the user's word)
    comes last and wins.  ``users[i]``: (consumer, input position) of node ``i``;
    ``input_roles(i)``: what each input of node ``i`` is to it (its slot names, a fused
    node's by the graph it fuses: :meth:`GraphDocument.input_roles`).
    """
    kinds = [NodeKind.OP if not n.is_variable else NodeKind.DATA for n in nodes]
    slots_of: dict[int, list[str]] = {}      # once per consumer: not per use
    aux_of: dict[int, tuple[int, ...]] = {}
    for i, node in enumerate(nodes):
        if not node.is_variable:
            continue
        kind = NodeKind.DATA
        for consumer, pos in users[i]:
            cnode = nodes[consumer]
            aux = aux_of.get(consumer)
            if aux is None:
                aux = aux_of[consumer] = opinfo.aux_slots(cnode.op,
                                                          cnode.extra.get("subgraphs"))
            if pos in aux:
                kind = NodeKind.AUX
                break
            slots = slots_of.get(consumer)
            if slots is None:
                slots = slots_of[consumer] = input_roles(consumer)
            if slots[pos] in opinfo.PARAM_SLOTS:
                kind = NodeKind.PARAM
            elif slots[pos].startswith("arg") and not opinfo.is_registered(cnode.op):
                if node.name.endswith(opinfo.AUX_SUFFIXES):
                    kind = NodeKind.AUX
                elif node.name.endswith(opinfo.PARAM_SUFFIXES):
                    kind = NodeKind.PARAM
        if kind == NodeKind.DATA and (_LEARNED_ONLY & node.attrs.keys()):
            kind = NodeKind.PARAM
        if kind == NodeKind.DATA and _weight_through_transforms(i, nodes, users, slots_of,
                                                                input_roles):
            kind = NodeKind.PARAM
        if checkpoint.get(node.name) == "arg":
            kind = NodeKind.PARAM
        elif checkpoint.get(node.name) == "aux":
            kind = NodeKind.AUX
        kinds[i] = kind
    _midway_parameters(nodes, order, users, kinds, checkpoint)
    for i, kind in overrides.items():
        if i < len(kinds) and nodes[i].is_variable:
            kinds[i] = kind
    return kinds


def _chain_ends(i: int, nodes: Sequence[Node],
                users: Sequence[Sequence[tuple[int, int]]]) -> list[tuple[int, int]]:
    """Where the uses of node ``i`` end when followed through one-input operators
    (L2Normalization, Reshape, transpose, Cast ...): (consumer, input position) of the
    first consumers with other inputs besides."""
    ends: list[tuple[int, int]] = []
    stack, seen = [i], {i}
    while stack:
        j = stack.pop()
        for consumer, pos in users[j]:
            if len(nodes[consumer].inputs) == 1:
                if consumer not in seen:
                    seen.add(consumer)
                    stack.append(consumer)
            else:
                ends.append((consumer, pos))
    return ends


def _weight_through_transforms(i: int, nodes: Sequence[Node],
                               users: Sequence[Sequence[tuple[int, int]]],
                               slots_of: dict[int, list[str]],
                               input_roles: Callable[[int], list[str]]) -> bool:
    """Every use of variable ``i`` reaches a weight slot through one-input operators:
    a weight normalised or reshaped before its layer reads it (the ``fc7_weight`` of
    ArcFace-style heads, through L2Normalization: issue 37).  Whatever the variable
    carries (``__lr_mult__``, ``__shape__``, ``__dtype__``, ``__storage_type__`` or
    nothing), it is learned, as a variable in the slot itself is."""
    if all(len(nodes[c].inputs) != 1 for c, _ in users[i]):
        return False                    # read directly: the slots have said
    ends = _chain_ends(i, nodes, users)
    for consumer, pos in ends:
        slots = slots_of.get(consumer)
        if slots is None:
            slots = slots_of[consumer] = input_roles(consumer)
        if slots[pos] not in opinfo.PARAM_SLOTS:
            return False
    return bool(ends)


def _complete_shape(attrs: Mapping[str, str]) -> bool:
    raw = attrs.get("__shape__")
    if not raw:
        return False
    dims = opinfo.tuple_attr({"s": raw}, "s") or ()
    return bool(dims) and all(d is not None and d > 0 for d in dims)


def _midway_parameters(nodes: Sequence[Node], order: Sequence[int],
                       users: Sequence[Sequence[tuple[int, int]]], kinds: list[NodeKind],
                       checkpoint: Mapping[str, str]) -> None:
    """Data-looking variables with a complete ``__shape__`` whose consumers' other
    inputs all come from the data are parameters (they join the graph midway)."""
    candidates = {i for i, n in enumerate(nodes) if kinds[i] == NodeKind.DATA
                  and n.name not in checkpoint and _complete_shape(n.attrs)}
    if not candidates:
        return
    fed = [False] * len(nodes)          # computed from a plain data input
    for i in order:
        node = nodes[i]
        if node.is_variable:
            fed[i] = kinds[i] == NodeKind.DATA and i not in candidates
        else:
            fed[i] = any(fed[s] for s, _, _ in node.inputs)
    for i in sorted(candidates):
        others = [(s, c) for c, _ in users[i] for s, _, _ in nodes[c].inputs if s != i]
        if users[i] and others and all(fed[s] for s, _ in others):
            kinds[i] = NodeKind.PARAM
