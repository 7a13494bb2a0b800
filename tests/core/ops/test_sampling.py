"""The sampling family against MXNet 1.9.1 (the judge): the random draws (``_random_*``,
their ``_like`` variants, ``_shuffle``), the per-parameter draws (``_sample_*``), the
densities (``_random_pdf_*``), ``_sample_multinomial``, ``_sample_unique_zipfian``,
``_npi_choice`` and ``_npi_multinomial``, with attributes and input shapes or dtypes
(partly unknown, missing, or wrong) drawn by hypothesis, on which the engine and MXNet
infer the same or both refuse; and the plain-words messages.

Shapes are given in MXNet's legacy convention (0 an unknown dim, None not given); the
op's visible outputs may be "pinned" by a reader (see :func:`test_sequence.check`).
Two ops have more outputs in MXNet than the op table counts (``_sample_multinomial``
with ``get_prob``, ``_sample_unique_zipfian``): :func:`judge_all` compares them with the
engine told the node's real output count, or on the outputs the table counts.
"""
from __future__ import annotations

from typing import Any, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from mxexplorer.core.ops import registry
from mxexplorer.core.ops.sampling import DRAWS, LIKES, PDFS, SAMPLES
from tests.core.ops.judge import Verdict, engine_verdict, verdicts
from tests.core.ops.test_sequence import (
    DTYPES,
    Legacy,
    check,
    dtypes,
    message,
    mostly,
    shapes,
    varied,
)

FEW = settings(max_examples=50, deadline=None)
SOME = settings(max_examples=80, deadline=None)
MANY = settings(max_examples=150, deadline=None)

pins_dtypes = st.one_of(st.none(), st.none(), st.sampled_from(DTYPES))


# ----------------------------------------------------------------- a wider judge
def judge_all(op: str, attrs: dict[str, str], values: Sequence[Any], kind: str = "shape",
              pins: Sequence[Any] = (), total: int | None = None) -> Verdict:
    """MXNet and the engine agree on the inputs and the first outputs (``total`` of
    them: the engine is told the node has that many), with output ``j`` pinned by
    ``elemwise_add(pin_j, out_j)`` when ``pins[j]`` is given."""
    theirs, ours = verdicts(op, attrs, values, kind, pins, total, pin_with="elemwise_add")
    if theirs.refused is None and ours.refused is None:
        theirs = Verdict(None, theirs.ins, theirs.outs[:len(ours.outs)])
    assert ours.same_as(theirs), (
        f"{op} {attrs} {kind}s {list(values)} pins {list(pins)}:\n  MXNet:  {theirs}\n"
        f"  engine: {ours}")
    return theirs


# ----------------------------------------------------------------------- strategies
def shape_text(draw: Any, lo: int = 0, hi: int = 3, items: Any = None) -> str:
    """A shape attribute: sizes (some unknown, some odd), bracketed or not."""
    sizes = draw(st.lists(items if items is not None else st.sampled_from(
        [1, 2, 3, 4, 0, 2, 3, -1]), min_size=lo, max_size=hi))
    if len(sizes) == 1 and draw(st.integers(0, 4)) == 1:
        return str(sizes[0])
    text = ", ".join(str(d) for d in sizes)
    return f"({text}{',' if len(sizes) == 1 else ''})" if draw(st.booleans()) else f"[{text}]"


def legacy(shape: Sequence[int]) -> Legacy:
    """An attribute's sizes as an input or pin gives them (unknown -1 written 0)."""
    return tuple(max(d, 0) for d in shape) or None


def extra_input(draw: Any, values: list[Any], odds: int = 12, more: Any = (2,)
                ) -> list[Any]:
    """Now and then one input too few or too many (``more``: a shape, or a dtype)."""
    if draw(st.integers(0, odds)) == 1:
        return values[:-1] if values and draw(st.booleans()) else values + [more]
    return values


