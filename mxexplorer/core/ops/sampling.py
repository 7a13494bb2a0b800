"""Rules for the sampling family: MXNet 1.9.1's random draws, their densities, and the
ops that pick or shuffle at random, as MXNet infers their shapes and dtypes.

Owns ``_random_uniform``, ``_random_normal``, ``_random_gamma``, ``_random_exponential``,
``_random_poisson``, ``_random_negative_binomial``,
``_random_generalized_negative_binomial`` and ``_random_randint`` (no inputs: the output
is the ``shape`` attribute, dims written 0 unknown; a known output stands when the
attribute does not give a full shape; dtype from ``dtype`` or a known output, float32 by
default, int32 for randint); their ``_like`` variants and ``_shuffle`` (output = input,
both ways); ``_sample_uniform`` ... ``_sample_generalized_negative_binomial`` (one or two
parameter inputs of one shape, output = that shape + ``shape``, and back from a known
output; a clash between the parameters leaves everything unknown, as in MXNet); the
densities ``_random_pdf_*`` (once every input's rank is known: parameters the leading
part of the sample's shape, the dirichlet's last axis the sample's); ``_sample_multinomial``
(output = the data's shape without its last axis + ``shape``; ``get_prob``'s second
output the same); ``_sample_unique_zipfian`` (``shape`` (batch, samples) and (batch,),
int64); ``_npi_choice`` (output = ``size``, int64, inputs untouched) and
``_npi_multinomial`` (``size`` + the number of outcomes, from ``pvals`` or a 1-d input).
Every output shape here follows from the attributes and input shapes; none depends on
the data.  Must not import MXNet or Qt.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from mxexplorer.core.graph import opinfo
from mxexplorer.core.ops.base import (
    Call,
    Conflict,
    MaybeShape,
    Rule,
    RuleError,
    Shape,
    elemwise_type,
    fmt,
    known,
    merge,
    size,
    table,
)
from mxexplorer.core.ops.params import parse_tuple

FAMILY = "sampling"
#: MXNet 1.9.1 is built without 64-bit tensor sizes: a tensor has fewer elements
_MOST_ELEMENTS = (1 << 31) - 1
FLOATS = ("float16", "float32", "float64")
INTS = ("int32", "int64")

DRAWS = ["_random_uniform", "_random_normal", "_random_gamma", "_random_exponential",
         "_random_poisson", "_random_negative_binomial",
         "_random_generalized_negative_binomial"]
LIKES = [f"{name}_like" for name in DRAWS]
SAMPLES = ["_sample_uniform", "_sample_normal", "_sample_gamma", "_sample_exponential",
           "_sample_poisson", "_sample_negative_binomial",
           "_sample_generalized_negative_binomial"]
#: the densities and their parameter inputs (after ``sample``)
PDFS: dict[str, tuple[str, ...]] = {
    "_random_pdf_uniform": ("low", "high"),
    "_random_pdf_normal": ("mu", "sigma"),
    "_random_pdf_gamma": ("alpha", "beta"),
    "_random_pdf_exponential": ("lam",),
    "_random_pdf_poisson": ("lam",),
    "_random_pdf_negative_binomial": ("k", "p"),
    "_random_pdf_generalized_negative_binomial": ("mu", "alpha"),
    "_random_pdf_dirichlet": ("alpha",),
}


# ------------------------------------------------------------------ shared steps
def _name(c: Call) -> str:
    return opinfo.canonical_op(c.op)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _inputs(c: Call, least: int, most: int, names: Sequence[str]) -> None:
    """The node has between ``least`` and ``most`` inputs (MXNet checks the count)."""
    n = len(c.ins)
    if least <= n <= most:
        return
    if most == 0:
        need = "no inputs (its output comes from its attributes)"
    elif least == most:
        need = f"{least} ({', '.join(names)})"
    else:
        need = f"{least} or {most} ({', '.join(names)})"
    raise RuleError(f"has {_plural(n, 'input')}, but {_name(c)} takes {need}")


def _no_negative(c: Call, value: Sequence[int] | None, attr: str) -> None:
    """MXNet refuses a size below -1 (-1 reads as unknown) in a shape it assigns."""
    if value is not None and any(d < -1 for d in value):
        c.fail(f"{attr}={c.attrs.get(attr, fmt(tuple(value)))} has a negative size: give "
               f"sizes of 0 or more (-1 for an unknown size)", attr=attr)


def _assign(c: Call, i: int, value: Any, why: str = "") -> None:
    """Output ``i`` is ``value`` when the node has that output (the op table may count
    fewer outputs than MXNet: ``get_prob``'s second output, zipfian's counts)."""
    if i < len(c.outs):
        c.set_out(i, value, why)


def _numpy_style(shape: Sequence[int] | None) -> MaybeShape:
    """A shape attribute as MXNet's legacy front end means it: 0 is an unknown size,
    ``()`` an unknown shape."""
    if shape is None or len(shape) == 0:
        return None
    return tuple(-1 if d == 0 else d for d in shape)


def _too_large(c: Call, shape: Shape, what: str, attr: str | None = None) -> None:
    if size(shape) >= _MOST_ELEMENTS:
        c.fail(f"{what} {fmt(shape)} has {size(shape)} elements; this MXNet holds fewer "
               f"than 2**31 - 1 per tensor", attr=attr)


# ====================================================== draws from the attributes
def init_shape(c: Call) -> None:
    """``InitShape``: no inputs; the output is ``shape`` (0 sizes unknown); a fully
    known output stands when ``shape`` is not fully known."""
    _inputs(c, 0, 0, ())
    raw = c.p["shape"]
    _no_negative(c, raw, "shape")
    if raw is not None and known(tuple(raw)):
        _too_large(c, tuple(raw), "shape", "shape")
    wanted = _numpy_style(raw)
    out = c.outs[0]
    if known(out) and not known(wanted):
        assert out is not None
        _too_large(c, out, "the output's shape")
        return
    c.set_out(0, wanted, f"(shape={c.attrs.get('shape')})")


def _draw_type(allowed: tuple[str, ...], default: str) -> Callable[[Call], None]:
    def rule(c: Call) -> None:
        """``SampleOpType``: the output's known dtype, else ``dtype``, else the
        default; it must be one the op draws."""
        _inputs(c, 0, 0, ())
        wanted = c.p["dtype"]
        out = c.outs[0]
        if out is not None and wanted is not None and out != wanted:
            c.fail(f"the output has type {out}, but dtype={wanted}: make them agree or "
                   f"leave dtype unset", attr="dtype")
        dtype = out if out is not None else (wanted or default)
        if dtype not in allowed:
            c.fail(f"the output would have type {dtype}, but {_name(c)} draws "
                   f"{' or '.join(allowed)} only", attr="dtype")
        c.set_out(0, dtype)
    return rule


# ======================================================= like, shuffle: same shape
def same_shape(c: Call) -> None:
    """``ElemwiseShape<1, 1>``: the output has the input's shape, both ways."""
    _inputs(c, 1, 1, ("data",))
    c.set_in(0, c.outs[0], "the output has")
    c.set_out(0, c.ins[0])


