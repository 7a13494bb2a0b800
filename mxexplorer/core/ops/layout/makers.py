"""Shape rules for the layout family's array makers: ``_zeros``, ``_ones``, ``_full``,
``_zeros_without_dtype``, ``_eye``, ``_arange`` and ``_linspace``.  They read their
``shape`` as MXNet does with numpy semantics off (``()`` is an unknown shape, a 0 an
unknown dimension) and refuse arrays past MXNet's 32-bit sizes.  Must not import MXNet
or Qt.
"""
from __future__ import annotations

import math

from mxexplorer.core.ops.base import Call, Rule, known, table
from mxexplorer.core.ops.layout.dtypes import linspace_dtype, param_dtype
from mxexplorer.core.ops.layout.helpers import FAMILY, _legacy_shape, _put_out, _show, _walk_known

#: MXNet 1.9.1's pip builds have 32-bit tensor sizes: an array maker refuses 2**31 - 1
#: elements or more
SIZE_LIMIT = (1 << 31) - 1


# ==================================================================== array makers
def init_shape(c: Call) -> None:
    """``_zeros``, ``_ones``, ``_full``, ``_zeros_without_dtype``: the output is ``shape``,
    read with numpy semantics off (``()`` unknown, 0 an unknown dimension); at most
    2**31 - 2 elements."""
    if c.ins:
        c.fail(f"has {len(c.ins)} inputs, but {c.op} takes none")
    shape = c.p.get("shape")
    if shape is not None and len(shape) > 0:
        dims = [int(v) for v in shape]
        if _walk_known(c, dims, "shape"):
            if math.prod(dims) >= SIZE_LIMIT:
                c.fail(f"shape={_show(dims)} holds {math.prod(dims)} elements, but MXNet "
                       f"(built with 32-bit sizes) allows fewer than 2**31 - 1", attr="shape")
    conv = _legacy_shape(None if shape is None else [int(v) for v in shape])
    if known(c.outs[0]) and not known(conv):
        return
    if conv is not None:
        for v in conv:
            if v < -1:
                c.fail(f"shape={_show(shape)} has the negative size {v}", attr="shape")
    _put_out(c, 0, conv, "(its shape attribute)", attr="shape")


def eye_shape(c: Call) -> None:
    """``_eye``: ``(N, M)``, ``M`` = ``N`` when 0."""
    if c.ins:
        c.fail(f"has {len(c.ins)} inputs, but _eye takes none")
    n = int(c.p["N"])
    m = int(c.p["M"])
    if n < -1:
        c.fail(f"N={n}: the number of rows cannot be negative", attr="N")
    _put_out(c, 0, (n, m if m > 0 else n), "(N, M)", attr="N")


def arange_shape(c: Call) -> None:
    """``_arange``: ``ceil((stop - start) / step) * repeat`` values (``start`` alone is the
    stop); unknown with ``infer_range`` and no ``stop``."""
    if c.ins:
        c.fail(f"has {len(c.ins)} inputs, but _arange takes none")
    start = float(c.p["start"])
    stop = c.p["stop"]
    step = float(c.p["step"])
    repeat = int(c.p["repeat"])
    infer = bool(c.p["infer_range"])
    if not infer and stop is None:
        start, stop = 0.0, start
    if step == 0:
        c.fail("step=0: the step between values cannot be 0", attr="step")
    if not repeat > 0:
        c.fail(f"repeat={repeat}: repeat must be 1 or more", attr="repeat")
    if infer and stop is None:
        return
    stop = float(stop)
    if step > 0 and not start < stop:
        c.fail(f"start={start:g} is not below stop={stop:g}: with a positive step the range "
               f"is empty", attr="stop")
    if not step > 0 and not start > stop:
        c.fail(f"start={start:g} is not above stop={stop:g}: with a negative step the range "
               f"is empty", attr="stop")
    count = math.ceil((stop - start) / step) * repeat
    if not math.isfinite(count):
        c.fail(f"the range from {start:g} to {stop:g} by {step:g} is not finite",
               attr="stop")
    n = int(count)
    if n >= SIZE_LIMIT:
        c.fail(f"the range holds {n} values, but MXNet (built with 32-bit sizes) allows "
               f"fewer than 2**31 - 1", attr="stop")
    _put_out(c, 0, (n,))


def linspace_shape(c: Call) -> None:
    """``_linspace``: ``(num,)``.  MXNet parses its node with LinspaceParam (``start``,
    ``stop``, ``num``, ``endpoint``, ``ctx``, ``dtype``), not the fields it documents, so
    ``num`` is read from the attributes as written."""
    if c.ins:
        c.fail(f"has {len(c.ins)} inputs, but _linspace takes none")
    text = c.attrs.get("num")
    if text is None:
        c.fail("attribute num is required (the number of values)", attr="num")
    try:
        num = int(str(text).strip())
    except ValueError:
        c.fail(f"attribute num={text!r} is not a whole number", attr="num")
    if num < 0:
        c.fail(f"num={num}: the number of values cannot be negative", attr="num")
    _put_out(c, 0, (num,))


RULES: dict[str, Rule] = {
    **table(FAMILY, ["_zeros", "_ones", "_full", "_zeros_without_dtype"], init_shape,
            param_dtype),
    **table(FAMILY, ["_eye"], eye_shape, param_dtype),
    **table(FAMILY, ["_arange"], arange_shape, param_dtype),
    **table(FAMILY, ["_linspace"], linspace_shape, linspace_dtype),
}