# ===================================================== draws from the attributes
@st.composite
def draw_case(draw: st.DrawFn) -> tuple[str, dict[str, str], list[Legacy], list[Legacy]]:
    op = draw(st.sampled_from([*DRAWS, "_random_randint", "uniform", "random_normal",
                               "_npi_random_randint"]))
    attrs: dict[str, str] = {}
    if "randint" in op:
        attrs.update(low="0", high="5")
    sizes: tuple[int, ...] | None = None
    k = draw(st.integers(0, 12))
    if k == 1:
        attrs["shape"] = "None"
    elif k == 2:
        attrs["shape"] = draw(st.sampled_from(["(65536, 32768)", "(65535, 32768)",
                                               "(2, -2)", "(-1, -3)", "(0, -2)"]))
    elif k > 3:
        attrs["shape"] = shape_text(draw)
        text = attrs["shape"].strip("()[]").rstrip(",")
        sizes = tuple(int(d) for d in text.split(",")) if text else ()
    if draw(st.integers(0, 5)) == 1:
        attrs["ctx"] = "cpu(0)"
    values: list[Legacy] = extra_input(draw, [], 15)
    pin = draw(st.one_of(st.none(), varied(legacy(sizes) if sizes else (2, 3), 4)))
    return op, attrs, values, [pin]


@MANY
@given(draw_case())
def test_draw_shapes(case: tuple[str, dict[str, str], list[Legacy], list[Legacy]]) -> None:
    op, attrs, values, pins = case
    check(op, attrs, values, pins=pins)


@SOME
@given(st.sampled_from([*DRAWS, "_random_randint"]), st.data())
def test_draw_dtypes(op: str, data: st.DataObject) -> None:
    attrs = {"low": "0", "high": "5"} if op == "_random_randint" else {}
    choices = ["None", "int32", "int64"] if op == "_random_randint" else \
        ["None", "float16", "float32", "float64"]
    if data.draw(st.booleans()):
        attrs["dtype"] = data.draw(st.sampled_from(choices))
    values = extra_input(data.draw, [], 15, "float32")
    check(op, attrs, values, "dtype", pins=[data.draw(pins_dtypes)])


# ======================================================== like and shuffle
@SOME
@given(st.sampled_from([*LIKES, "_shuffle", "shuffle", "_npi_shuffle"]), shapes(),
       st.data())
def test_like_and_shuffle(op: str, shape: Legacy, data: st.DataObject) -> None:
    values = extra_input(data.draw, [shape])
    pin = data.draw(st.one_of(st.none(), varied(shape or (2, 3), 4)))
    check(op, {}, values, pins=[pin])
    types = extra_input(data.draw, [data.draw(dtypes)], more="float16")
    check(op, {}, types, "dtype", pins=[data.draw(pins_dtypes)])


# ======================================================== _sample_*: per parameter
@st.composite
def sample_case(draw: st.DrawFn) -> tuple[str, dict[str, str], list[Legacy], list[Legacy]]:
    op = draw(st.sampled_from([*SAMPLES, "sample_uniform"]))
    attrs: dict[str, str] = {}
    samples: tuple[int, ...] = ()
    k = draw(st.integers(0, 10))
    if k == 1:
        attrs["shape"] = draw(st.sampled_from(["(2, 0)", "(-1,)", "()"]))
    elif k > 4:
        attrs["shape"] = shape_text(draw, 0, 3, st.sampled_from([1, 2, 3]))
        text = attrs["shape"].strip("()[]").rstrip(",")
        samples = tuple(int(d) for d in text.split(",")) if text else ()
    params = draw(shapes(1, 3, none=False))
    assert params is not None
    n = draw(st.sampled_from([1, 2, 2, 2, 0, 3]) if draw(st.integers(0, 8)) == 1
             else st.sampled_from([1, 2, 2]))
    values = [draw(varied(params, 4)) for _ in range(n)]
    pin = draw(st.one_of(st.none(), st.none(), varied(params + samples, 6)))
    if k == 2 and pin is None:          # None: MXNet reads past the attribute's end
        attrs["shape"] = "None"
    return op, attrs, values, [pin]


@MANY
@given(sample_case())
def test_sample_shapes(case: tuple[str, dict[str, str], list[Legacy], list[Legacy]]
                       ) -> None:
    op, attrs, values, pins = case
    check(op, attrs, values, pins=pins)


@SOME
@given(st.sampled_from(SAMPLES), st.data())
def test_sample_dtypes(op: str, data: st.DataObject) -> None:
    attrs: dict[str, str] = {}
    if data.draw(st.booleans()):
        attrs["dtype"] = data.draw(st.sampled_from(["None", "float16", "float32",
                                                    "float64"]))
    n = data.draw(st.sampled_from([1, 2, 2, 2, 0, 3]))
    types = [data.draw(mostly("float16", dtypes, 2)) for _ in range(n)]
    check(op, attrs, types, "dtype", pins=[data.draw(pins_dtypes)])


