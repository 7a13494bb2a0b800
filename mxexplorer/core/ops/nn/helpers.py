"""The pieces the nn rules share: C arithmetic (truncating division, the 32-bit unsigned
and signed values some of these ops compute on an unknown ``-1``, float32), attributes
and shapes in words, data layouts, the window attributes (kernel, stride, dilate, pad)
and the checks that go with them (groups, filters, sizes), and how a sub-family's table
is built: each rule behind the check of the attributes MXNet's parser makes.  Must not
import MXNet or Qt.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from mxexplorer.core.ops.base import Call, Rule, RuleError, Shape, fmt, table

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


# ======================================================================= table
def _no_check(c: Call) -> None:
    """Attributes MXNet's parser checks by itself (the op table does it)."""


def _rule(check: Callable[[Call], Any], shape: Callable[[Call], None],
          dtype: Callable[[Call], None]) -> tuple[Callable[[Call], None],
                                                  Callable[[Call], None]]:
    return _sane(shape), _checked(check, dtype)


#: one row of a sub-family's table: the op names, the check of the attributes MXNet's
#: parser makes, the shape rule and the dtype rule
Entry = tuple[Sequence[str], Callable[[Call], Any], Callable[[Call], None],
              Callable[[Call], None]]


def _entries(spec: Sequence[Entry]) -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    for names, check, shape, dtype in spec:
        s, d = _rule(check, shape, dtype)
        rules.update(table("nn", names, s, d))
    return rules
