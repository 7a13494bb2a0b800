"""Rules for the nn family: the layers with weights and the sliding-window ops that go
with them, as MXNet 1.9.1 infers their shapes and dtypes.

Owns ``Convolution`` (1-D, 2-D, 3-D, every layout), ``Deconvolution``,
``FullyConnected``, ``Embedding`` and ``_contrib_SparseEmbedding``, the legacy
``Convolution_v1``, ``_contrib_DeformableConvolution`` and
``_contrib_ModulatedDeformableConvolution``, ``im2col``/``col2im`` and ``Correlation``.

Each rule follows its op's ``FInferShape``/``FInferType`` step by step: what it fills in
either direction (weight and bias from the data, the data's batch and, at stride 1, its
spatial size from the output), when it waits (data not known yet) and what it refuses,
with the same integer arithmetic (C truncation, the 32-bit unsigned sums some of these
ops do on an unknown ``-1``) so that odd inputs come out as MXNet has them.  Messages
name the attribute or input at fault and what would fit.  Must not import MXNet or Qt.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from mxexplorer.core.graph import opinfo
from mxexplorer.core.ops.base import (
    Call,
    Conflict,
    Rule,
    RuleError,
    Shape,
    elemwise_type,
    fmt,
    merge,
    table,
)

_U32 = 1 << 32


# ------------------------------------------------------------------ C arithmetic
def _cdiv(a: int, b: int) -> int:
    """C's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _cmod(a: int, b: int) -> int:
    return a - b * _cdiv(a, b)


def _u32(x: int) -> int:
    """A signed value seen as C's ``uint32_t`` (what ``-1 % num_group`` computes on)."""
    return x % _U32


def _i32(x: int) -> int:
    """A value stored into a 32-bit ``index_t``."""
    x %= _U32
    return x - _U32 if x >= 1 << 31 else x


def _f32(x: float) -> float:
    return float(struct.unpack("f", struct.pack("f", x))[0])


# ---------------------------------------------------------------------- words
def _tup(values: Sequence[Any]) -> str:
    """An attribute tuple as written: ``(3, 3)``, ``(3,)``."""
    return "(" + ", ".join(str(v) for v in values) + ("," if len(values) == 1 else "") + ")"


def _count_of(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _axis(n: int, i: int) -> str:
    """The name of spatial axis ``i`` of a ``n``-D window."""
    return _AXES[n].split(", ")[i] if n in _AXES else f"axis {i}"


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0] if n > 0 else []


def _or_list(values: Sequence[int]) -> str:
    words = [str(v) for v in values]
    if len(words) <= 1:
        return "".join(words)
    if len(words) > 8:
        words = words[:4] + ["..."] + words[-2:]
    return ", ".join(words[:-1]) + " or " + words[-1]


_AXES = {1: "width", 2: "height, width", 3: "depth, height, width"}


def _data_layout(nd: int, last: bool) -> str:
    axes = _AXES[nd]
    return f"(batch, {axes}, channel)" if last else f"(batch, channel, {axes})"


# ------------------------------------------------------------------- layouts
_LAYOUTS = {3: ("NCW",), 4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}


def _layout(c: Call, rank: int, allowed: Sequence[str] | None = None) -> bool:
    """Whether the node's layout keeps channels last, for data of ``rank`` dims
    (mshadow's ``ConvertLayout`` refuses a layout of another rank)."""
    fits = tuple(x for x in _LAYOUTS[rank] if allowed is None or x in allowed)
    layout = c.p.get("layout")
    if layout is None:
        return False
    if layout not in fits:
        c.fail(f"layout {layout} does not fit {rank}-D data (a {rank - 2}-D kernel): use "
               f"{' or '.join(fits)}", attr="layout")
    return bool(layout.endswith("C"))


def _to_nc(shape: Sequence[int], last: bool) -> list[int]:
    s = list(shape)
    return [s[0], s[-1], *s[1:-1]] if last else s


def _from_nc(shape: Sequence[int], last: bool) -> Shape:
    s = list(shape)
    return tuple([s[0], *s[2:], s[1]]) if last else tuple(s)


# ------------------------------------------------------------- windows, checks
@dataclass(frozen=True)
class _Win:
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    dilate: tuple[int, ...]
    pad: tuple[int, ...]
    adj: tuple[int, ...] = ()

    @property
    def n(self) -> int:
        return len(self.kernel)

    def dilated(self, i: int) -> int:
        return 1 + (self.kernel[i] - 1) * self.dilate[i]


