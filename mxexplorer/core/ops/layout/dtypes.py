"""The dtype rules of the layout family: the array makers' ``dtype`` attribute (a name or
one of MXNet's numbers), ``int64`` outputs, ``Concat``'s one dtype for every input, the
one- and two-input rules, the ``*_like`` ops, the index inputs of ``take``,
``batch_take`` and ``one_hot``, ``Crop`` and ``_histogram``.  Must not import MXNet or
Qt.
"""
from __future__ import annotations

from typing import Any

from mxexplorer.core.ops.base import DTYPE_CODES, Call, DtypeFn, elemwise_type, first_input_type
from mxexplorer.core.ops.layout.helpers import _need_inputs


# ======================================================================== dtypes
def _dtype_code(c: Call, value: Any, attr: str = "dtype") -> str | None:
    """A dtype attribute (a name, or one of MXNet's numbers) -> a dtype name."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    code = int(value)
    if code == -1:
        return None
    if code not in DTYPE_CODES:
        c.fail(f"dtype {code} is not one of MXNet's dtype numbers (0 float32 ... 12 "
               f"bfloat16)", attr=attr)
    return DTYPE_CODES[code]


def _counted(n: int, rule: DtypeFn) -> DtypeFn:
    """``rule`` after MXNet's check that the node has ``n`` inputs."""
    def counted(c: Call) -> None:
        _need_inputs(c, n)
        rule(c)
    counted.__doc__ = f"{rule.__doc__} (with exactly {n} input{'s' if n != 1 else ''})"
    return counted


def _dtype_attr_out(c: Call) -> None:
    c.set_out(0, _dtype_code(c, c.p.get("dtype")), "(its dtype attribute)")


def param_dtype(c: Call) -> None:
    """``InitType``: the output has the dtype the ``dtype`` attribute names."""
    _need_inputs(c, 0)
    _dtype_attr_out(c)


def linspace_dtype(c: Call) -> None:
    """``_linspace``: its own ``dtype`` attribute (read as written; see
    :func:`linspace_shape`)."""
    _need_inputs(c, 0)
    c.set_out(0, str(c.attrs.get("dtype", "float32")).strip("'\""), "(its dtype attribute)")


def int64_out(c: Call) -> None:
    """``shape_array``, ``size_array``, ``_contrib_index_array``: int64 whatever the
    input."""
    _need_inputs(c, 1)
    c.set_out(0, "int64", "(this layer always gives int64)")


def concat_type(c: Call) -> None:
    """``ConcatType``: the inputs must agree; the output takes their type, or the inputs
    take the output's when none is known."""
    t: str | None = None
    for i, v in enumerate(c.ins):
        if t is None:
            t = v
        elif v is not None and v != t:
            c.fail(f"{c.input_label(i)} has type {v}, but the inputs before it are {t}: "
                   f"concatenated inputs must share one type", input=i)
    out = c.outs[0]
    if t is not None and out is None:
        c.outs[0] = t
        c.ins[:] = [t] * len(c.ins)
    elif out is not None and t is None:
        c.ins[:] = [out] * len(c.ins)
    elif out is not None and t is not None and out != t:
        c.fail(f"the output would have type {t}, but the layers that read it need {out}")


def one_input_type(c: Call) -> None:
    """``ElemwiseType<1, 1>`` and its like: one input, the output's type (checked)."""
    _need_inputs(c, 1)
    elemwise_type(c)


def two_input_type(c: Call) -> None:
    """``ElemwiseType<2, 1>`` (``_slice_assign``): both inputs and the output of one type."""
    _need_inputs(c, 2)
    elemwise_type(c)


def like_type(c: Call) -> None:
    """``slice_like``, ``reshape_like``: the first input and the output share a type; the
    second input (read for its shape only) is free, but MXNet infers nothing until its
    type is known."""
    _need_inputs(c, 2)
    if c.ins[1] is None:
        return
    t = c.ins[0] if c.ins[0] is not None else c.outs[0]
    if t is None:
        return
    c.set_in(0, t)
    c.set_out(0, t)


def _index_needed(c: Call, i: int, what: str) -> None:
    if c.ins[i] is None:
        c.fail(f"the type of {c.input_label(i)} ({what}) is not known: give it a dtype",
               input=i)


def take_type(c: Call) -> None:
    """``take``: the indices' type must be known; output and data share a type."""
    _need_inputs(c, 2)
    _index_needed(c, 1, "the indices")
    first_input_type(c)


def batch_take_type(c: Call) -> None:
    """``batch_take``: output and data share a type; the indices are int32."""
    _need_inputs(c, 2)
    first_input_type(c)
    c.set_in(1, "int32", "batch_take's indices must be")


def one_hot_type(c: Call) -> None:
    """``one_hot``: the indices' type must be known; the output is ``dtype``."""
    _need_inputs(c, 1)
    _index_needed(c, 0, "the indices")
    _dtype_attr_out(c)


def known_input_type(c: Call) -> None:
    """``SwapAxis``, ``_split_v2``: the input's type must be known; every output takes it
    (replacing what was there)."""
    _need_inputs(c, 1)
    _index_needed(c, 0, "the data")
    c.outs[:] = [c.ins[0]] * len(c.outs)


def crop_type(c: Call) -> None:
    """``Crop`` (a legacy layer without a type rule of its own): float32 only."""
    n = int(c.p.get("num_args") or 1)
    if len(c.ins) != n:
        c.fail(f"has {len(c.ins)} inputs, but num_args={n}", attr="num_args")
    for i, t in enumerate(c.ins):
        if t is not None and t != "float32":
            c.fail(f"{c.input_label(i)} has type {t}, but Crop works on float32 only",
                   input=i)
    c.ins[:] = ["float32"] * len(c.ins)
    c.outs[:] = ["float32"] * len(c.outs)


def histogram_type(c: Call) -> None:
    """``_histogram``: the counts are int64, the bin edges of the data's type."""
    if not c.ins:
        c.fail("has no inputs, but _histogram takes its data")
    c.set_out(0, "int64", "(histogram counts are int64)")
    if c.ins and c.ins[0] is not None:
        c.set_out(1, c.ins[0])
