"""Read and write MXNet symbol JSON without MXNet.

Owns parsing (every file generation: NNVM ``attrs``, older ``attr``, pre-NNVM ``param``
files with ``[node, index]`` pairs), the validation MXNet itself skips (dangling indices,
cycles, output indices a producer lacks: ``simple_bind`` segfaults on those) and atomic
writes; :mod:`legacy` applies the upgrade MXNet's loader makes to older files.  Fields it does not
understand are kept and written back.  Must not import Qt; imports MXNet only in
:func:`upgrade_with_mxnet`.
"""
from __future__ import annotations

import json
import re
import sys
from typing import Any

from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.legacy import upgrade as upgrade_legacy
from mxexplorer.core.graph.model import (
    CURRENT_VERSION,
    Entry,
    Node,
    ParsedGraph,
    file_error,
)
from mxexplorer.core.graph.traversal import output_count, validate
from mxexplorer.core.runtime.errors import SymbolFileError, telling_line
from mxexplorer.core.runtime.files import read_errors, read_regular
from mxexplorer.core.runtime.mxnet_env import import_mxnet

#: Known node fields; anything else is kept in ``Node.extra``.
_NODE_FIELDS = ("op", "name", "attrs", "attr", "param", "inputs", "backward_source_id")
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


def _int(value: Any, where: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise file_error(f"{what} is {json.dumps(value)[:40]}, not a whole number", where)
    return value


def _entry(raw: Any, where: str, what: str) -> Entry:
    if not isinstance(raw, list) or len(raw) not in (2, 3):
        raise file_error(f"{what} should be [node, output(, version)], got {json.dumps(raw)[:60]}",
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
        raise file_error("the file is empty")
    if b"\x00" in data[:4096]:
        params_magic = data[:8] == b"\x12\x01\x00\x00\x00\x00\x00\x00"
        raise file_error("this is a binary file, not symbol JSON"
                    + (" (an MXNet .params file?)" if params_magic else ""))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise file_error(f"not a text file (byte {exc.start} is not UTF-8)") from None


def parse_json_text(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        hint = ""
        if exc.pos >= len(text.rstrip()) - 1:
            hint = " (the file looks truncated)"
        raise file_error(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}{hint}"
                    ) from None
    except RecursionError:
        raise file_error("not valid JSON: nested too deeply") from None
    except ValueError as exc:  # an integer literal past Python's 4,300-digit limit
        if "digits" not in str(exc):
            raise
        raise file_error("not valid JSON for a symbol: a number has over 4,300 digits") from None


def parse_graph(obj: Any, upgrade: bool = True, consume: bool = False) -> ParsedGraph:
    """Turn a decoded JSON value into a validated (and upgraded) :class:`ParsedGraph`.

    ``consume``: the decoded nodes are dropped as they are read (``obj`` is left
    without them), so a big file is never held twice."""
    if not isinstance(obj, dict):
        raise file_error(f"not a symbol file: the JSON is a {type(obj).__name__}, not an object")
    if "nodes" not in obj or "heads" not in obj:
        missing = [k for k in ("nodes", "heads") if k not in obj]
        raise file_error("not a symbol file: the JSON object has no "
                    + " and no ".join(repr(k) for k in missing))
    raw_nodes = obj["nodes"]
    if not isinstance(raw_nodes, list):
        raise file_error("not a symbol file: 'nodes' is not a list")
    if not raw_nodes:
        raise file_error("the graph has no nodes")
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
            raise file_error("is not an object", where)
        op = raw.get("op")
        name = raw.get("name", "")
        if not isinstance(op, str):
            raise file_error("has no 'op' string", where)
        if not isinstance(name, str):
            raise file_error("has a name that is not a string", where)
        attrs: dict[str, str] = {}
        for key in ("param", "attr", "attrs"):
            if key in raw:
                if not isinstance(raw[key], dict):
                    raise file_error(f"'{key}' is not an object", where)
                attrs.update(opinfo.as_str_attrs(raw[key]))
        raw_inputs = raw.get("inputs", [])
        if not isinstance(raw_inputs, list):
            raise file_error("'inputs' is not a list", where)
        inputs = [_entry(e, where, f"input {k}") for k, e in enumerate(raw_inputs)]
        if op == "null" and inputs:
            raise file_error("is a variable but has inputs", where)
        extra = {k: v for k, v in raw.items() if k not in _NODE_FIELDS} or _NO_EXTRA
        nodes.append(Node(sys.intern(op), name, attrs, inputs, extra))
        if consume:
            raw_nodes[i] = None

    heads = [_entry(h, "heads", f"head {k}") for k, h in enumerate(obj["heads"])] \
        if isinstance(obj["heads"], list) else None
    if heads is None:
        raise file_error("not a symbol file: 'heads' is not a list")
    if not heads:
        raise file_error("the graph has no outputs ('heads' is empty)")

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
        upgrade_legacy(graph)
    return graph


def upgrade_with_mxnet(text: str) -> ParsedGraph:
    """Let MXNet's own loader upgrade an older file, then parse what it writes."""
    mx = import_mxnet()
    try:
        sym = mx.sym.load_json(text)
        out = sym.tojson()
    except mx.base.MXNetError as exc:
        raise file_error(f"MXNet cannot load it: {mxnet_message(exc)}") from None
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
    with read_errors(path):
        data = read_regular(path, MAX_FILE_BYTES)
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
