"""Attribute values read as MXNet 1.9.1 reads them: every spelling a front end writes
(Python's ``(3, 3)``/``True``/``None``, the C++ API's ``(3,3)``/``1``, Python 2's ``3L``,
brackets, trailing commas, spaces) is accepted or refused exactly when MXNet's parser
accepts or refuses it, and a tuple parses to what MXNet makes of it."""
from __future__ import annotations

import ctypes
import json
import warnings

import mxnet as mx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mxexplorer.core.ops import params

#: MXNet's words when its parameter parser (not an op's own check) refuses a value
PARSER_WORDS = ("Invalid Parameter format", "Invalid Input", "Some trailing characters",
                "Cannot find argument", "Required parameter", "should be greater equal",
                "should be less equal", "Invalid parameter")


def mxnet_refuses(op: str, attrs: dict[str, str]) -> bool:
    """Whether MXNet's parameter parser refuses to build ``op`` with these attributes (an
    op's own checks, such as SliceChannel's num_outputs above 0, are its rule's: the
    family tests hold those)."""
    keys = (ctypes.c_char_p * len(attrs))(*[k.encode() for k in attrs])
    vals = (ctypes.c_char_p * len(attrs))(*[v.encode() for v in attrs.values()])
    handle, creator = mx.base.SymbolHandle(), mx.base.OpHandle()
    try:
        mx.base.check_call(mx.base._LIB.NNGetOpHandle(mx.base.c_str(op), ctypes.byref(creator)))
        mx.base.check_call(mx.base._LIB.MXSymbolCreateAtomicSymbol(
            creator, len(attrs), keys, vals, ctypes.byref(handle)))
    except mx.base.MXNetError as exc:
        return any(words in str(exc) for words in PARSER_WORDS)
    mx.base._LIB.NNSymbolFree(handle)
    return False


def engine_refuses(op: str, attrs: dict[str, str]) -> bool:
    try:
        params.parse(op, attrs)
    except params.ParamError:
        return True
    return False


