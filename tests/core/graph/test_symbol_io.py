"""Loading every file generation without MXNet, matching MXNet's own view exactly."""
from __future__ import annotations

import json
import pathlib

import mxnet as mx
import pytest

from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.kinds import NodeKind
from mxexplorer.core.runtime.errors import SymbolFileError
from tests.conftest import CORPUS, DATA, EXAMPLES, corpus_files, corpus_params

MX_UNLOADABLE = {
    "Ellinier__my-mxnet-ssd__model__ssd_300-symbol.json",
    "KeyKy__mobilenet-mxnet__mobilenet-symbol.json",
    "gongxijun__ocr_recognition__model__model-symbol.json",
    "hpi-xnor__BMXNet__smd_hpi__binary_models__binarized_imagenet-resnet18-64bit-symbol.json",
    "hpi-xnor__BMXNet__smd_hpi__binary_models__binarized_mnist_64bit-symbol.json",
}
EMPTY = "awslabs__multi-model-server__frontend__modelarchive__src__test__resources__models__" \
        "noop-v0.1__noop-symbol.json"


def _mx_view(sym: mx.sym.Symbol) -> tuple[list[str], list[str], list[str], list[str]]:
    return (sym.get_internals().list_outputs(), sym.list_arguments(),
            sym.list_auxiliary_states(), sym.list_outputs())


def _doc_view(doc: GraphDocument) -> tuple[list[str], list[str], list[str], list[str]]:
    return (doc.internal_names(), [doc.nodes[i].name for i in doc.arguments()],
            [doc.nodes[i].name for i in doc.aux_states()],
            [e.name for e in doc.output_entries()])


@pytest.mark.corpus
def test_the_corpus_is_there() -> None:
    assert len(corpus_files()) == 27, f"expected the 27 corpus files in {CORPUS}"


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params())
def test_corpus_file_opens_like_mxnet(path: pathlib.Path) -> None:
    if path.name == EMPTY:
        with pytest.raises(SymbolFileError, match="not a symbol file"):
            GraphDocument.open(str(path))
        return
    doc = GraphDocument.open(str(path), use_mxnet=False)
    assert doc.internals()
    if path.name in MX_UNLOADABLE:
        assert doc.unknown_ops(), "MXNet refuses it because of an unregistered op"
        with pytest.raises(mx.MXNetError):
            mx.sym.load(str(path))
        return
    assert not doc.unknown_ops()
    sym = mx.sym.load(str(path))
    assert _doc_view(doc) == _mx_view(sym)
    # what we write back is accepted by MXNet and means the same graph
    again = mx.sym.load_json(doc.to_json())
    assert _mx_view(again) == _mx_view(sym)


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params(
    [p for p in corpus_files() if '"param"' in p.read_text(errors="replace")[:4000]]))
def test_legacy_upgrade_equals_mxnets_own(path: pathlib.Path) -> None:
    ours = GraphDocument.open(str(path), use_mxnet=False)
    assert ours.generation == "legacy" and ours.upgraded == "mxexplorer"
    theirs = json.loads(mx.sym.load(str(path)).tojson())
    mine = ours.to_dict()
    assert mine["nodes"] == theirs["nodes"]
    assert mine["heads"] == theirs["heads"]
    assert mine["arg_nodes"] == theirs["arg_nodes"]
    assert mine["node_row_ptr"] == theirs["node_row_ptr"]
    via_mxnet = GraphDocument.open(str(path), use_mxnet=True)
    assert via_mxnet.upgraded == "mxnet"
    assert via_mxnet.to_dict()["nodes"] == mine["nodes"]


def _modern(paths: list[pathlib.Path]) -> list[pathlib.Path]:
    """NNVM files from MXNet >= 0.9.4, which the upgrade leaves as they are."""
    out = []
    for p in paths:
        if p.name == EMPTY:
            continue
        raw = json.loads(p.read_text())
        version = raw.get("attrs", {}).get("mxnet_version", ["int", 800])[1]
        if version >= 904:
            out.append(p)
    return out


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params(
    [p for p in corpus_files() if p.name != EMPTY and p.name not in MX_UNLOADABLE]))
def test_written_graph_equals_what_mxnet_writes(path: pathlib.Path) -> None:
    """Every loadable file, upgraded or not, is written as MXNet itself would write it."""
    from mxexplorer.core.graph import opinfo

    mine = GraphDocument.open(str(path), use_mxnet=False).to_dict()
    theirs = json.loads(mx.sym.load(str(path)).tojson())
    for node in mine["nodes"]:
        node["op"] = opinfo.canonical_op(node["op"])
    assert mine["nodes"] == theirs["nodes"]
    assert mine["heads"] == theirs["heads"]


@pytest.mark.parametrize("path", _modern(corpus_files())
                         + sorted(EXAMPLES.glob("*-symbol.json")), ids=lambda p: p.name[:60])
