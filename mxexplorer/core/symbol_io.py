"""Read and write MXNet symbol JSON without MXNet.

Owns parsing (every file generation: NNVM ``attrs``, older ``attr``, pre-NNVM ``param``
files with ``[node, index]`` pairs), the validation MXNet itself skips (dangling indices,
cycles, output indices a producer lacks: ``simple_bind`` segfaults on those) and atomic
writes; :mod:`legacy` applies the upgrade MXNet's loader makes to older files.  Fields it does not
understand are kept and written back.  Must not import Qt; imports MXNet only in
:func:`upgrade_with_mxnet`.
"""
from __future__ import annotations

import copy
import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from mxexplorer.core import opinfo
from mxexplorer.core.errors import SymbolFileError, telling_line
from mxexplorer.core.files import NotARegularFile, read_regular

#: The version MXNet 1.9.1 writes into ``attrs.mxnet_version``.
CURRENT_VERSION = 10901
#: Known node fields; anything else is kept in ``Node.extra``.
_NODE_FIELDS = ("op", "name", "attrs", "attr", "param", "inputs", "backward_source_id")

Entry = tuple[int, int, int]


@dataclass
class Node:
    """One node of the graph: a variable (``op == "null"``) or an operator."""

    __slots__ = ("op", "name", "attrs", "inputs", "extra")     # 264,000 of them: 40 MB less

    op: str
    name: str
    attrs: dict[str, str]
    inputs: list[Entry]
    extra: dict[str, Any]

    @property
    def is_variable(self) -> bool:
        return self.op == "null"

    def copy(self) -> Node:
        return Node(self.op, self.name, dict(self.attrs), list(self.inputs),
                    copy.deepcopy(self.extra))


