"""Structure-aware mutations of real symbol files, as hypothesis strategies.

A mutation knows what a symbol file is made of (nodes, inputs, heads, attributes,
``node_row_ptr``) and breaks one or a few things the way hostile or damaged files do:
keys deleted, types swapped, indices out of range or huge, cycles, ops nobody
registered, declared counts in the billions, malformed tuple strings, deep nesting,
odd Unicode, truncation.  Used by tests/core/graph/test_hostile.py (a few cases, in
``make test``) and benchmarks/fuzz_campaign.py (thousands).
"""
from __future__ import annotations

import copy
import json
import pathlib
from typing import Any

from hypothesis import strategies as st

ROOT = pathlib.Path(__file__).resolve().parents[1]
SEEDS = [ROOT / "mxexplorer" / "resources" / "examples" / "mlp-symbol.json",
         ROOT / "tests" / "data" / "duplicate_names-symbol.json",
         ROOT / "tests" / "data" / "unknown_op-symbol.json"]
CORPUS = ROOT.parent / "shared" / "corpus"
SMALL_CORPUS = ["deepinsight__insightface__deploy__mtcnn-model__det1-symbol.json",
                "awslabs__multi-model-server__examples__lstm_ptb__model__lstm_ptb-symbol.json",
                "apache__mxnet__tests__python__unittest__save_000800.json",
                "miaow1988__SqueezeNet_v1.2__model-symbol.json"]


def seeds() -> list[pathlib.Path]:
    """Small real files: the examples, test data and (when beside the clone) corpus."""
    extra = [CORPUS / n for n in SMALL_CORPUS if (CORPUS / n).is_file()]
    return [p for p in SEEDS if p.is_file()] + extra


BIG = "__BIGINT__"      # a 5,000-digit integer literal (json.dumps cannot write one)
HUGE = [2**31, 2**63, 10**12, -1, -(2**40), BIG]
ODD_TEXT = ["", " ", "\u0000", "\ud800", "\U0001f600" * 3, "a" * 5000, "名前", "x\ny",
            "\u202e", "data/0", "..", "%s%n", "٣٣"]
TUPLES = ["(", "(3,", "(3, 3", "((3, 3))", "(3; 3)", "(None, None)", "(٣, ٣)",
          "(" + "9" * 5000 + ",)", "[3L, 3L]", "(-1, -1)", "(0, 0)", "(1e9, 1)", "3x3"]
OPS = ["NoSuchOp", "Custom", "_contrib_Nope", "", "null", "SliceChannel", "add_n", "Concat"]
COUNT_KEYS = ["num_outputs", "num_args", "sections", "num_filter", "num_hidden"]


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(_paths(v, prefix + (k,)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:40]):
            out.extend(_paths(v, prefix + (i,)))
    return out


def _get(obj: Any, path: tuple) -> Any:
    for p in path:
        obj = obj[p]
    return obj


def _set(obj: Any, path: tuple, value: Any) -> None:
    _get(obj, path[:-1])[path[-1]] = value


def _nodes(g: dict) -> list:
    nodes = g.get("nodes")
    return nodes if isinstance(nodes, list) and nodes else []