def zeros_shape(text: str) -> tuple[int, ...]:
    """What MXNet makes of ``shape=text`` (``_zeros``'s output, legacy convention)."""
    graph = {"nodes": [{"op": "_zeros", "name": "z", "attrs": {"shape": text}, "inputs": []}],
             "arg_nodes": [], "heads": [[0, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, out, _ = mx.sym.load_json(json.dumps(graph)).infer_shape_partial()
    return tuple(out[0])


space = st.sampled_from(["", " ", "  "])
number = st.builds(lambda sign, n, suffix: f"{sign}{n}{suffix}",
                   st.sampled_from(["", "", "-", "+"]), st.integers(0, 40),
                   st.sampled_from(["", "", "", "L", ".0", "x"]))


@st.composite
def tuples(draw: st.DrawFn) -> str:
    """Tuples as front ends write them, and near misses."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(["None", "()", "[]", "( )", "3", "-2", "", "(", "(,)",
                                     "(3;3)", "(3,,3)", "(3, None)", "3x3", "(3)(3)"]))
    items = draw(st.lists(number, min_size=0, max_size=4))
    sep = draw(st.sampled_from([",", ", ", " ,", ",  "]))
    body = sep.join(items) + draw(st.sampled_from(["", "", ",", ", "]))
    open_, close = draw(st.sampled_from([("(", ")"), ("[", "]"), ("(", "]"), ("", "")]))
    return draw(space) + open_ + body + close + draw(space)


@settings(max_examples=300, deadline=None)
@given(tuples())
def test_a_shape_is_read_as_mxnet_reads_it(text: str) -> None:
    theirs = mxnet_refuses("_zeros", {"shape": text})
    assert engine_refuses("_zeros", {"shape": text}) == theirs, text
    if not theirs:
        parsed = params.parse("_zeros", {"shape": text})["shape"]
        if parsed is not None and any(d < -1 for d in parsed):
            with pytest.raises(mx.base.MXNetError):   # the op's check, not the parser's
                zeros_shape(text)
            return
        legacy = () if parsed is None else tuple(max(d, 0) for d in parsed)
        assert legacy == zeros_shape(text), text


@settings(max_examples=200, deadline=None)
@given(st.one_of(number, st.sampled_from(["", " 4", "4 ", "four", "1e3", "0x4", "99999999999",
                                          "-5", "3.0", "4L"])))
def test_a_whole_number_is_read_as_mxnet_reads_it(text: str) -> None:
    # num_outputs: int; topk's k: int; Embedding's input_dim: long (non-negative)
    for op, attrs in (("SliceChannel", {"num_outputs": text}), ("topk", {"k": text}),
                      ("Embedding", {"input_dim": text, "output_dim": "4"})):
        assert engine_refuses(op, attrs) == mxnet_refuses(op, attrs), (op, text)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["True", "False", "true", "false", "TRUE", "tRuE", "1", "0", "2",
                        "yes", "no", " True", "True ", "", "None", "T", "1.0"]))
def test_a_boolean_is_read_as_mxnet_reads_it(text: str) -> None:
    attrs = {"multi_output": text}
    assert engine_refuses("SoftmaxOutput", attrs) == mxnet_refuses("SoftmaxOutput", attrs)


@settings(max_examples=200, deadline=None)
@given(st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["0.25", ".5", "5.", "1e-3", "1E+2", "0.5f", "inf", "-inf", "INF",
                     "Infinity", "nan", "NaN", "+0.5", " 0.5", "0.5 ", "1,5", "0x10", "",
                     "abc", "1e", "--1", "0.5ff", ".", "e", "-", "f", "infin", "nan(x)",
                     "1e400", "-.e+f"])))
def test_a_number_is_read_as_mxnet_reads_it(text: str) -> None:
    attrs = {"slope": text}
    assert engine_refuses("LeakyReLU", attrs) == mxnet_refuses("LeakyReLU", attrs), text


@pytest.mark.parametrize(("op", "key", "values"), [
    ("Pooling", "pool_type", ["max", "avg", "sum", "lp", "Max", "'max'", " max", "None", ""]),
    ("Convolution", "layout", ["None", "NCHW", "NHWC", "nchw", "'None'", "'NCHW'", ""]),
    ("argmax", "axis", ["None", "1", "-1", "none", "(1)", "1.0", ""]),
])
def test_choices_and_optional_values_are_read_as_mxnet_reads_them(op, key, values) -> None:
    base = {"kernel": "(3, 3)", "num_filter": "4"} if op == "Convolution" else {}
    for value in values:
        attrs = {**base, key: value}
        assert engine_refuses(op, attrs) == mxnet_refuses(op, attrs), (op, key, value)


def test_an_undeclared_attribute_is_refused_where_mxnet_refuses_it() -> None:
    conv = {"kernel": "(3, 3)", "num_filter": "4"}
    for op, attrs in (("Convolution", {**conv, "foo": "1"}),
                      ("Convolution", {**conv, "mirror_stage": "True"}),
                      ("Convolution", {**conv, "__mirror_stage__": "True"}),
                      ("elemwise_add", {"foo": "1"}), ("Activation", {"act_type": "relu"})):
        assert engine_refuses(op, attrs) == mxnet_refuses(op, attrs), (op, attrs)
    with pytest.raises(params.ParamError, match="Convolution has no attribute 'foo'"):
        params.parse("Convolution", {**conv, "foo": "1"})


def test_messages_name_the_attribute_and_what_would_fit() -> None:
    with pytest.raises(params.ParamError) as exc:
        params.parse("Convolution", {"kernel": "3x3", "num_filter": "4"})
    assert exc.value.attr == "kernel"
    assert str(exc.value) == ("attribute kernel='3x3' is not a tuple of whole numbers such "
                              "as (3, 3)")
    with pytest.raises(params.ParamError, match="attribute num_filter is required"):
        params.parse("Convolution", {"kernel": "(3, 3)"})
    with pytest.raises(params.ParamError, match="pool_type='Max' is not avg, lp, max, sum"):
        params.parse("Pooling", {"pool_type": "Max"})


def test_defaults_are_mxnets() -> None:
    p = params.parse("Convolution", {"kernel": "(3,3)", "num_filter": "8"})
    assert p["stride"] == () and p["num_group"] == 1 and p["no_bias"] is False
    assert p["layout"] is None and p["workspace"] == 1024
    assert params.parse("Pooling", {})["pooling_convention"] == "valid"
    assert params.parse("softmax", {})["axis"] == -1


def test_parsed_parameters_are_shared_but_each_node_gets_its_own_copy() -> None:
    """The engine remembers what it parsed by (op, attributes); a rule that changes its
    ``c.p`` (``_npi_norm`` puts its resolved axis there) must not change the next node's.
    Two norms with the same attributes over a 3-D and a 4-D array: the second's axes are
    its own last two, not the first's."""
    from mxexplorer.core.analysis.shapes import infer_document
    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.ops import engine

    nodes = [{"op": "null", "name": "a", "inputs": []},
             {"op": "null", "name": "b", "inputs": []},
             {"op": "_npi_norm", "name": "na", "attrs": {"ord": "2"}, "inputs": [[0, 0, 0]]},
             {"op": "_npi_norm", "name": "nb", "attrs": {"ord": "2"}, "inputs": [[1, 0, 0]]}]
    doc = GraphDocument.from_json(json.dumps({
        "nodes": nodes, "arg_nodes": [0, 1], "heads": [[2, 0, 0], [3, 0, 0]],
        "attrs": {"mxnet_version": ["int", 10901]}}))
    result = infer_document(doc, {"a": (2, 4, 5), "b": (3, 2, 4, 5)}, use_mxnet=False)
    shapes = dict(zip((e.name for e in doc.internals()), result.internal_shapes))
    assert shapes["na_output0"] == (2,) and shapes["nb_output0"] == (3, 2)
    first = engine.parsed("Convolution", {"kernel": "(3, 3)", "num_filter": "8"})
    again = engine.parsed("Convolution", {"kernel": "(3, 3)", "num_filter": "8"})
    assert first == again and first is not again
    assert isinstance(engine.parsed("Convolution", {"kernel": "(3, 3)"}), params.ParamError)


def test_float_tuples_refuse_what_a_cpp_stream_cannot_read() -> None:
    """``Tuple<float>`` reads items with ``istream >> float``: no ``inf`` or ``nan``, and
    nothing out of the type's range (MXNet 1.9.1 refuses ``sizes='(inf,)'`` and
    ``'(1e39,)'`` on MultiBoxPrior; ``'(3e38,)'`` and ``'(1e-50,)'`` pass)."""
    d = mx.sym.var("data")
    for text, fine in (("(inf,)", False), ("(nan,)", False), ("(-inf,)", False),
                       ("(1e39,)", False), ("(1e309,)", False), ("(3e38,)", True),
                       ("(1e-50,)", True), ("(0.5, 1.5)", True)):
        try:
            mx.sym.contrib.MultiBoxPrior(d, sizes=text).infer_shape(data=(1, 3, 8, 8))
            theirs = True
        except mx.base.MXNetError:
            theirs = False
        assert theirs == fine, text
        try:
            params.parse("_contrib_MultiBoxPrior", {"sizes": text})
            ours = True
        except params.ParamError:
            ours = False
        assert ours == fine, text
