"""Rules for MXNet 1.9.1's contrib ops of this family: the legacy layers
``_contrib_fft``, ``_contrib_ifft`` and ``_contrib_count_sketch`` (which wait for their
data's full shape, need its type, and replace their output's shape and type), and
``_contrib_hawkesll`` (a Hawkes process log-likelihood over eight inputs of fixed
ranks).  Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Rule, Shape, fmt
from mxexplorer.core.ops.image_linalg.helpers import (
    count,
    fail,
    legacy_first_type,
    rank,
    rules,
)


def _full(c: Call) -> Shape | None:
    s = c.ins[0]
    return s if s is not None and all(d >= 0 for d in s) else None


def _keep_or_replace(c: Call, shape: Shape | None) -> None:
    """A legacy layer clears its outputs and writes what it found: a shape it makes
    replaces what was known; none leaves the output as it was (MXNet reads the cleared
    slot back unchanged)."""
    if shape is not None:
        c.outs[0] = shape


def fft_shape(c: Call) -> None:
    """``FFTProp``/``IFFTProp::InferShape``: once the data's shape is fully known, a 2-d
    (N, d) or 4-d (N, C, H, d) array gives d doubled (fft: real to interleaved complex)
    or halved (ifft); another rank gives nothing."""
    count(c, ("data",))
    d = _full(c)
    if d is None or len(d) not in (2, 4):
        return
    last = d[-1] * 2 if c.op == "_contrib_fft" else d[-1] // 2
    _keep_or_replace(c, d[:-1] + (last,))


def count_sketch_shape(c: Call) -> None:
    """``CountSketchProp::InferShape``: once the data's shape is fully known, 2-d (N, d)
    or 4-d (N, C, H, d) data needs ``h`` and ``s`` of (at least) 2 dimensions whose
    second is d (as given), and gives d replaced by ``out_dim``."""
    count(c, ("data", "h", "s"))
    d = _full(c)
    if d is None:
        return
    if len(d) not in (2, 4):
        fail(f"{c.input_label(0)} has shape {fmt(d)}, but count_sketch needs 2-d data "
             f"(N, d) or 4-d data (N, C, H, d)", input=0)
    for i, name in ((1, "h"), (2, "s")):
        s = c.ins[i]
        if s is None or len(s) < 2 or s[1] != d[-1]:
            fail(f"{c.input_label(i)} has {rank(s)}, but count_sketch needs {name} of 2 "
                 f"dimensions whose second is the data's last size {d[-1]} (known)",
                 input=i)
    _keep_or_replace(c, d[:-1] + (int(c.p["out_dim"]),))


def legacy_type(c: Call) -> None:
    """The legacy layer's input count check, then the first input's type for all."""
    count(c, ("data", "h", "s") if c.op == "_contrib_count_sketch" else ("data",))
    legacy_first_type(c)


HAWKES = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")
#: each input's rank and layout
_HAWKES_RANKS = (2, 1, 1, 2, 2, 2, 1, 1)
_HAWKES_LAYOUT = ("(N, K)", "(K,)", "(K,)", "(N, K)", "(N, T)", "(N, T)", "(N,)", "(N,)")


def hawkesll_shape(c: Call) -> None:
    """``HawkesLLOpShape``: every input of its rank (known); N and T from ``lags``, K from
    ``lda``, the others agreeing (as given); outputs (N,) and (N, K)."""
    count(c, HAWKES)
    for i, (n, layout) in enumerate(zip(_HAWKES_RANKS, _HAWKES_LAYOUT)):
        s = c.ins[i]
        if s is None or len(s) != n:
            fail(f"{c.input_label(i)} has {rank(s)}, but hawkesll needs {HAWKES[i]} of "
                 f"shape {layout}", input=i)
    ins: list[Shape] = [s for s in c.ins if s is not None]
    n, t = ins[4]
    k = ins[0][1]
    wanted = {0: (n, k), 1: (k,), 2: (k,), 3: (n, k), 5: (n, t), 6: (n,), 7: (n,)}
    for i, shape in wanted.items():
        if ins[i] != shape:
            fail(f"{c.input_label(i)} has shape {fmt(ins[i])}, but with {HAWKES[i]} of "
                 f"layout {_HAWKES_LAYOUT[i]}, N={fmt((n,))[1:-2]}, T={fmt((t,))[1:-2]} "
                 f"(from lags {fmt(ins[4])}) and K={fmt((k,))[1:-2]} (from lda) it must be "
                 f"{fmt(shape)} (as given)", input=i)
    c.set_out(0, (n,))
    c.set_out(1, (n, k))


def hawkesll_type(c: Call) -> None:
    """``HawkesLLOpType``: the outputs take ``lda``'s type; every input but ``marks``
    takes the first output's; ``marks`` is int32."""
    count(c, HAWKES)
    c.set_out(0, c.ins[0])
    c.set_out(1, c.ins[0])
    for j in range(8):
        if j != 5:
            c.set_in(j, c.outs[0], "the output has")
    c.set_in(5, "int32", "marks are")


RULES: dict[str, Rule] = {
    **rules(["_contrib_fft", "_contrib_ifft"], fft_shape, legacy_type),
    **rules(["_contrib_count_sketch"], count_sketch_shape, legacy_type),
    **rules(["_contrib_hawkesll"], hawkesll_shape, hawkesll_type),
}