# ============================================================================ pdfs
@st.composite
def pdf_case(draw: st.DrawFn) -> tuple[str, dict[str, str], list[Legacy], list[Legacy]]:
    op = draw(st.sampled_from([*PDFS, "random_pdf_normal"]))
    name = op if op in PDFS else "_random_pdf_normal"
    attrs = {"is_log": "True"} if draw(st.booleans()) else {}
    sample = draw(shapes(1, 4, none=False))
    assert sample is not None
    cut = draw(st.integers(1, len(sample)))
    param = sample[:cut]
    if name == "_random_pdf_dirichlet":
        param = param[:-1] + (sample[-1],)
    values: list[Legacy] = [draw(varied(sample, 6))]
    values += [draw(varied(param, 5)) for _ in PDFS[name]]
    values = extra_input(draw, values, 10)
    vector = name == "_random_pdf_dirichlet"
    out = (1,) if vector and len(sample) == 1 else (sample[:-1] if vector else sample)
    pin = draw(st.one_of(st.none(), varied(out, 6)))
    return op, attrs, values, [pin]


@MANY
@given(pdf_case())
def test_pdf_shapes(case: tuple[str, dict[str, str], list[Legacy], list[Legacy]]) -> None:
    op, attrs, values, pins = case
    check(op, attrs, values, pins=pins)


@SOME
@given(st.sampled_from(list(PDFS)), st.data())
def test_pdf_dtypes(op: str, data: st.DataObject) -> None:
    types = [data.draw(mostly("float32", dtypes, 2)) for _ in range(len(PDFS[op]) + 1)]
    check(op, {}, extra_input(data.draw, types, 8, "int32"), "dtype", pins=[data.draw(pins_dtypes)])


# ===================================================================== multinomial
@st.composite
def multinomial_case(draw: st.DrawFn) -> tuple[dict[str, str], list[Legacy], Legacy]:
    attrs: dict[str, str] = {}
    samples: tuple[int, ...] = ()
    k = draw(st.integers(0, 10))
    if k == 1:
        attrs["shape"] = draw(st.sampled_from(["None", "(2, -2)", "()"]))
    elif k > 3:
        attrs["shape"] = shape_text(draw, 0, 3)
        text = attrs["shape"].strip("()[]").rstrip(",")
        samples = tuple(int(d) for d in text.split(",")) if text else ()
    data = draw(shapes(1, 4))
    values = extra_input(draw, [data], 15)
    drawn = legacy(samples) or ()
    out = data[:-1] + drawn if data and len(data) > 1 else (drawn or (1,))
    pin = draw(st.one_of(st.none(), varied(out or (2,), 6)))
    return attrs, values, pin


@MANY
@given(multinomial_case(), st.booleans())
def test_multinomial_shapes(case: tuple[dict[str, str], list[Legacy], Legacy],
                            prob: bool) -> None:
    attrs, values, pin = case
    if prob:                    # the table counts one output: the first is compared
        judge_all("_sample_multinomial", {**attrs, "get_prob": "True"}, values,
                  pins=[pin])
    else:
        check("_sample_multinomial", attrs, values, pins=[pin])


@SOME
@given(st.sampled_from(["uint8", "int32", "float16", "float32", "float64", None]),
       st.booleans(), st.data())
def test_multinomial_dtypes(dtype: str | None, prob: bool, data: st.DataObject) -> None:
    attrs = {"dtype": dtype} if dtype else {}
    values = extra_input(data.draw, [data.draw(dtypes)], more="float32")
    pin = data.draw(pins_dtypes)
    if prob:
        judge_all("_sample_multinomial", {**attrs, "get_prob": "1"}, values, "dtype",
                  pins=[pin])
    else:
        check("_sample_multinomial", attrs, values, "dtype", pins=[pin])