def _kernel(c: Call, ndims: Sequence[int]) -> tuple[int, ...]:
    kernel = c.p["kernel"]
    if kernel is None or len(kernel) not in ndims:
        have = "an unknown shape" if kernel is None else \
            f"{len(kernel)} dimension{'s' if len(kernel) != 1 else ''}"
        c.fail(f"kernel {_tup(kernel or ())} has {have}: {c.op} takes a kernel of "
               f"{_or_list(list(ndims))} dimensions", attr="kernel")
    return tuple(kernel)


def _strict_window(c: Call, keys: Sequence[str] = ("stride", "dilate", "pad"),
                   ndims: Sequence[int] = (1, 2, 3)) -> _Win:
    """kernel, stride, dilate, pad (and adj) as the parser of ``Convolution``,
    ``Deconvolution``, ``im2col`` accepts them: empty ones default, the others must have
    as many dimensions as the kernel."""
    kernel = _kernel(c, ndims)
    n = len(kernel)
    got: dict[str, tuple[int, ...]] = {}
    for key in keys:
        value = c.p[key]
        if value == ():
            value = (0 if key in ("pad", "adj") else 1,) * n
        if value is None or len(value) != n:
            what = "an unknown shape" if value is None else \
                _count_of(len(value), "dimension")
            c.fail(f"{key} {_tup(value or ())} has {what}, but kernel {_tup(kernel)} has "
                   f"{n}: give {key} {_count_of(n, 'value')}", attr=key)
        got[key] = tuple(value)
    return _Win(kernel, got.get("stride", ()), got.get("dilate", ()), got.get("pad", ()),
                got.get("adj", ()))


def _loose(c: Call, key: str, n: int) -> tuple[int, ...] | None:
    """stride/dilate/pad of a legacy op: empty ones default, others as written (no
    check of their length when parsed)."""
    value = c.p[key]
    if value == ():
        return (0 if key == "pad" else 1,) * n
    return None if value is None else tuple(value)


def _enough(c: Call, key: str, value: tuple[int, ...] | None, n: int) -> tuple[int, ...]:
    """A legacy op reads ``value[0..n-1]``: fewer dimensions are refused then."""
    if value is None or len(value) < n:
        what = "an unknown shape" if value is None else _count_of(len(value), "dimension")
        c.fail(f"{key} {_tup(value or ())} has {what}, but the kernel has {n}: give {key} "
               f"{_count_of(n, 'value')}", attr=key)
    assert value is not None
    return value


def _positive(c: Call, key: str, value: tuple[int, ...] | None) -> None:
    """MXNet checks ``value.Size() > 0``: every entry at least 1."""
    if value is None or any(v < 1 for v in value):
        c.fail(f"{key} {_tup(value or ())} must be at least 1 in every dimension", attr=key)


def _num_filter(c: Call, key: str = "num_filter") -> int:
    value = int(c.p[key])
    if value < 1:
        c.fail(f"attribute {key}={value} must be at least 1", attr=key)
    return value


def _groups(c: Call, key: str = "num_group") -> int:
    value = int(c.p[key])
    if value < 1:
        c.fail(f"attribute {key}={value} must be at least 1 (1 for an ungrouped layer)",
               attr=key)
    return value


def _count(c: Call, no_bias: bool, names: Sequence[str]) -> None:
    c.expect_inputs(*(names[:-1] if no_bias else names))


def _rank(c: Call, data: Shape, n: int, kernel: Sequence[int], last: bool = False,
          what: str = "data") -> None:
    if len(data) != n + 2:
        hint = ""
        if 1 <= len(data) - 2 <= 3:
            hint = f", or a kernel of {len(data) - 2} dimension{'s' if len(data) != 3 else ''}"
        c.fail(f"{what} has {len(data)} dimension{'s' if len(data) != 1 else ''} "
               f"{fmt(data)}, but the {n}-D kernel {_tup(kernel)} needs {n + 2}-D {what} "
               f"{_data_layout(n, last)}: give {what} {n + 2} dimensions{hint}", input=0)


def _group_split(c: Call, channels: int, groups: int, num_filter: int,
                 key: str = "num_group", noun: str = "groups") -> None:
    fit = [g for g in _divisors(channels) if num_filter % g == 0] if key == "num_group" \
        else _divisors(channels)
    also = f" and num_filter={num_filter}" if key == "num_group" else ""
    c.fail(f"{channels} input channels do not divide into {groups} {noun} ({key}): use a "
           f"{key} that divides {channels}{also} ({_or_list(fit)})", attr=key)