@st.composite
def mutation(draw: Any, g: dict) -> str:
    """One structure-aware change of graph ``g`` (JSON data); returns the file text."""
    g = copy.deepcopy(g)
    nodes = _nodes(g)
    kind = draw(st.sampled_from([
        "delete", "swap", "index", "cycle", "op", "count", "tuple", "name", "attr_type",
        "heads", "row_ptr", "nest", "truncate", "duplicate", "inputs_shape"]))
    paths = [p for p in _paths(g) if p]
    if kind == "delete" and paths:
        path = draw(st.sampled_from(paths))
        parent = _get(g, path[:-1])
        if isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent, list):
            parent.pop(path[-1])
    elif kind == "swap" and paths:
        path = draw(st.sampled_from(paths))
        _set(g, path, draw(st.sampled_from([None, True, 1.5, "x", [], {}, [[1]], -3,
                                            {"a": [None]}])))
    elif kind == "index" and nodes:
        node = draw(st.sampled_from(nodes))
        if isinstance(node, dict) and isinstance(node.get("inputs"), list) \
                and node["inputs"]:
            k = draw(st.integers(0, len(node["inputs"]) - 1))
            entry = node["inputs"][k]
            if isinstance(entry, list) and entry:
                j = draw(st.integers(0, len(entry) - 1))
                entry[j] = draw(st.sampled_from(HUGE + [len(nodes), 1.5, "0"]))
    elif kind == "cycle" and len(nodes) > 1:
        a = draw(st.integers(0, len(nodes) - 2))
        b = draw(st.integers(a + 1, len(nodes) - 1))
        if isinstance(nodes[a], dict):
            nodes[a].setdefault("inputs", [])
            if isinstance(nodes[a]["inputs"], list):
                nodes[a]["inputs"].append([b, 0, 0])
    elif kind == "op" and nodes:
        node = draw(st.sampled_from(nodes))
        if isinstance(node, dict):
            node["op"] = draw(st.sampled_from(OPS))
    elif kind in ("count", "tuple", "attr_type") and nodes:
        node = draw(st.sampled_from(nodes))
        if isinstance(node, dict):
            attrs = node.setdefault("attrs", {})
            if isinstance(attrs, dict):
                if kind == "count":
                    count = draw(st.sampled_from(HUGE + [0, 3]))
                    attrs[draw(st.sampled_from(COUNT_KEYS))] = "9" * 5000 if count == BIG \
                        else str(count)
                elif kind == "tuple":
                    attrs[draw(st.sampled_from(["kernel", "stride", "pad", "shape",
                                                "__shape__", "axes"]))] = \
                        draw(st.sampled_from(TUPLES))
                else:
                    attrs[draw(st.sampled_from(["kernel", "num_hidden", "__init__"]))] = \
                        draw(st.sampled_from([3, None, [3, 3], {"a": 1}, 1e300]))
    elif kind == "name" and nodes:
        node = draw(st.sampled_from(nodes))
        if isinstance(node, dict):
            node["name"] = draw(st.sampled_from(ODD_TEXT))
    elif kind == "heads":
        g["heads"] = draw(st.sampled_from([[], [[0, 0, 0]], [[len(nodes), 0, 0]],
                                           [[0, 2**40, 0]], "x", [[0]] * 50]))
    elif kind == "row_ptr":
        g["node_row_ptr"] = draw(st.sampled_from([
            [0] * (len(nodes) + 1), list(range(len(nodes))) + [10**12],
            list(range(len(nodes) + 1))[::-1], "x", [None] * (len(nodes) + 1)]))
    elif kind == "nest":
        depth = draw(st.sampled_from([50, 5000, 100000]))
        return "[" * depth + "]" * depth
    elif kind == "truncate":
        text = json.dumps(g)
        return text[:draw(st.integers(0, max(len(text) - 1, 0)))]
    elif kind == "duplicate" and nodes:
        nodes.extend(copy.deepcopy(nodes[: draw(st.integers(1, len(nodes)))]))
    elif kind == "inputs_shape" and nodes:
        node = draw(st.sampled_from(nodes))
        if isinstance(node, dict):
            node["inputs"] = draw(st.sampled_from([[[0]], [[0, 0, 0, 0]], [0], "x",
                                                   [[0, 0, 0]] * 3]))
    text = json.dumps(g, ensure_ascii=draw(st.booleans()))
    return text.replace(f'"{BIG}"', "9" * 5000)


def mutated_files() -> st.SearchStrategy[str]:
    """File texts: a seed, mutated once to three times."""
    loaded = [json.loads(p.read_text()) for p in seeds()]

    @st.composite
    def build(draw: Any) -> str:
        g = draw(st.sampled_from(loaded))
        text = draw(mutation(g))
        for _ in range(draw(st.integers(0, 2))):
            try:
                g = json.loads(text)
            except (ValueError, RecursionError):
                break
            if not isinstance(g, dict):
                break
            text = draw(mutation(g))
        return text

    return build()


def shape_args() -> st.SearchStrategy[str]:
    """``--shape`` values, good and hostile."""
    return st.sampled_from(["data=1,784", "data=4,784", "data=(2, 784)", "data=",
                            "data=1,٣", "data=0,784", "data=-1,784", "=1,2", "data",
                            "data=" + "9" * 5000, "data=99999999999,784", "x=1,2",
                            "data=1,784,784,784,784,784", "data=2²,784"])