def like_type(c: Call) -> None:
    """``ElemwiseType<1, 1>``: the output has the input's dtype (any), both ways."""
    _inputs(c, 1, 1, ("data",))
    elemwise_type(c)


# =============================================== _sample_*: one draw per parameter
def _param_names(c: Call) -> tuple[str, ...]:
    spec = opinfo.spec(c.op)
    return tuple(spec.inputs) if spec is not None and spec.inputs else ()


def multi_shape(c: Call) -> None:
    """``MultiSampleOpShape``: one or two parameter inputs of one shape; the output is
    that shape followed by ``shape``; the parameters' shape comes back from a known
    output.  Parameters that disagree leave everything as it is (MXNet neither infers
    nor refuses)."""
    _inputs(c, 1, 2, _param_names(c))
    samples = c.p["shape"]
    if samples is not None and any(d <= 0 for d in samples):
        c.fail(f"shape={c.attrs.get('shape')} must give sizes above 0 (the samples drawn "
               f"per parameter)", attr="shape")
    found = c.outs[0]
    if samples is not None and found is not None and len(found) > len(samples):
        found = found[:len(found) - len(samples)]
    try:
        for value in c.ins:
            found = merge(found, value)
    except Conflict:
        return
    for i in range(len(c.ins)):
        c.set_in(i, found)
    if found is None or len(found) == 0:
        return
    if samples is None:
        c.fail("shape=None is not a shape of samples: give a tuple such as (2,), or () "
               "for one sample per parameter", attr="shape")
    assert samples is not None
    c.set_out(0, tuple(found) + tuple(samples),
              f"({fmt(found)} from the parameters, then shape={c.attrs.get('shape', '()')})")


def multi_type(c: Call) -> None:
    """``MultiSampleOpType``: the parameters share one dtype (any; a clash leaves them
    as they are); once it is known the output is the known output's dtype, else
    ``dtype``, else float32 (float16, float32 or float64)."""
    _inputs(c, 1, 2, _param_names(c))
    found = None
    for value in c.ins:
        if value is None:
            continue
        if found is not None and value != found:
            return
        found = value
    if found is None:
        return
    c.ins[:] = [found] * len(c.ins)
    wanted = c.p["dtype"]
    out = c.outs[0]
    if out is not None and wanted is not None and out != wanted:
        c.fail(f"the output has type {out}, but dtype={wanted}: make them agree or leave "
               f"dtype unset", attr="dtype")
    dtype = out if out is not None else (wanted or "float32")
    if dtype not in FLOATS:
        c.fail(f"the output would have type {dtype}, but {_name(c)} draws float16, "
               f"float32 or float64 only", attr="dtype")
    c.set_out(0, dtype)


