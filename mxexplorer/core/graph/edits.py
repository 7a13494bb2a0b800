"""Small reversible edits of a GraphDocument: apply / revert / describe.

Each edit captures what it needs when it is built (old values, the variables a
rename carries along) so that ``revert`` restores the document exactly.  The GUI
wraps each edit in one QUndoCommand; the CLI and the tests use them directly.
Must not import Qt nor MXNet (MXNet checks attributes in :mod:`..analysis.validate`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Protocol

from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.kinds import NodeKind
from mxexplorer.core.graph.tags import MIRROR_STAGE
from mxexplorer.core.runtime.errors import UserError


class Edit(Protocol):
    def apply(self, doc: GraphDocument) -> None: ...

    def revert(self, doc: GraphDocument) -> None: ...

    def describe(self) -> str: ...


AttrChanges = dict[int, dict[str, "str | None"]]


@dataclass
class SetAttrs:
    """Set attributes (a value) or remove them (None) on one or many nodes: one undo
    step.  ``changes``: node -> {key: value}.  Typing into one attribute again merges
    into the step before (see :attr:`single_key`)."""

    changes: AttrChanges
    label: str = ""
    _old: AttrChanges = field(default_factory=dict, init=False)

    def apply(self, doc: GraphDocument) -> None:
        self._old = doc.set_attrs(self.changes)

    def revert(self, doc: GraphDocument) -> None:
        doc.set_attrs(self._old)

    def describe(self) -> str:
        keys = sorted({k for values in self.changes.values() for k in values})
        return self.label or f"Edit {', '.join(keys)}"

    @property
    def single_key(self) -> tuple[tuple[int, ...], str] | None:
        """(nodes, key) when every node gets one value of the same key, else None."""
        keys = {tuple(v) for v in self.changes.values()}
        if len(keys) != 1 or len(next(iter(keys))) != 1:
            return None
        return tuple(self.changes), next(iter(keys))[0]

    def merge(self, later: SetAttrs) -> bool:
        """Take ``later``'s values (same nodes, same single key), keeping the values
        from before this step; False when they differ in nodes or key."""
        if self.single_key is None or self.single_key != later.single_key:
            return False
        self.changes, self.label = later.changes, later.label
        return True


def set_attr(nodes: tuple[int, ...], key: str, value: str | None) -> SetAttrs:
    """One attribute on one or more nodes (``value=None`` removes it)."""
    what = f"{len(nodes)} nodes" if len(nodes) != 1 else f"node {nodes[0]}"
    label = f"Remove {key} from {what}" if value is None else f"Set {key} = {value} on {what}"
    return SetAttrs({i: {key: value} for i in nodes}, label)


def set_node_attrs(node: int, values: dict[str, str | None], label: str = "") -> SetAttrs:
    """Several attributes of one node at once."""
    return SetAttrs({node: dict(values)}, label or f"Edit {', '.join(values)}")


def set_many_attrs(changes: list[tuple[int, dict[str, str | None]]],
                   label: str = "Apply memory plan") -> SetAttrs:
    """Attribute changes on many nodes (a memory plan applied)."""
    merged: AttrChanges = {}
    for node, values in changes:
        merged.setdefault(node, {}).update(values)
    return SetAttrs(merged, label)


def own_variables(doc: GraphDocument, node_id: int) -> list[int]:
    """The parameter and auxiliary variables a node alone reads (its weight, bias,
    gamma, beta, moving statistics), found by its inputs, whatever their names."""
    node = doc.nodes[node_id]
    if node.is_variable:
        return []
    users = doc.consumers()
    kinds = doc.kinds()
    out: list[int] = []
    for src, _, _ in node.inputs:
        if src in out or not doc.nodes[src].is_variable:
            continue
        if kinds[src] in (NodeKind.PARAM, NodeKind.AUX) and \
                all(c == node_id for c, _ in users[src]):
            out.append(src)
    return out


def shared_variables(doc: GraphDocument, node_id: int) -> list[tuple[int, list[int]]]:
    """Parameter variables the node reads that other nodes read too: (variable, the
    other readers).  A rename leaves them alone."""
    node = doc.nodes[node_id]
    if node.is_variable:
        return []
    users = doc.consumers()
    kinds = doc.kinds()
    out: list[tuple[int, list[int]]] = []
    seen: set[int] = set()
    for src, _, _ in node.inputs:
        if src in seen or kinds[src] not in (NodeKind.PARAM, NodeKind.AUX):
            continue
        seen.add(src)
        others = sorted({c for c, _ in users[src] if c != node_id})
        if others:
            out.append((src, others))
    return out


def renamed_variable(var_name: str, old_node: str, new_node: str, slot: str) -> str:
    """The new name of a node's own variable when the node is renamed.

    The part of the variable's name it shares with its node is the stem (``conv1`` of
    ``conv1``/``conv1_weight``; ``resnetv10_conv0`` of Gluon's
    ``resnetv10_conv0_fwd``/``resnetv10_conv0_weight``); the new name keeps the
    variable's own ending on the new node's stem (``stem_conv0_fwd`` ->
    ``stem_conv0_weight``).  A variable named unlike its node takes the input slot's
    name, as MXNet names parameters it creates (``new_weight``).
    """
    common = 0
    for a, b in zip(old_node, var_name):
        if a != b:
            break
        common += 1
    if common == len(old_node):
        stem = old_node
    else:
        cut = old_node.rfind("_", 0, common)
        stem = old_node[:cut] if cut > 0 else ""
    if not stem:
        return f"{new_node}_{slot}"
    node_suffix = old_node[len(stem):]
    new_stem = new_node
    if node_suffix and new_node.endswith(node_suffix) and len(new_node) > len(node_suffix):
        new_stem = new_node[:-len(node_suffix)]
    return new_stem + var_name[len(stem):]


@dataclass
class RenameNodeEdit:
    """Rename a node and, by default, its own parameters (``conv1_weight`` follows).

    Raises
    ------
    UserError : the new name is empty or already used by another node.
    """

    node: int
    new_name: str
    with_params: bool = True
    _renames: list[tuple[int, str, str]] = field(default_factory=list, init=False)

    def plan(self, doc: GraphDocument) -> list[tuple[int, str, str]]:
        """(node, old name, new name) of every node the rename touches."""
        new = self.new_name.strip()
        if not new:
            raise UserError("a node name cannot be empty")
        problem = name_problem(new)
        if problem:
            raise UserError(problem)
        node = doc.nodes[self.node]
        old = node.name
        renames = [(self.node, old, new)]
        if self.with_params and not node.is_variable:
            slots = doc.input_slots(self.node)
            slot_of = {src: slots[k] for k, (src, _, _) in enumerate(node.inputs)}
            for v in own_variables(doc, self.node):
                vname = doc.nodes[v].name
                renames.append((v, vname, renamed_variable(vname, old, new, slot_of[v])))
        taken = {n.name for k, n in enumerate(doc.nodes)
                 if k not in {r[0] for r in renames}}
        seen: set[str] = set()
        for _, _, name in renames:
            if name in taken or name in seen:
                raise UserError(f"the name {name!r} is already used by another node")
            seen.add(name)
        return renames

    def shared_note(self, doc: GraphDocument) -> str:
        """A sentence naming the parameters that keep their names because other nodes
        read them too ('' when there are none)."""
        if not self.with_params:
            return ""
        parts = []
        for var, others in shared_variables(doc, self.node):
            readers = ", ".join(doc.nodes[o].name for o in others[:3])
            more = f" and {len(others) - 3} more" if len(others) > 3 else ""
            parts.append(f"{doc.nodes[var].name} (shared with {readers}{more})")
        if not parts:
            return ""
        return "Kept, because other nodes read them too: " + "; ".join(parts) + "."

    def apply(self, doc: GraphDocument) -> None:
        self._renames = self.plan(doc)
        doc.rename({i: new for i, _, new in self._renames})

    def revert(self, doc: GraphDocument) -> None:
        doc.rename({i: old for i, old, _ in self._renames})

    def describe(self) -> str:
        extra = f" (+{len(self._renames) - 1} parameters)" if len(self._renames) > 1 else ""
        old = self._renames[0][1] if self._renames else "node"
        return f"Rename {old} to {self.new_name}{extra}"


@dataclass
class PrefixAllEdit:
    """Prefix every node name (the weight-sharing trick: ``sha-`` + name)."""

    prefix: str
    _old: list[str] = field(default_factory=list, init=False)

    def apply(self, doc: GraphDocument) -> None:
        if not self.prefix:
            raise UserError("the prefix is empty")
        problem = name_problem(self.prefix)
        if problem:
            raise UserError(problem.replace("the name", "the prefix"))
        self._old = [n.name for n in doc.nodes]
        doc.rename({i: self.prefix + old for i, old in enumerate(self._old)})

    def revert(self, doc: GraphDocument) -> None:
        doc.rename(dict(enumerate(self._old)))

    def describe(self) -> str:
        return f"Prefix all names with {self.prefix!r}"


def mirror_stage_edit(doc: GraphDocument, nodes: tuple[int, ...], on: bool) -> SetAttrs:
    """Tag (or untag) operator nodes with ``__mirror_stage__`` for the memory planner."""
    ops = tuple(i for i in nodes if not doc.nodes[i].is_variable)
    if not ops:
        raise UserError("mirror stages go on operator nodes; the selection has none")
    return set_attr(ops, MIRROR_STAGE, "True" if on else None)



#: a change adding this many outputs or more is asked about first (the window)
GROWTH_ASK = 10_000


def name_problem(name: str) -> str | None:
    """Why a node may not take this name, or None: what MXNet would cut short."""
    if "\0" in name:
        return ("the name holds a NUL character: MXNet would cut it there (its names "
                "are C strings), and refuse the saved file")
    return None


def attrs_problem(doc: GraphDocument, node: int, values: Mapping[str, str | None]
                  ) -> str | None:
    """Why these attribute changes may not go into ``node``, or None.  The limits are
    the loader's own (:func:`opinfo.check_declared`): an edit that passes makes a file
    mxexplorer opens again, and MXNet reads as written."""
    for key, value in values.items():
        for what, text in (("key", key), ("value", value or "")):
            if "\0" in text:
                return (f"the {what} {text.split(chr(0))[0]!r}... holds a NUL character: "
                        "MXNet would cut it there (C strings) and refuse the saved file")
    attrs = with_values(doc.nodes[node].attrs, values)
    for key in ("num_outputs", "sections", "num_args"):
        raw = attrs.get(key)
        if raw is not None and (not raw.strip().lstrip("-").isdigit() or int(raw) < 0):
            return f"{key} must be a whole number of 0 or more, not {raw!r}"
    n = doc.nodes[node]
    try:
        opinfo.check_declared(n.op, attrs, n.name, len(n.inputs), None)
    except UserError as exc:
        return str(exc)
    return None


def with_values(attrs: Mapping[str, str], values: Mapping[str, str | None]
                ) -> dict[str, str]:
    """A copy of ``attrs`` with ``values`` set (a value) or removed (None)."""
    out = dict(attrs)
    for key, value in values.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def outputs_added(doc: GraphDocument, node: int, values: Mapping[str, str | None]) -> int:
    """How many outputs these attribute changes add to ``node`` (negative: remove)."""
    n = doc.nodes[node]
    if n.is_variable:
        return 0
    attrs = with_values(n.attrs, values)
    try:
        after = opinfo.outputs(n.op, attrs)[0]
    except (UserError, ValueError):
        return 0
    return after - doc.output_count(node)


@dataclass
class SetVariableKindEdit:
    """Say what a variable is: a data input (it gets a shape) or a parameter (learned;
    counted in the totals), whatever the graph suggests; ``kind=None`` returns to the
    graph's own evidence."""

    node: int
    kind: NodeKind | None
    _old: NodeKind | None = field(default=None, init=False)

    def apply(self, doc: GraphDocument) -> None:
        if not doc.nodes[self.node].is_variable:
            raise UserError("only variables are data inputs or parameters")
        self._old = doc.set_kinds({self.node: self.kind})[self.node]

    def revert(self, doc: GraphDocument) -> None:
        doc.set_kinds({self.node: self._old})

    def describe(self) -> str:
        what = {NodeKind.DATA: "a data input", NodeKind.PARAM: "a parameter",
                NodeKind.AUX: "an auxiliary state"}.get(self.kind, "as the graph says") \
            if self.kind else "as the graph says"
        return f"Treat node {self.node} as {what}"