def _filter_split(c: Call, num_filter: int, groups: int, key: str = "num_group") -> None:
    c.fail(f"num_filter={num_filter} does not divide into {groups} groups ({key}): use a "
           f"num_filter that is a multiple of {groups}, or a {key} that divides "
           f"{num_filter} ({_or_list(_divisors(num_filter))})", attr=key)


def _too_big(c: Call, kernel: Sequence[int], dilate: Sequence[int] | None,
             spatial: Sequence[int], pad: Sequence[int], spans: Sequence[int]) -> None:
    """The plain-words refusal of a kernel that does not fit its padded input."""
    padded = [d + 2 * p if d >= 0 else -1 for d, p in zip(spatial, pad)]
    fit: list[int] = []
    more_pad: list[int] = []
    for i, (k, size) in enumerate(zip(kernel, padded)):
        if size < 0 or spans[i] <= size:
            fit.append(k)
            more_pad.append(pad[i])
            continue
        step = dilate[i] if dilate else 1
        fit.append(max((size - 1) // step + 1, 0) if size >= 1 else 0)
        more_pad.append(pad[i] + (spans[i] - size + 1) // 2)
    how = f"kernel {_tup(kernel)}"
    if dilate and any(d != 1 for d in dilate):
        how += f" dilated by {_tup(dilate)} spans {_tup(spans)} and"
    c.fail(f"{how} is larger than the padded input {fmt(tuple(padded))} (data "
           f"{fmt(tuple(spatial))} plus pad {_tup(pad)} on each side): use a kernel of at "
           f"most {_tup(fit)}, or pad {_tup(more_pad)}", attr="kernel")


def _unknown_size(c: Call, kernel: Sequence[int], spatial: Sequence[int]) -> None:
    c.fail(f"the data's spatial size {fmt(tuple(spatial))} is unknown, and {c.op} needs it "
           f"known to fit kernel {_tup(kernel)} (give the data's full shape)", input=0)


def _weight_why(num_filter: int, groups: int, kernel: Sequence[int], channels: int,
                deconv: bool = False) -> str:
    parts = [f"num_filter={num_filter}"]
    if groups != 1:
        parts.append(f"num_group={groups}")
    parts.append(f"kernel {_tup(kernel)}")
    if channels >= 0:
        parts.append(f"{channels} input channels")
    return ("a deconvolution with " if deconv else "") + \
        ", ".join(parts[:-1]) + " and " + parts[-1] + (" needs" if deconv else " need")


def _set_bias(c: Call, i: int, num_filter: int, key: str = "num_filter") -> None:
    c.set_in(i, (num_filter,), f"{key}={num_filter} needs")


def _sane(fn: Callable[[Call], None]) -> Callable[[Call], None]:
    """MXNet refuses a shape with a size below -1 (its ``dim_size_is_known`` check) as
    soon as a rule wrote one; -1 itself reads as unknown."""
    def rule(c: Call) -> None:
        fn(c)
        for i, s in enumerate(c.ins):
            if s is not None and any(d < -1 for d in s):
                raise RuleError(f"{c.input_label(i)} would have shape "
                                f"({', '.join(str(d) for d in s)}), with a negative size: "
                                f"check the attributes against the other inputs", input=i)
        for i, s in enumerate(c.outs):
            if s is not None and any(d < -1 for d in s):
                raise RuleError(f"the output would have shape "
                                f"({', '.join(str(d) for d in s)}), with a negative size: "
                                f"the data is too small for these attributes "
                                f"(kernel, pad, stride ...)", output=i)
    rule.__name__ = fn.__name__
    rule.__doc__ = fn.__doc__
    return rule


def _checked(check: Callable[[Call], Any], fn: Callable[[Call], None]
             ) -> Callable[[Call], None]:
    """A dtype rule that first checks the attributes as MXNet's parser does (it refuses
    them when the graph loads, whatever the pass)."""
    def rule(c: Call) -> None:
        check(c)
        fn(c)
    rule.__name__ = fn.__name__
    return rule


# ================================================================= Convolution
def _conv_params(c: Call) -> _Win:
    win = _strict_window(c)
    _num_filter(c)
    return win


def convolution_shape(c: Call) -> None:
    """``ConvolutionShape``: weight ``(num_filter, C/num_group, *kernel)`` (in the
    layout) and bias ``(num_filter,)`` from the data; the output's batch, and at stride 1
    its spatial size, back into the data.  Waits for the data's rank."""
    win = _conv_params(c)
    nf = int(c.p["num_filter"])
    no_bias = bool(c.p["no_bias"])
    _count(c, no_bias, ("data", "weight", "bias"))
    data = c.ins[0]
    if data is None:
        return
    n = win.n
    last = c.p.get("layout") in ("NHWC", "NDHWC")
    _rank(c, data, n, win.kernel, last)
    last = _layout(c, n + 2)
    g = _groups(c)
    for key in ("kernel", "stride", "dilate"):
        _positive(c, key, getattr(win, key))
    dn = _to_nc(data, last)
    channels = dn[1]
    weight = list(_from_nc((nf // g, channels // g if channels >= 0 else -1, *win.kernel),
                           last))
    weight[0] *= g
    c.set_in(1, tuple(weight), _weight_why(nf, g, win.kernel, channels))
    if not no_bias:
        _set_bias(c, 2, nf)
    if channels >= 0 and channels % g:
        _group_split(c, channels, g, nf)
    if nf % g:
        _filter_split(c, nf, g)
    spans = [win.dilated(i) for i in range(n)]
    spatial = dn[2:]
    if any(d >= 0 and spans[i] > d + 2 * win.pad[i] for i, d in enumerate(spatial)):
        _too_big(c, win.kernel, win.dilate, spatial, win.pad, spans)
    out = [dn[0], nf] + [_cdiv(d + 2 * win.pad[i] - spans[i], win.stride[i]) + 1
                         if d != -1 else -1 for i, d in enumerate(spatial)]
    c.set_out(0, _from_nc(out, last))
    on = _to_nc(c.outs[0], last)
    back = list(dn)
    back[0] = on[0]
    for i in range(n):
        if on[2 + i] != -1 and win.stride[i] == 1:
            back[2 + i] = on[2 + i] + spans[i] - 1 - 2 * win.pad[i]
    c.set_in(0, _from_nc(back, last), "the output's shape needs")
    spatial = back[2:]
    if any(d != -1 and spans[i] > d + 2 * win.pad[i] for i, d in enumerate(spatial)):
        _too_big(c, win.kernel, win.dilate, spatial, win.pad, spans)


def weighted_type(c: Call) -> None:
    """``ConvolutionType``/``DeconvolutionType``: the data's type (else the output's)
    for every input and the output; an input of another type is refused."""
    dtype = c.ins[0] if c.ins else None
    if dtype is None:
        if not c.outs or c.outs[0] is None:
            return
        dtype = c.outs[0]
    else:
        c.outs[0] = dtype
    for i in range(len(c.ins)):
        c.set_in(i, dtype, "the data's type is")


# =============================================================== Deconvolution
def _deconv_params(c: Call) -> _Win:
    win = _strict_window(c, ("stride", "dilate", "pad", "adj"))
    _num_filter(c)
    return win


def deconvolution_shape(c: Call) -> None:
    """``DeconvolutionShape``: weight ``(C, num_filter/num_group, *kernel)`` and bias
    from the data, the output from the data (``target_shape`` chooses pad and adj);
    nothing back from the output."""
    win = _deconv_params(c)
    nf = int(c.p["num_filter"])
    no_bias = bool(c.p["no_bias"])
    _count(c, no_bias, ("data", "weight", "bias"))
    data = c.ins[0]
    if data is None:
        return
    n = win.n
    _rank(c, data, n, win.kernel, c.p.get("layout") in ("NHWC", "NDHWC"))
    last = _layout(c, n + 2)
    g = _groups(c)
    dn = _to_nc(data, last)
    channels = dn[1]
    c.set_in(1, _from_nc((channels, nf // g, *win.kernel), last),
             _weight_why(nf, g, win.kernel, channels, deconv=True))
    if not no_bias:
        _set_bias(c, 2, nf)
    spans = [win.dilated(i) for i in range(n)]
    target = tuple(c.p["target_shape"] or ())
    pad = list(win.pad)
    adj = list(win.adj)
    if any(t != 0 for t in target):
        for i in range(n):
            size = dn[2 + i]
            if size == -1:
                pad[i] = adj[i] = 0     # MXNet leaves them unset: the output is unknown
                continue
            if i >= len(target):
                c.fail(f"target_shape {_tup(target)} has "
                       f"{_count_of(len(target), 'dimension')}, but kernel "
                       f"{_tup(win.kernel)} has {n}: give target_shape "
                       f"{_count_of(n, 'value')}", attr="target_shape")
            full = win.stride[i] * (size - 1) + spans[i]
            if full < target[i]:
                c.fail(f"target_shape {_tup(target)} is larger than this deconvolution "
                       f"can make: at most {full} in {_axis(n, i)} (stride × (input - 1) + "
                       f"dilated kernel)", attr="target_shape")
            diff = full - target[i]
            adj[i] = diff % 2
            pad[i] = (diff + 1) // 2
    if _u32(channels) % g:
        if channels < 0:
            c.fail(f"the data's channel count is unknown, and a deconvolution with "
                   f"num_group={g} needs it to check the groups (give the data's channels)",
                   input=0)
        _group_split(c, channels, g, nf)
    if nf % g:
        _filter_split(c, nf, g)
    for key in ("kernel", "stride", "dilate"):
        _positive(c, key, getattr(win, key))
    if n == 3 and any(d != 1 for d in win.dilate):
        c.fail(f"dilate {_tup(win.dilate)} is not supported by a 3-D deconvolution: "
               f"leave dilate at (1, 1, 1)", attr="dilate")
    for i in range(n):
        if adj[i] > win.stride[i] - 1:
            what = f"adj {_tup(adj)}" if not any(t != 0 for t in target) else \
                f"target_shape {_tup(target)} (which needs adj {_tup(adj)})"
            c.fail(f"{what} must be smaller than stride {_tup(win.stride)} in every "
                   f"dimension", attr="target_shape" if any(t != 0 for t in target) else "adj")
    out = [dn[0], nf]
    for i in range(n):
        size = dn[2 + i]
        out.append(win.stride[i] * (size - 1) + spans[i] - 2 * pad[i] + adj[i]
                   if size != -1 else -1)
    if len(target) >= n:
        for i in range(n):
            if target[i] > 0 and target[i] != out[2 + i]:
                c.fail(f"target_shape {_tup(target)} cannot be reached: the data's "
                       f"{_axis(n, i)} is unknown" if out[2 + i] == -1 else
                       f"target_shape {_tup(target)} cannot be reached from data "
                       f"{fmt(data)}", attr="target_shape")
    for i in range(n):
        if out[2 + i] < -1:
            c.fail(f"pad {_tup(pad)} is too large for data {fmt(data)}: the output would "
                   f"have {_axis(n, i)} {out[2 + i]}", attr="pad")
    c.set_out(0, _from_nc(out, last))


# ============================================================= FullyConnected
def fully_connected_shape(c: Call) -> None:
    """``FullyConnectedShape``: weight ``(num_hidden, features)`` and bias
    ``(num_hidden,)`` (or ``(num_hidden, 1)``) from the data; the output's batch back."""
    nh = int(c.p["num_hidden"])
    no_bias = bool(c.p["no_bias"])
    flatten = bool(c.p["flatten"])
    _count(c, no_bias, ("data", "weight", "bias"))
    data = c.ins[0]
    out_before = c.outs[0]
    if data is None:
        return
    if len(data) == 0:
        c.fail("data is a scalar (0 dimensions): FullyConnected needs at least 1", input=0)
    if flatten:
        if any(d < 0 for d in data[1:]):
            c.fail(f"data has shape {fmt(data)}: with flatten=True FullyConnected needs "
                   f"every dimension but the first known to count its input features "
                   f"(give the data's full shape, or set flatten=False)", input=0)
        features = math.prod(data[1:])
    else:
        features = data[-1]
    c.set_in(1, (nh, features),
             f"num_hidden={nh} and {'?' if features < 0 else features} input features need")
    if not no_bias:
        bias = c.ins[2]
        for want in ((nh,), (nh, 1)):
            try:
                c.ins[2] = merge(bias, want)
                break
            except Conflict:
                continue
        else:
            c.fail(f"{c.input_label(2)} has shape {fmt(bias)}, but num_hidden={nh} needs "
                   f"({nh},) or ({nh}, 1)", input=2)
    out = (*data[:-1], nh) if not flatten else (data[0], nh)
    c.set_out(0, out)
    if out_before is not None and len(out_before) > 0:
        back = list(data)
        back[0] = out_before[0]
        c.set_in(0, tuple(back), "the output's batch needs")


# ================================================================== Embedding
def embedding_shape(c: Call) -> None:
    """``EmbeddingOpShape``: weight ``(input_dim, output_dim)``; the output is the data's
    shape plus ``output_dim`` (written over what was known of it)."""
    c.expect_inputs("data", "weight")
    data = c.ins[0]
    if data is None:
        return
    dim_in, dim_out = int(c.p["input_dim"]), int(c.p["output_dim"])
    c.set_in(1, (dim_in, dim_out), f"input_dim={dim_in} and output_dim={dim_out} need")
    c.outs[0] = (*data, dim_out)


def embedding_type(c: Call) -> None:
    """``EmbeddingOpType``: the indices may be of any type but must be known; the
    weight's and output's type is the one of them known, else the ``dtype`` attribute."""
    c.expect_inputs("data", "weight")
    if c.ins[0] is None:
        c.fail("the type of data (the indices) is unknown: this layer needs it known (give "
               "the input a dtype)", input=0)
    weight, out = c.ins[1], c.outs[0]
    if weight is not None and out is not None and weight != out:
        c.fail(f"{c.input_label(1)} has type {weight}, but the output has {out}: they must "
               f"be one type", input=1)
    dtype = weight if weight is not None else out if out is not None else str(c.p["dtype"])
    if c.ins[1] is None:
        c.ins[1] = dtype
    c.outs[0] = dtype


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


# ============================================================ im2col, col2im
def _im2col_params(c: Call) -> _Win:
    return _strict_window(c)


def im2col_shape(c: Call) -> None:
    """``im2col``: waits for the data's full shape; output ``(N, C × kernel area,
    number of windows)``."""
    win = _im2col_params(c)
    c.expect_inputs("data")
    data = c.ins[0]
    if data is None or any(d < 0 for d in data):
        return
    for key in ("kernel", "stride", "dilate"):
        _positive(c, key, getattr(win, key))
    n = win.n
    if len(data) < n + 2:
        _rank(c, data, n, win.kernel)
    windows = 1
    spatial = data[2:n + 2]
    spans = [win.dilated(i) for i in range(n)]
    for i in range(n):
        padded = spatial[i] + 2 * win.pad[i]
        if spans[i] > padded:
            _too_big(c, win.kernel, win.dilate, spatial, win.pad, spans)
        windows *= _cdiv(padded - spans[i], win.stride[i]) + 1
    c.set_out(0, (data[0], _i32(data[1] * math.prod(win.kernel)), _i32(windows)))


def col2im_shape(c: Call) -> None:
    """``col2im``: waits for the data's full shape; its last dimension must be the
    number of windows over ``output_size``, its second a multiple of the kernel area;
    output ``(N, C, *output_size)``."""
    win = _im2col_params(c)
    c.expect_inputs("data")
    data = c.ins[0]
    if data is None or any(d < 0 for d in data):
        return
    size = c.p["output_size"]
    n = win.n
    if size is None or len(size) != n:
        c.fail(f"output_size {_tup(size or ())} must have as many dimensions as kernel "
               f"{_tup(win.kernel)} ({n})", attr="output_size")
    _positive(c, "output_size", size)
    for key in ("kernel", "stride", "dilate"):
        _positive(c, key, getattr(win, key))
    windows = 1
    spans = [win.dilated(i) for i in range(n)]
    for i in range(n):
        padded = size[i] + 2 * win.pad[i]
        if spans[i] > padded:
            _too_big(c, win.kernel, win.dilate, size, win.pad, spans)
        windows *= _cdiv(padded - spans[i], win.stride[i]) + 1
    if len(data) < 3:
        c.fail(f"data has shape {fmt(data)}, but col2im needs 3-D data (batch, channels × "
               f"kernel area, windows)", input=0)
    if data[2] != _i32(windows):
        c.fail(f"data has {data[2]} columns (its last dimension), but output_size "
               f"{_tup(size)} with kernel {_tup(win.kernel)} makes {windows} windows",
               input=0)
    area = math.prod(win.kernel)
    if data[1] % area:
        c.fail(f"data's second dimension {data[1]} is not a multiple of the kernel area "
               f"{area} (kernel {_tup(win.kernel)})", input=0)
    c.set_out(0, (data[0], data[1] // area, *size))


def forward_type(c: Call) -> None:
    """The output has the data's type, once it is known (nothing backward)."""
    c.expect_inputs("data")
    if c.ins[0] is not None:
        c.set_out(0, c.ins[0])


# ================================================================ Correlation
def correlation_shape(c: Call) -> None:
    """``CorrelationProp::InferShape``: both inputs must be 4-D (refused while unknown);
    output ``(N, (2 × max_displacement/stride2 + 1)², top height, top width)`` and two
    hidden ``(N, padded height, padded width, C)`` buffers, in MXNet's 32-bit float and
    unsigned arithmetic."""
    c.expect_inputs("data1", "data2")
    d1, d2 = c.ins[0], c.ins[1]
    for i, s in enumerate((d1, d2)):
        if s is None or len(s) != 4:
            c.fail(f"{c.input_label(i)} has shape {fmt(s)}, but Correlation needs 4-D data "
                   f"(batch, channel, height, width)", input=i)
    assert d1 is not None
    pad = int(c.p["pad_size"])
    ks = int(c.p["kernel_size"])
    maxd = int(c.p["max_displacement"])
    s1, s2 = int(c.p["stride1"]), int(c.p["stride2"])
    if s1 == 0 or s2 == 0:
        key = "stride1" if s1 == 0 else "stride2"
        c.fail(f"attribute {key}=0 must be at least 1", attr=key)
    padded_h = _i32(d1[2] + _u32(2 * pad))
    padded_w = _i32(d1[3] + _u32(2 * pad))
    radius = _u32(ks - 1) // 2
    border = _u32(maxd + radius)

    def top(padded: int) -> int:
        value = _f32(_f32(float(_u32(padded - _u32(border * 2)))) / _f32(float(s1)))
        return _u32(math.ceil(value))
    top_w, top_h = top(padded_w), top(padded_h)
    grid = _u32((maxd // s2) * 2 + 1)
    channels = _u32(grid * grid)
    if top_w < 1 or top_h < 1:
        c.fail(f"data1 {fmt(d1)} padded by pad_size={pad} is too small for "
               f"max_displacement={maxd} and kernel_size={ks}: it needs at least "
               f"{2 * border + 1} in height and width", attr="max_displacement")
    c.outs[0] = (d1[0], _i32(channels), _i32(top_h), _i32(top_w))
    buffer = (d1[0], padded_h, padded_w, d1[1])
    for i in range(1, len(c.outs)):
        c.outs[i] = buffer


def correlation_type(c: Call) -> None:
    c.expect_inputs("data1", "data2")
    elemwise_type(c)


# ======================================================================= table
def _no_check(c: Call) -> None:
    """Attributes MXNet's parser checks by itself (the op table does it)."""


def _rule(check: Callable[[Call], Any], shape: Callable[[Call], None],
          dtype: Callable[[Call], None]) -> tuple[Callable[[Call], None],
                                                  Callable[[Call], None]]:
    return _sane(shape), _checked(check, dtype)


def _entries() -> dict[str, Rule]:
    spec: list[tuple[Sequence[str], Callable[[Call], Any], Callable[[Call], None],
                     Callable[[Call], None]]] = [
        (("Convolution",), _conv_params, convolution_shape, weighted_type),
        (("Deconvolution",), _deconv_params, deconvolution_shape, weighted_type),
        (("FullyConnected",), _no_check, fully_connected_shape, elemwise_type),
        (("Embedding", "_contrib_SparseEmbedding"), _no_check, embedding_shape,
         embedding_type),
        (("Convolution_v1",), _v1_params, convolution_v1_shape, legacy_type),
        (("_contrib_DeformableConvolution",), _deformable_params, deformable_shape,
         legacy_type),
        (("_contrib_ModulatedDeformableConvolution",), _deformable_params,
         modulated_deformable_shape, legacy_type),
        (("im2col",), _im2col_params, im2col_shape, forward_type),
        (("col2im",), _im2col_params, col2im_shape, forward_type),
        (("Correlation",), _no_check, correlation_shape, correlation_type),
    ]
    rules: dict[str, Rule] = {}
    for names, check, shape, dtype in spec:
        s, d = _rule(check, shape, dtype)
        rules.update(table("nn", names, s, d))
    return rules


RULES: dict[str, Rule] = _entries()

__all__ = ["RULES", "convolution_shape", "deconvolution_shape", "fully_connected_shape",
           "embedding_shape", "embedding_type", "weighted_type", "legacy_type"]