# ========================================================================= zipfian
@SOME
@given(st.data())
def test_zipfian(data: st.DataObject) -> None:
    draw = data.draw
    attrs = {"range_max": draw(st.sampled_from(["10", "1", "-3"]))}
    k = draw(st.integers(0, 8))
    if k == 1:
        attrs["shape"] = draw(st.sampled_from(["None", "(2, -2)", "()", "(3,)", "(1,2,3)"]))
    elif k > 1:
        attrs["shape"] = shape_text(draw, 2, 2)
    values = extra_input(draw, [], 10)
    total = draw(st.sampled_from([2, 2, 1]))    # 1: as the op table counts them
    pins = [draw(st.one_of(st.none(), shapes(1, 3))) for _ in range(total)]
    judge_all("_sample_unique_zipfian", attrs, values, pins=pins, total=total)
    judge_all("_sample_unique_zipfian", attrs, ["int64" for _ in values], "dtype",
              pins=[draw(pins_dtypes) for _ in range(total)], total=total)


# ================================================================ numpy choices
@FEW
@given(st.data())
def test_choice(data: st.DataObject) -> None:
    draw = data.draw
    attrs = {"a": draw(st.sampled_from(["5", "None", "3L", " 4", "None ", "-2", "x",
                                        "2.5"])),
             "size": draw(st.sampled_from(["None", "(2, -3)", "(2,x)", " None", "(2, 3)",
                                           "()"]))}
    if draw(st.booleans()):
        attrs["size"] = shape_text(draw, 1, 3)
    if draw(st.booleans()):
        attrs["weighted"] = "True"
    if draw(st.integers(0, 4)) == 1:
        attrs["replace"] = "False"
    values = [draw(shapes(1, 2)) for _ in range(draw(st.integers(0, 2)))]
    pin = draw(st.one_of(st.none(), shapes(1, 3)))
    check("_npi_choice", attrs, values, pins=[pin])
    check("_npi_choice", attrs, [draw(dtypes) for _ in values], "dtype",
          pins=[draw(pins_dtypes)])


@SOME
@given(st.data())
def test_npi_multinomial(data: st.DataObject) -> None:
    draw = data.draw
    attrs = {"n": draw(st.sampled_from(["3", "1", "-1"]))}
    given_pvals = draw(st.booleans())
    if given_pvals:
        attrs["pvals"] = draw(st.sampled_from(["(0.5, 0.5)", "()", "0.5", "[0.2,0.3,0.5]",
                                               "(0.5, x)", "(inf,)", "None"]))
    if draw(st.integers(0, 4)) > 0:
        attrs["size"] = draw(st.sampled_from(["None", "()", "(2, -2)"])) \
            if draw(st.integers(0, 5)) == 1 else shape_text(draw, 0, 3)
    n = 0 if given_pvals else 1
    if draw(st.integers(0, 6)) == 1:
        n = 1 - n
    values = [draw(mostly((4,), shapes(1, 2), 3)) for _ in range(n)]
    pin = draw(st.one_of(st.none(), shapes(1, 4)))
    check("_npi_multinomial", attrs, values, pins=[pin])
    check("_npi_multinomial", attrs, [draw(dtypes) for _ in values], "dtype",
          pins=[draw(pins_dtypes)])


# ======================================================================== examples
def test_every_op_of_the_family_has_its_rule() -> None:
    ops = [*DRAWS, "_random_randint", *LIKES, "_shuffle", *SAMPLES, *PDFS,
           "_sample_multinomial", "_sample_unique_zipfian", "_npi_choice",
           "_npi_multinomial"]
    assert all(registry.family_of(op) == "sampling" for op in ops)
    assert registry.family_of("uniform") == registry.family_of("sample_normal") == "sampling"


