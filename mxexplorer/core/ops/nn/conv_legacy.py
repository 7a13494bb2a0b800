"""Rules for the convolutions with the legacy dtype rule: ``Convolution_v1``,
``_contrib_DeformableConvolution`` and ``_contrib_ModulatedDeformableConvolution``, with
the 32-bit arithmetic they do on an unknown ``-1``.  Must not import MXNet or Qt.
"""
from __future__ import annotations

import math
from typing import Sequence

from mxexplorer.core.graph import opinfo
from mxexplorer.core.ops.base import Call, Rule, Shape, fmt
from mxexplorer.core.ops.nn.helpers import (
    _cdiv,
    _cmod,
    _count,
    _enough,
    _entries,
    _filter_split,
    _from_nc,
    _group_split,
    _groups,
    _i32,
    _kernel,
    _layout,
    _loose,
    _num_filter,
    _positive,
    _rank,
    _set_bias,
    _to_nc,
    _too_big,
    _tup,
    _u32,
    _unknown_size,
    _weight_why,
)


# ============================================================ Convolution_v1
def _v1_params(c: Call) -> tuple[tuple[int, ...], int]:
    kernel = _kernel(c, (2, 3))
    return kernel, _num_filter(c)


def convolution_v1_shape(c: Call) -> None:
    """``ConvolutionV1Prop::InferShape``: weight and bias from the data, the output from
    the data, computing on an unknown size (-1) as on a number; nothing back."""
    kernel, nf = _v1_params(c)
    no_bias = bool(c.p["no_bias"])
    _count(c, no_bias, ("data", "weight", "bias"))
    data = c.ins[0]
    if data is None:
        return
    n = len(kernel)
    _rank(c, data, n, kernel, c.p.get("layout") in ("NHWC", "NDHWC"))
    last = _layout(c, n + 2)
    g = _groups(c)
    dn = _to_nc(data, last)
    channels = dn[1]
    weight = list(_from_nc((nf // g, _i32(_u32(channels) // g), *kernel), last))
    weight[0] = _i32(weight[0] * g)
    c.set_in(1, tuple(weight), _weight_why(nf, g, kernel, channels))
    if not no_bias:
        _set_bias(c, 2, nf)
    if _u32(channels) % g:
        if channels < 0:
            c.fail(f"the data's channel count is unknown, and Convolution_v1 with "
                   f"num_group={g} needs it (give the data's channels)", input=0)
        _group_split(c, channels, g, nf)
    if nf % g:
        _filter_split(c, nf, g)
    stride = _loose(c, "stride", n)
    dilate = _loose(c, "dilate", n)
    pad = _enough(c, "pad", _loose(c, "pad", n), n)
    _positive(c, "kernel", kernel)
    _positive(c, "stride", stride)
    _positive(c, "dilate", dilate)
    assert stride is not None and dilate is not None
    spatial = dn[2:]
    if any(kernel[i] > d + 2 * pad[i] for i, d in enumerate(spatial)):
        if any(d < 0 for d in spatial):
            _unknown_size(c, kernel, spatial)
        _too_big(c, kernel, None, spatial, pad, kernel)
    if n == 3 and math.prod(dilate) != 1:
        c.fail(f"dilate {_tup(dilate)} is not supported by a 3-D Convolution_v1: leave "
               f"dilate at (1, 1, 1)", attr="dilate")
    stride = _enough(c, "stride", stride, n)
    if n == 2:
        dilate = _enough(c, "dilate", dilate, n)
    spans = [(dilate[i] * (kernel[i] - 1) + 1) if n == 2 else kernel[i] for i in range(n)]
    out = [dn[0], nf] + [_i32(_cdiv(d + 2 * pad[i] - spans[i], stride[i]) + 1)
                         for i, d in enumerate(spatial)]
    c.set_out(0, _from_nc(out, last))


_LEGACY_INPUTS = {
    "Convolution_v1": ("data", "weight", "bias"),
    "_contrib_DeformableConvolution": ("data", "offset", "weight", "bias"),
    "_contrib_ModulatedDeformableConvolution": ("data", "offset", "mask", "weight", "bias"),
}


def legacy_type(c: Call) -> None:
    """The legacy convolutions' ``InferType``: the data's type must be known; it is every
    input's and the output's."""
    names = _LEGACY_INPUTS.get(opinfo.canonical_op(c.op))
    if names is not None:
        _count(c, bool(c.p["no_bias"]), names)
    dtype = c.ins[0] if c.ins else None
    if dtype is None:
        c.fail(f"the type of data is unknown: {c.op} needs it known (give the input a "
               f"dtype)", input=0)
    for i in range(len(c.ins)):
        c.set_in(i, dtype, "the data's type is")
    c.outs[0] = dtype


# ===================================================== deformable convolutions
def _deformable_params(c: Call) -> tuple[tuple[int, ...], int]:
    kernel = _kernel(c, (2,))
    return kernel, _num_filter(c)


def _offset_checks(c: Call, i: int, name: str, shape: Sequence[int], out: Sequence[int],
                   kernel: Sequence[int], ndg: int, per_position: int) -> None:
    """An offset (``per_position`` 2) or mask (1) map: the output's height and width, and
    ``per_position × kernel area × num_deformable_group`` channels."""
    area = kernel[0] * kernel[1]
    if shape[2] != out[2] or shape[3] != out[3]:
        c.fail(f"{c.input_label(i)} has shape {fmt(tuple(shape))}, but its height and "
               f"width must be the output's {fmt(tuple(out[2:]))}", input=i)
    if _cmod(shape[1], area) != 0 or _cdiv(shape[1], per_position * area) != ndg:
        want = per_position * area * ndg
        c.fail(f"{c.input_label(i)} has {'?' if shape[1] < 0 else shape[1]} channels, but "
               f"kernel {_tup(kernel)} with num_deformable_group={ndg} needs {want} "
               f"({'2 × ' if per_position == 2 else ''}{kernel[0]}×{kernel[1]} × {ndg})"
               f" for {name}", input=i)


def _deform_spatial(c: Call, kernel: tuple[int, ...], n: int) -> tuple[
        tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    stride = _loose(c, "stride", n)
    dilate = _loose(c, "dilate", n)
    pad = _loose(c, "pad", n)
    _positive(c, "kernel", kernel)
    _positive(c, "stride", stride)
    _positive(c, "dilate", dilate)
    return (_enough(c, "stride", stride, n), _enough(c, "dilate", dilate, n),
            _enough(c, "pad", pad, n))


def deformable_shape(c: Call) -> None:
    """``DeformableConvolutionProp::InferShape``: waits for the data's full shape; the
    offset must be 4-D with the output's height and width and
    ``2 × kernel area × num_deformable_group`` channels."""
    kernel, nf = _deformable_params(c)
    no_bias = bool(c.p["no_bias"])
    _count(c, no_bias, ("data", "offset", "weight", "bias"))
    data, offset = c.ins[0], c.ins[1]
    if data is None or any(d < 0 for d in data):
        return
    _rank(c, data, 2, kernel)
    if offset is None or len(offset) != 4:
        c.fail(f"{c.input_label(1)} has shape {fmt(offset)}, but the offset must be 4-D "
               f"(batch, 2 × kernel area × num_deformable_group, height, width)", input=1)
    _layout(c, 4, ("NCHW",))
    g = _groups(c)
    ndg = _groups(c, "num_deformable_group")
    channels = data[1]
    c.set_in(2, (nf // g * g, channels // g, *kernel), _weight_why(nf, g, kernel, channels))
    if not no_bias:
        _set_bias(c, 3, nf)
    if channels % g:
        _group_split(c, channels, g, nf)
    if channels % ndg:
        _group_split(c, channels, ndg, nf, "num_deformable_group", "deformable groups")
    if nf % g:
        _filter_split(c, nf, g)
    stride, dilate, pad = _deform_spatial(c, kernel, 2)
    spans = [dilate[i] * (kernel[i] - 1) + 1 for i in range(2)]
    out = [data[0], nf] + [_cdiv(data[2 + i] + 2 * pad[i] - spans[i], stride[i]) + 1
                           for i in range(2)]
    c.set_out(0, tuple(out))
    _offset_checks(c, 1, "the offsets", offset, out, kernel, ndg, 2)
    _deform_back(c, data, kernel, stride, dilate, pad)


def _deform_back(c: Call, data: Shape, kernel: tuple[int, ...], stride: tuple[int, ...],
                 dilate: tuple[int, ...], pad: tuple[int, ...]) -> None:
    """The output's batch, and at stride 1 its height and width, back into the data;
    then the (undilated) kernel against the padded data."""
    on = c.outs[0]
    back = list(data)
    back[0] = on[0]
    for i in range(2):
        if stride[i] == 1:
            back[2 + i] = on[2 + i] + dilate[i] * (kernel[i] - 1) - 2 * pad[i]
    c.set_in(0, tuple(back), "the output's shape needs")
    spatial = back[2:]
    if any(d != 0 and kernel[i] > d + 2 * pad[i] for i, d in enumerate(spatial)):
        if any(d < 0 for d in spatial):
            _unknown_size(c, kernel, spatial)
        _too_big(c, kernel, None, spatial, pad, kernel)


def modulated_deformable_shape(c: Call) -> None:
    """``ModulatedDeformableConvolutionProp::InferShape``: data, offset and mask must be
    4-D (refused while unknown); computes on unknown sizes (-1) as on numbers; the mask
    has ``kernel area × num_deformable_group`` channels."""
    kernel, nf = _deformable_params(c)
    no_bias = bool(c.p["no_bias"])
    _count(c, no_bias, ("data", "offset", "mask", "weight", "bias"))
    data, offset, mask = c.ins[0], c.ins[1], c.ins[2]
    if data is None:
        c.fail(f"the shape of {c.input_label(0)} is unknown: {c.op} needs its data's rank "
               f"known (give the data a 4-D shape)", input=0)
    assert data is not None
    _rank(c, data, 2, kernel)
    for i, what in ((1, "offset"), (2, "mask")):
        s = c.ins[i]
        if s is None or len(s) != 4:
            c.fail(f"{c.input_label(i)} has shape {fmt(s)}, but the {what} must be 4-D "
                   f"(batch, channels, height, width)", input=i)
    assert offset is not None and mask is not None
    _layout(c, 4, ("NCHW",))
    g = _groups(c)
    ndg = _groups(c, "num_deformable_group")
    channels = data[1]
    weight = (_i32((nf // g) * g), _i32(_u32(channels) // g), *kernel)
    c.set_in(3, weight, _weight_why(nf, g, kernel, channels))
    if not no_bias:
        _set_bias(c, 4, nf)
    step = int(c.p["im2col_step"])
    if data[0] > step:
        if step == 0:
            c.fail("im2col_step=0: use an im2col_step of at least 1", attr="im2col_step")
        if data[0] % step:
            c.fail(f"the batch size {data[0]} is larger than im2col_step={step} and not a "
                   f"multiple of it: use an im2col_step that divides {data[0]}",
                   attr="im2col_step")
    for groups, key, noun in ((g, "num_group", "groups"),
                              (ndg, "num_deformable_group", "deformable groups")):
        if _u32(channels) % groups:
            if channels < 0:
                c.fail(f"the data's channel count is unknown, and {key}={groups} needs it "
                       f"(give the data's channels)", input=0)
            _group_split(c, channels, groups, nf, key, noun)
    if nf % g:
        _filter_split(c, nf, g)
    stride, dilate, pad = _deform_spatial(c, kernel, 2)
    spans = [dilate[i] * (kernel[i] - 1) + 1 for i in range(2)]
    out = [data[0], nf] + [_cdiv(data[2 + i] + 2 * pad[i] - spans[i], stride[i]) + 1
                           for i in range(2)]
    c.set_out(0, tuple(out))
    if nf % ndg:
        _filter_split(c, nf, ndg, "num_deformable_group")
    _offset_checks(c, 1, "the offsets", offset, out, kernel, ndg, 2)
    _offset_checks(c, 2, "the mask", mask, out, kernel, ndg, 1)
    _deform_back(c, data, kernel, stride, dilate, pad)


RULES: dict[str, Rule] = _entries([
    (("Convolution_v1",), _v1_params, convolution_v1_shape, legacy_type),
    (("_contrib_DeformableConvolution",), _deformable_params, deformable_shape,
     legacy_type),
    (("_contrib_ModulatedDeformableConvolution",), _deformable_params,
     modulated_deformable_shape, legacy_type),
])