@dataclass
class ParsedGraph:
    nodes: list[Node]
    heads: list[Entry]
    graph_attrs: dict[str, Any]
    generation: str
    version: int
    upgraded: str = ""  # "", "mxexplorer" or "mxnet"
    row_hints: list[int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


GENERATION_LABELS = {
    "nnvm": 'NNVM JSON ("attrs")',
    "nnvm-attr": 'NNVM JSON, older ("attr")',
    "legacy": 'pre-NNVM JSON (MXNet 0.8, "param")',
}


_NO_EXTRA: dict[str, Any] = {}      # shared by the nodes with nothing extra (read only)
_SURROGATE = re.compile("[\ud800-\udfff]")

#: the largest symbol file read (the largest real one seen is 3 MB; 22,747 internals)
MAX_FILE_BYTES = 1 << 30


def dumps(data: Any, indent: int | None = None) -> str:
    """Symbol JSON as MXNet reads it: text as UTF-8, not ``\\uXXXX`` escapes (MXNet's
    JSON reader knows no ``\\u``: one accented name made a whole graph unreadable to
    it), except a lone surrogate, which UTF-8 cannot hold and which stays escaped."""
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _fail(message: str, where: str | None = None) -> SymbolFileError:
    return SymbolFileError(message, where=where)


def _int(value: Any, where: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(f"{what} is {json.dumps(value)[:40]}, not a whole number", where)
    return value


def _entry(raw: Any, where: str, what: str) -> Entry:
    if not isinstance(raw, list) or len(raw) not in (2, 3):
        raise _fail(f"{what} should be [node, output(, version)], got {json.dumps(raw)[:60]}",
                    where)
    node = _int(raw[0], where, f"{what} node index")
    index = _int(raw[1], where, f"{what} output index")
    version = _int(raw[2], where, f"{what} version") if len(raw) == 3 else 0
    return (node, index, version)


def _node_where(i: int, raw: Any) -> str:
    name = raw.get("name") if isinstance(raw, dict) else None
    return f"node {i} {name!r}" if isinstance(name, str) else f"node {i}"


def decode_text(data: bytes) -> str:
    """Bytes of a file -> text, or a plain-words error for binary and empty files."""
    if not data.strip():
        raise _fail("the file is empty")
    if b"\x00" in data[:4096]:
        params_magic = data[:8] == b"\x12\x01\x00\x00\x00\x00\x00\x00"
        raise _fail("this is a binary file, not symbol JSON"
                    + (" (an MXNet .params file?)" if params_magic else ""))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _fail(f"not a text file (byte {exc.start} is not UTF-8)") from None


def parse_json_text(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        hint = ""
        if exc.pos >= len(text.rstrip()) - 1:
            hint = " (the file looks truncated)"
        raise _fail(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}{hint}"
                    ) from None
    except RecursionError:
        raise _fail("not valid JSON: nested too deeply") from None
    except ValueError as exc:  # an integer literal past Python's 4,300-digit limit
        if "digits" not in str(exc):
            raise
        raise _fail("not valid JSON for a symbol: a number has over 4,300 digits") from None


def parse_graph(obj: Any, upgrade: bool = True, consume: bool = False) -> ParsedGraph:
    """Turn a decoded JSON value into a validated (and upgraded) :class:`ParsedGraph`.

    ``consume``: the decoded nodes are dropped as they are read (``obj`` is left
    without them), so a big file is never held twice."""
    if not isinstance(obj, dict):
        raise _fail(f"not a symbol file: the JSON is a {type(obj).__name__}, not an object")
    if "nodes" not in obj or "heads" not in obj:
        missing = [k for k in ("nodes", "heads") if k not in obj]
        raise _fail("not a symbol file: the JSON object has no "
                    + " and no ".join(repr(k) for k in missing))
    raw_nodes = obj["nodes"]
    if not isinstance(raw_nodes, list):
        raise _fail("not a symbol file: 'nodes' is not a list")
    if not raw_nodes:
        raise _fail("the graph has no nodes")
    legacy = any(isinstance(n, dict) and ("param" in n or "backward_source_id" in n)
                 for n in raw_nodes)
    uses_attr = any(isinstance(n, dict) and "attr" in n for n in raw_nodes)
    generation = "legacy" if legacy else ("nnvm-attr" if uses_attr else "nnvm")
    graph_attrs = obj.get("attrs", {})
    if not isinstance(graph_attrs, dict):
        graph_attrs = {}
    version = 800
    mv = graph_attrs.get("mxnet_version")
    if isinstance(mv, list) and len(mv) == 2 and isinstance(mv[1], int):
        version = mv[1]

    nodes: list[Node] = []
    for i, raw in enumerate(raw_nodes):
        where = _node_where(i, raw)
        if not isinstance(raw, dict):
            raise _fail("is not an object", where)
        op = raw.get("op")
        name = raw.get("name", "")
        if not isinstance(op, str):
            raise _fail("has no 'op' string", where)
        if not isinstance(name, str):
            raise _fail("has a name that is not a string", where)
        attrs: dict[str, str] = {}
        for key in ("param", "attr", "attrs"):
            if key in raw:
                if not isinstance(raw[key], dict):
                    raise _fail(f"'{key}' is not an object", where)
                attrs.update(opinfo.as_str_attrs(raw[key]))
        raw_inputs = raw.get("inputs", [])
        if not isinstance(raw_inputs, list):
            raise _fail("'inputs' is not a list", where)
        inputs = [_entry(e, where, f"input {k}") for k, e in enumerate(raw_inputs)]
        if op == "null" and inputs:
            raise _fail("is a variable but has inputs", where)
        extra = {k: v for k, v in raw.items() if k not in _NODE_FIELDS} or _NO_EXTRA
        nodes.append(Node(sys.intern(op), name, attrs, inputs, extra))
        if consume:
            raw_nodes[i] = None

    heads = [_entry(h, "heads", f"head {k}") for k, h in enumerate(obj["heads"])] \
        if isinstance(obj["heads"], list) else None
    if heads is None:
        raise _fail("not a symbol file: 'heads' is not a list")
    if not heads:
        raise _fail("the graph has no outputs ('heads' is empty)")

    row_hints = None
    rp = obj.get("node_row_ptr")
    if isinstance(rp, list) and len(rp) == len(nodes) + 1 and all(
            isinstance(x, int) and not isinstance(x, bool) for x in rp):
        row_hints = [rp[i + 1] - rp[i] for i in range(len(nodes))]
        if any(h < 0 for h in row_hints):
            row_hints = None          # not a count: MXNet ignores it, and so do we
    validate(nodes, heads, row_hints)
    extra = {k: v for k, v in obj.items()
             if k not in ("nodes", "arg_nodes", "node_row_ptr", "heads", "attrs")}
    graph = ParsedGraph(nodes, heads, dict(graph_attrs), generation, version,
                        row_hints=row_hints, extra=extra)
    if upgrade and version < CURRENT_VERSION:
        from mxexplorer.core.legacy import upgrade as upgrade_legacy

        upgrade_legacy(graph)
    return graph


def output_count(node: Node, row_hint: int | None) -> int:
    """Total outputs of a node (1 for variables)."""
    if node.is_variable:
        return 1
    total, _ = opinfo.outputs(node.op, node.attrs, row_hint)
    return total


def validate(nodes: list[Node], heads: list[Entry], row_hints: list[int] | None) -> None:
    """Refuse graphs MXNet would crash on: dangling or impossible references, cycles;
    and declared counts past what any real graph has, before anything is made of them."""
    n = len(nodes)
    for i, node in enumerate(nodes):
        if not node.is_variable:
            opinfo.check_declared(node.op, node.attrs, node.name, len(node.inputs),
                                  row_hints[i] if row_hints else None)
    counts = [output_count(node, row_hints[i] if row_hints else None)
              for i, node in enumerate(nodes)]

    def check(entry: Entry, where: str, what: str) -> None:
        src, index, _ = entry
        if not 0 <= src < n:
            raise _fail(f"{what} refers to node {src}, but the graph has {n} nodes "
                        f"(0 to {n - 1})", where)
        if not 0 <= index < counts[src]:
            prod = nodes[src]
            plural = "output" if counts[src] == 1 else "outputs"
            raise _fail(f"{what} asks for output {index} of node {src} {prod.name!r} "
                        f"({prod.op}), which has {counts[src]} {plural}", where)

    for i, node in enumerate(nodes):
        for k, entry in enumerate(node.inputs):
            check(entry, f"node {i} {node.name!r}", f"input {k}")
        deps = node.extra.get("control_deps", [])
        if isinstance(deps, list):
            for d in deps:
                if not isinstance(d, int) or not 0 <= d < n:
                    raise _fail(f"control dependency {d!r} is not a node index",
                                f"node {i} {node.name!r}")
    for k, entry in enumerate(heads):
        check(entry, "heads", f"head {k}")
    _check_acyclic(nodes)


def _check_acyclic(nodes: list[Node]) -> None:
    state = [0] * len(nodes)  # 0 new, 1 on stack, 2 done
    pred_lists = [_preds(n) for n in nodes]      # once: a 100,000-input add_n
    for start in range(len(nodes)):
        if state[start]:
            continue
        stack: list[tuple[int, int]] = [(start, 0)]
        state[start] = 1
        while stack:
            i, k = stack[-1]
            preds = pred_lists[i]
            if k < len(preds):
                stack[-1] = (i, k + 1)
                j = preds[k]
                if state[j] == 1:
                    cycle = [nodes[s].name for s, _ in stack[[s for s, _ in stack].index(j):]]
                    raise _fail("the graph has a cycle: " + " -> ".join(
                        repr(c) for c in cycle[:6]) + (" ..." if len(cycle) > 6 else ""),
                                f"node {j} {nodes[j].name!r}")
                if state[j] == 0:
                    state[j] = 1
                    stack.append((j, 0))
            else:
                state[i] = 2
                stack.pop()


def _preds(node: Node) -> list[int]:
    preds = [e[0] for e in node.inputs]
    deps = node.extra.get("control_deps")
    if isinstance(deps, list):
        preds.extend(d for d in deps if isinstance(d, int))
    return preds


def dfs_order(nodes: list[Node], heads: list[Entry]) -> list[int]:
    """Post-order DFS from the heads, the order of MXNet's ``DFSVisit``."""
    seen = [False] * len(nodes)
    order: list[int] = []
    pred_lists: dict[int, list[int]] = {}
    for head in heads:
        root = head[0]
        if seen[root]:
            continue
        seen[root] = True
        stack: list[tuple[int, int]] = [(root, 0)]
        while stack:
            i, k = stack[-1]
            preds = pred_lists.get(i)
            if preds is None:
                preds = pred_lists[i] = _preds(nodes[i])
            if k < len(preds):
                stack[-1] = (i, k + 1)
                j = preds[k]
                if not seen[j]:
                    seen[j] = True
                    stack.append((j, 0))
            else:
                order.append(i)
                stack.pop()
    return order


def upgrade_with_mxnet(text: str) -> ParsedGraph:
    """Let MXNet's own loader upgrade an older file, then parse what it writes."""
    from mxexplorer.core.mxnet_env import import_mxnet

    mx = import_mxnet()
    try:
        sym = mx.sym.load_json(text)
        out = sym.tojson()
    except mx.base.MXNetError as exc:
        raise _fail(f"MXNet cannot load it: {mxnet_message(exc)}") from None
    graph = parse_graph(json.loads(out))
    graph.upgraded = "mxnet"
    return graph


def mxnet_message(exc: BaseException) -> str:
    """The informative line of an MXNetError (:func:`errors.telling_line`)."""
    return telling_line(str(exc), limit=1000)


def read_graph(path: str, use_mxnet: bool | None = None) -> ParsedGraph:
    """Read and parse a symbol file.

    Parameters
    ----------
    path : the ``-symbol.json`` file.
    use_mxnet : upgrade older files with MXNet's own loader.  ``None`` (default) does so
        when MXNet is already imported, so opening stays fast and MXNet-free otherwise.
    """
    try:
        data = read_regular(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        raise SymbolFileError("no such file", path) from None
    except IsADirectoryError:
        raise SymbolFileError("is a folder, not a file", path) from None
    except NotARegularFile as exc:
        raise SymbolFileError(str(exc.strerror), path) from None
    except OSError as exc:
        raise SymbolFileError(f"cannot be read: {exc.strerror}", path) from None
    try:
        text = decode_text(data)
        graph = parse_graph(parse_json_text(text), consume=True)
        if use_mxnet is None:
            use_mxnet = "mxnet" in sys.modules
        if use_mxnet and graph.upgraded and _all_registered(graph):
            graph = upgrade_with_mxnet(text)
    except SymbolFileError as exc:
        exc.path = path
        exc.args = (exc.one_line(),)
        raise
    return graph


def _all_registered(graph: ParsedGraph) -> bool:
    return all(n.is_variable or opinfo.is_registered(n.op) for n in graph.nodes)


def graph_to_dict(nodes: list[Node], heads: list[Entry], graph_attrs: dict[str, Any],
                  row_hints: list[int] | None = None,
                  extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON object MXNet would write for these nodes (``attrs`` style)."""
    out_nodes = []
    arg_nodes = []
    row_ptr = [0]
    for i, node in enumerate(nodes):
        entry: dict[str, Any] = {"op": node.op, "name": node.name}
        if node.attrs:
            entry["attrs"] = dict(node.attrs)
        entry["inputs"] = [list(e) for e in node.inputs]
        entry.update(node.extra)
        out_nodes.append(entry)
        if node.is_variable:
            arg_nodes.append(i)
        hint = row_hints[i] if row_hints and i < len(row_hints) else None
        row_ptr.append(row_ptr[-1] + output_count(node, hint))
    attrs = dict(graph_attrs)
    attrs.setdefault("mxnet_version", ["int", CURRENT_VERSION])
    out = {"nodes": out_nodes, "arg_nodes": arg_nodes, "node_row_ptr": row_ptr,
           "heads": [list(h) for h in heads], "attrs": attrs}
    if extra:
        out.update(extra)
    return out