def test_examples() -> None:
    assert check("_random_normal", {"shape": "(2, 0, 3)"}, []).outs == ((2, 0, 3),)
    assert check("_random_uniform", {}, [], pins=[(4, 5)]).outs == ((4, 5),)
    assert check("_random_randint", {"low": "0", "high": "9"}, [], "dtype").outs == \
        ("int32",)
    verdict = check("_sample_normal", {"shape": "(4,)"}, [None, None], pins=[(2, 3, 4)])
    assert verdict.ins == ((2, 3), (2, 3)) and verdict.outs == ((2, 3, 4),)
    verdict = check("_sample_uniform", {"shape": "(4,)"}, [(2, 3), (4, 3)])
    assert verdict.outs == (None,)              # parameters that disagree: no answer
    assert check("_sample_gamma", {}, ["int32", None], "dtype").outs == ("float32",)
    verdict = check("_random_pdf_dirichlet", {}, [(2, 3, 4), (2, 0)])
    assert verdict.ins[1] == (2, 4) and verdict.outs == ((2, 3),)
    assert check("_sample_multinomial", {"shape": "(2,)"}, [(5, 4)]).outs == ((5, 2),)
    verdict = judge_all("_sample_unique_zipfian", {"range_max": "9", "shape": "(3, 4)"}, [],
                        total=2)
    assert verdict.outs == ((3, 4), (3,))
    assert check("_npi_multinomial", {"n": "2", "size": "(3,)"}, [(4,)]).outs == ((3, 4),)
    assert check("_npi_choice", {"a": "5", "size": "(2, 3)"}, [], "dtype").outs == \
        ("int64",)


# ======================================================================== messages
def test_draw_messages() -> None:
    text = message("_random_uniform", {"shape": "(2, 3)"}, [(2, 3)])
    assert "no inputs" in text
    assert "shape=(2, -2)" in message("_random_normal", {"shape": "(2, -2)"}, [])
    text = message("_random_uniform", {"shape": "(65536, 32768)"}, [])
    assert "shape" in text and "2**31" in text
    attrs = {"low": "0", "high": "3", "dtype": "int64"}
    assert engine_verdict("_random_randint", attrs, [], "dtype").outs == ("int64",)
    text = message("_random_uniform", {"dtype": "float16"}, ["float32"], "dtype")
    assert "no inputs" in text


def test_sample_messages() -> None:
    text = message("_sample_uniform", {"shape": "(4, 0)"}, [(2, 3), (2, 3)])
    assert "shape=(4, 0)" in text and "above 0" in text
    assert "1 or 2" in message("_sample_normal", {}, [(2,), (2,), (2,)])
    text = message("_sample_poisson", {"shape": "None"}, [(2, 3)])
    assert "shape=None" in text
    assert engine_verdict("_sample_uniform", {"shape": "(4,)"}, [None, None]).refused is None


def test_pdf_messages() -> None:
    text = message("_random_pdf_normal", {}, [(2, 3, 4), (2, 3), (5, 3)])
    assert "'in2' (sigma)" in text and "'in1' (mu)" in text
    text = message("_random_pdf_gamma", {}, [(2, 3), (2, 3, 4), (2, 3, 4)])
    assert "'in1' (alpha)" in text and "leading part" in text
    assert "at least 2" in message("_random_pdf_poisson", {}, [(2, 3)])
    text = message("_random_pdf_normal", {}, ["float16", None], "dtype")
    assert "3 (sample, mu, sigma)" in text
    text = message("_random_pdf_dirichlet", {}, [(2, 3, 4), (2, 3)])
    assert "'in1' (alpha)" in text and "(2, 4)" in text


def test_multinomial_messages() -> None:
    assert "shape=None" in message("_sample_multinomial", {"shape": "None"}, [(5, 4)])
    assert "shape=(2, -2)" in message("_sample_multinomial", {"shape": "(2, -2)"}, [(4,)])
    assert "1 (data)" in message("_sample_multinomial", {}, [(4,), (4,)])
    text = message("_sample_unique_zipfian", {"range_max": "9", "shape": "(3,)"}, [])
    assert "shape=(3,)" in text and "2 sizes" in text


def test_numpy_messages() -> None:
    assert "attribute a='x'" in message("_npi_choice", {"a": "x", "size": "(2,)"}, [])
    text = message("_npi_choice", {"a": "3", "size": "(2,x)"}, [])
    assert "attribute size='(2,x)'" in text
    assert "size=(2, -3)" in message("_npi_choice", {"a": "3", "size": "(2, -3)"}, [])
    text = message("_npi_multinomial", {"n": "3"}, [None])
    assert "'in0' (pvals)" in text and "1-d" in text
    text = message("_npi_multinomial", {"n": "3", "pvals": "(0.5, 0.5)"}, [(2,)])
    assert "pvals" in text and "none" in text
    assert "pvals='(inf,)'" in message("_npi_multinomial", {"n": "3", "pvals": "(inf,)"},
                                       [])