def test_unedited_document_writes_the_input_graph(path: pathlib.Path) -> None:
    """NNVM files come back node for node (older pre-NNVM ones are upgraded, see above)."""
    doc = GraphDocument.open(str(path), use_mxnet=False)
    raw = json.loads(path.read_text())
    out = doc.to_dict()
    assert len(out["nodes"]) == len(raw["nodes"])
    for a, b in zip(raw["nodes"], out["nodes"]):
        attrs = a.get("attrs", a.get("attr", {}))
        assert (b["op"], b["name"], b.get("attrs", {}), b["inputs"]) == \
            (a["op"], a["name"], attrs, [list(e) + [0] * (3 - len(e)) for e in a["inputs"]])
    assert out["heads"] == [list(h) + [0] * (3 - len(h)) for h in raw["heads"]]


def test_gluon_export_matches_mxnet(zoo) -> None:
    path = zoo("resnet18_v1")
    doc = GraphDocument.open(str(path))
    assert doc.params_path and doc.params_path.endswith("-0000.params")
    assert _doc_view(doc) == _mx_view(mx.sym.load(str(path)))
    kinds = doc.kinds()
    assert [doc.nodes[i].name for i in doc.data_inputs()] == ["data"]
    assert kinds[doc.find("resnetv10_conv0_weight")[0]] == NodeKind.PARAM
    assert kinds[doc.find("resnetv10_batchnorm0_running_mean")[0]] == NodeKind.AUX


def test_symbols_built_in_python_match_mxnet() -> None:
    data = mx.sym.var("data")
    a = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name="a/conv")
    parts = mx.sym.split(a, num_outputs=2, axis=1, name="sp")
    b = mx.sym.elemwise_add(parts[0], parts[1], name="")
    c = mx.sym.FullyConnected(b, num_hidden=3, name="fc")
    g = mx.sym.Group([c, parts[1], mx.sym.BatchNorm(a, output_mean_var=True, name="bn")])
    doc = GraphDocument.from_json(g.tojson())
    assert _doc_view(doc) == _mx_view(g)


def test_duplicate_names_unknown_ops_and_forward_references_load() -> None:
    dup = GraphDocument.open(str(DATA / "duplicate_names-symbol.json"))
    assert dup.duplicate_names() == ["r"]
    assert dup.internal_names() == mx.sym.load(str(DATA / "duplicate_names-symbol.json")) \
        .get_internals().list_outputs()
    unknown = GraphDocument.open(str(DATA / "unknown_op-symbol.json"))
    assert unknown.unknown_ops() == ["MyFancyOp"]
    assert unknown.internal_names() == ["data", "fancy_output", "r_output"]
    fwd = GraphDocument.open(str(DATA / "forward_ref-symbol.json"))
    assert fwd.internal_names() == mx.sym.load(str(DATA / "forward_ref-symbol.json")) \
        .get_internals().list_outputs()


BROKEN = {
    "empty-symbol.json": "the file is empty",
    "whitespace-symbol.json": "the file is empty",
    "not_json-symbol.json": "not valid JSON",
    "json_list-symbol.json": "the JSON is a list, not an object",
    "not_symbol-symbol.json": "not a symbol file: the JSON object has no 'nodes'",
    "empty_object-symbol.json": "not a symbol file",
    "truncated-symbol.json": "looks truncated",
    "binary-symbol.json": "binary file",
    "latin1-symbol.json": "not a text file",
    "huge_numbers-symbol.json": "refers to node 99999999999999999999999999",
    "float_index-symbol.json": "not a whole number",
    "dangling_input-symbol.json": "input 0 refers to node 7, but the graph has 3 nodes",
    "negative_input-symbol.json": "refers to node -1",
    "dangling_head-symbol.json": "head 0 refers to node 5",
    "bad_output_index-symbol.json": "asks for output 3 of node 1 'r1' (Activation), which has 1",
    "cycle-symbol.json": "the graph has a cycle",
    "self_loop-symbol.json": "the graph has a cycle",
    "no_heads-symbol.json": "has no outputs",
    "nodes_not_list-symbol.json": "'nodes' is not a list",
    "variable_with_inputs-symbol.json": "is a variable but has inputs",
    "deep_nesting-symbol.json": "not",
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_file_gives_one_clear_line(name: str) -> None:
    path = DATA / "broken" / name
    with pytest.raises(SymbolFileError) as info:
        GraphDocument.open(str(path))
    text = str(info.value)
    assert BROKEN[name] in text
    assert "\n" not in text and str(path) in text


def test_every_broken_file_has_an_expectation() -> None:
    assert sorted(p.name for p in (DATA / "broken").iterdir()) == sorted(BROKEN)


def test_missing_file_and_folder() -> None:
    with pytest.raises(SymbolFileError, match="no such file"):
        GraphDocument.open("/nonexistent/x-symbol.json")
    with pytest.raises(SymbolFileError, match="folder"):
        GraphDocument.open(str(DATA))