# ========================================================================= pdfs
def pdf_shape(c: Call) -> None:
    """``PdfOpShape``: waits until every input's rank is known; then the parameters
    have one shape, the leading part of the sample's (the dirichlet's alpha ends with
    the sample's last axis), and the output is the sample's shape (without its last
    axis for the dirichlet; ``(1,)`` for a single vector sample)."""
    name = _name(c)
    if len(c.ins) < 2:
        raise RuleError(f"has {_plural(len(c.ins), 'input')}, but {name} takes at least 2 "
                        f"(sample, {', '.join(PDFS.get(name, ('parameters',)))})")
    if not all(s is not None and len(s) > 0 for s in c.ins):
        return
    for i in range(2, len(c.ins)):
        c.set_in(i, c.ins[i - 1], f"{c.input_label(i - 1)} has")
    sample, param = c.ins[0], c.ins[1]
    assert sample is not None and param is not None
    if len(param) > len(sample):
        c.fail(f"{c.input_label(1)} has shape {fmt(param)}, with more axes than "
               f"{c.input_label(0)} {fmt(sample)}: the parameters' shape must be the "
               f"leading part of the samples' shape", input=1)
    vector = name == "_random_pdf_dirichlet"
    lead = tuple(sample[:len(param)])
    if vector:
        lead = lead[:-1] + (sample[-1],)
    why = f"the samples {fmt(sample)} need"
    for i in range(1, len(c.ins)):
        c.set_in(i, lead, why)
    if vector and len(sample) == 1:
        c.set_out(0, (1,))
    else:
        c.set_out(0, tuple(sample[:-1]) if vector else tuple(sample))


def pdf_type(c: Call) -> None:
    """``ElemwiseType``: the sample, the parameters and the output of one dtype."""
    name = _name(c)
    names = ("sample",) + PDFS[name]
    _inputs(c, len(names), len(names), names)
    elemwise_type(c)


# ================================================================== multinomial
def multinomial_shape(c: Call) -> None:
    """``SampleMultinomialOpShape``: once the data's rank is known, the output is the
    data's shape without its last axis (the outcomes), followed by ``shape``; a 1-d
    data gives ``shape`` itself, or ``(1,)``.  ``get_prob``'s output is the same."""
    _inputs(c, 1, 1, ("data",))
    data = c.ins[0]
    if data is None:
        return
    samples = c.p["shape"]
    _no_negative(c, samples, "shape")
    if len(data) == 1:
        out: Shape = tuple(samples) if samples else (1,)
    elif samples is None:
        c.fail(f"shape=None is not a shape of samples for {c.input_label(0)} "
               f"{fmt(data)}: give a tuple such as (2,), or ()", attr="shape")
        return
    else:
        out = tuple(data[:-1]) + tuple(samples)
    why = f"({fmt(data)} without its last axis, then shape={c.attrs.get('shape', '()')})"
    c.set_out(0, out, why)
    if c.p["get_prob"]:
        _assign(c, 1, out, why)


def multinomial_type(c: Call) -> None:
    """``SampleMultinomialOpType``: once the data's dtype is known, the samples are of
    ``dtype`` (int32 by default) and ``get_prob``'s output of the data's dtype."""
    _inputs(c, 1, 1, ("data",))
    data = c.ins[0]
    if data is None:
        return
    c.set_out(0, c.p["dtype"], f"(dtype={c.p['dtype']})")
    if c.p["get_prob"]:
        _assign(c, 1, data, "(the data's type, for get_prob)")


# ======================================================================= zipfian
def zipfian_shape(c: Call) -> None:
    """``SampleUniqueShape``: the samples are ``shape`` (batch, samples) and the counts
    ``(batch,)``; a known 2-d output stands for a ``shape`` not given."""
    _inputs(c, 0, 0, ())
    wanted = c.p["shape"]
    out = c.outs[0]
    if out is not None and len(out) == 2 and wanted is None:
        _assign(c, 1, (out[0],))
        return
    if wanted is None or len(wanted) != 2:
        c.fail(f"shape={c.attrs.get('shape', 'None')} must have 2 sizes (batch, samples "
               f"per batch)", attr="shape")
    assert wanted is not None
    _no_negative(c, wanted, "shape")
    c.set_out(0, tuple(wanted), f"(shape={c.attrs.get('shape')})")
    _assign(c, 1, (wanted[0],), "(one count per batch)")


def zipfian_type(c: Call) -> None:
    """``SampleUniqueType``: both outputs int64."""
    _inputs(c, 0, 0, ())
    for i in range(len(c.outs)):
        c.set_out(i, "int64")


