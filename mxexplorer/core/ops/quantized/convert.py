"""Rules for the int8 conversions: ``_contrib_quantize`` (and ``_v2``, ``_asym``),
``_contrib_dequantize``, ``_contrib_requantize`` and ``_contrib_calibrate_entropy``.
Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Rule, table
from mxexplorer.core.ops.quantized.helpers import (
    F32,
    FAMILY,
    ONE,
    QUANT,
    _count,
    _need_type,
    _out_type,
    _ranges,
)


# ------------------------------------------------------ quantize / dequantize / requantize
def quantize_shape(c: Call) -> None:
    """``QuantizeShape`` (quantize, requantize), ``DequantizeShape`` and the v2/asym
    forms: the data's shape passes through; back from the output, only the batch
    dimension; the min/max entries are (1,)."""
    _quantize_count(c)
    n_range = len(c.ins) - 1
    data = c.ins[0]
    _ranges(c, 1, 1 + n_range)
    c.set_out(0, data, "(the data's shape)")
    for i in range(1, len(c.outs)):
        c.set_out(i, ONE)
    out = c.outs[0]
    if data is not None and out is not None and len(out) > 0:
        c.set_in(0, (out[0],) + tuple(data[1:]), "the output's batch size makes")


def _quantize_count(c: Call) -> None:
    n_range = 0 if c.op in ("_contrib_quantize_v2", "_contrib_quantize_asym") else 2
    _count(c, 1 + n_range, "data, min_range, max_range" if n_range else "data")


def quantize_type(c: Call) -> None:
    """``_contrib_quantize``: float32 data and ranges in; uint8 or int8 out."""
    _quantize_count(c)
    for i in range(len(c.ins)):
        c.set_in(i, F32, "quantize takes")
    c.set_out(0, _out_type(c))
    for i in range(1, len(c.outs)):
        c.set_out(i, F32)


def quantize_v2_type(c: Call) -> None:
    _quantize_count(c)
    _need_type(c, 0, (F32, "uint8", "int8"), "quantize_v2")
    c.set_out(0, _out_type(c))
    c.set_out(1, F32)
    c.set_out(2, F32)


def quantize_asym_type(c: Call) -> None:
    _quantize_count(c)
    _need_type(c, 0, (F32,), "quantize_asym")
    c.set_out(0, "uint8")
    c.set_out(1, F32)
    c.set_out(2, F32)


def dequantize_type(c: Call) -> None:
    _quantize_count(c)
    _need_type(c, 0, QUANT, "dequantize")
    c.set_in(1, F32, "a range input is")
    c.set_in(2, F32, "a range input is")
    c.set_out(0, F32)


def requantize_type(c: Call) -> None:
    _quantize_count(c)
    c.set_in(0, "int32", "requantize takes")
    c.set_in(1, F32, "a range input is")
    c.set_in(2, F32, "a range input is")
    c.set_out(0, _out_type(c))
    c.set_out(1, F32)
    c.set_out(2, F32)


def calibrate_shape(c: Call) -> None:
    _count(c, 2, "hist, hist_edges")
    c.set_out(0, ONE)
    c.set_out(1, ONE)


def calibrate_type(c: Call) -> None:
    _count(c, 2, "hist, hist_edges")
    _need_type(c, 0, (F32,), "calibrate_entropy")
    c.set_in(1, F32, "calibrate_entropy takes")
    c.set_out(0, F32)
    c.set_out(1, F32)


RULES: dict[str, Rule] = {
    **table(FAMILY, ("_contrib_quantize",), quantize_shape, quantize_type),
    **table(FAMILY, ("_contrib_quantize_v2",), quantize_shape, quantize_v2_type),
    **table(FAMILY, ("_contrib_quantize_asym",), quantize_shape, quantize_asym_type),
    **table(FAMILY, ("_contrib_dequantize",), quantize_shape, dequantize_type),
    **table(FAMILY, ("_contrib_requantize",), quantize_shape, requantize_type),
    **table(FAMILY, ("_contrib_calibrate_entropy",), calibrate_shape, calibrate_type),
}