# ================================================================ numpy choices
#: ``std::istream >> int64_t`` then dmlc's optional (an ``L`` may follow) and nothing else
_INT64_TEXT = re.compile(r"\s*[+-]?\d+L?\s*\Z")


def _is_none(text: str) -> bool:
    """dmlc's ``optional``: the text starts with ``None``, only blanks follow."""
    return text.startswith("None") and not text[4:].strip()


def _choice_size(c: Call) -> Shape | None:
    """``_npi_choice``'s ``size`` (``optional<Tuple<int64>>``, None when it is None)
    and its ``a``, checked as MXNet's parser checks them."""
    a = str(c.attrs.get("a", "None"))
    if not _is_none(a):
        digits = a.strip().rstrip("L")
        if not _INT64_TEXT.match(a) or not -2**63 <= int(digits) < 2**63:
            c.fail(f"attribute a={a!r} is not a whole number or None", attr="a")
    text = str(c.attrs.get("size", "None"))
    if _is_none(text):
        return None
    try:
        found = parse_tuple(text)
    except ValueError:
        c.fail(f"attribute size={text!r} is not a tuple of whole numbers such as (2, 3) "
               f"or None", attr="size")
        raise
    return () if found is None else tuple(found)


def choice_shape(c: Call) -> None:
    """``NumpyChoiceOpShape``: the output is ``size`` (a scalar when None); the inputs
    are left as they are."""
    found = _choice_size(c)
    _no_negative(c, found, "size")
    c.set_out(0, found if found is not None else (),
              f"(size={c.attrs.get('size')})")


def int64_out(c: Call) -> None:
    """The output is int64, whatever was known of it."""
    c.outs[0] = "int64"


def choice_type(c: Call) -> None:
    """``NumpyChoiceOpType``: the output is int64 (the attributes parsed first)."""
    _choice_size(c)
    int64_out(c)


def _outcomes(c: Call) -> int | None:
    """The number of outcomes ``pvals`` gives (``optional<Tuple<double>>``), None when
    it is None (the probabilities are the input)."""
    text = c.attrs.get("pvals")
    if text is None or _is_none(text):
        return None
    try:
        if any(w in text.lower() for w in ("inf", "nan")):
            raise ValueError(text)
        found = parse_tuple(text, item=float, integral=False)
    except ValueError:
        c.fail(f"attribute pvals={text!r} is not a tuple of probabilities such as "
               f"(0.2, 0.8) or None", attr="pvals")
        raise
    return -1 if found is None else len(found)


def _npi_inputs(c: Call, outcomes: int | None) -> None:
    if outcomes is None:
        c.slots = ("pvals",)                # the op table does not name it
        _inputs(c, 1, 1, ("pvals",))
    elif c.ins:
        raise RuleError(f"has {_plural(len(c.ins), 'input')}, but _npi_multinomial takes "
                        f"none when the pvals attribute is given")


def npi_multinomial_shape(c: Call) -> None:
    """``NumpyMultinomialOpShape``: ``size`` followed by the number of outcomes, the
    length of ``pvals`` or of the 1-d input (which must have a known rank when the
    layer is reached)."""
    outcomes = _outcomes(c)
    _npi_inputs(c, outcomes)
    if outcomes is None:
        probs = c.ins[0]
        if probs is None or len(probs) != 1:
            shown = "an unknown shape" if probs is None else f"shape {fmt(probs)}"
            c.fail(f"{c.input_label(0)} has {shown}, but _npi_multinomial needs a 1-d "
                   f"array of probabilities (its shape known when the layer is reached)",
                   input=0)
        assert probs is not None
        outcomes = probs[0]
    lead = c.p["size"]
    _no_negative(c, lead, "size")
    c.set_out(0, tuple(lead or ()) + (outcomes,))


def npi_multinomial_type(c: Call) -> None:
    """``NumpyMultinomialOpType``: the input count checked; the output is int64."""
    _npi_inputs(c, _outcomes(c))
    int64_out(c)


RULES: dict[str, Rule] = {
    **table(FAMILY, DRAWS, init_shape, _draw_type(FLOATS, "float32")),
    **table(FAMILY, ["_random_randint"], init_shape, _draw_type(INTS, "int32")),
    **table(FAMILY, [*LIKES, "_shuffle"], same_shape, like_type),
    **table(FAMILY, SAMPLES, multi_shape, multi_type),
    **table(FAMILY, list(PDFS), pdf_shape, pdf_type),
    **table(FAMILY, ["_sample_multinomial"], multinomial_shape, multinomial_type),
    **table(FAMILY, ["_sample_unique_zipfian"], zipfian_shape, zipfian_type),
    **table(FAMILY, ["_npi_choice"], choice_shape, choice_type),
    **table(FAMILY, ["_npi_multinomial"], npi_multinomial_shape, npi_multinomial_type),
}
