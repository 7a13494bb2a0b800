"""Our exporter's layout ops (reshape, transpose, concat/stack/split, slices, tile,
repeat, reverse, pad, broadcasts, block moves), judged by MXNet's inference forward."""
from __future__ import annotations

import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.convert.own.harness import agree, export

X = mx.sym.var("data")


@pytest.mark.parametrize("shape,target,rev", [
    ((2, 3, 4), (0, -1), False), ((2, 3, 4), (-1,), False), ((2, 3, 4), (0, 0, 2, 2), False),
    ((2, 3, 4), (-2,), False), ((2, 3, 4), (0, -2), False), ((2, 3, 4), (-3, 4), False),
    ((2, 3, 4), (2, -3), False), ((2, 3, 4), (-4, 1, 2, -2), False),
    ((2, 3, 4), (0, -4, -1, 1, 0), False), ((2, 3, 4), (-4, 2, -1, -2), False),
    ((2, 3, 4, 5), (-1, 0), True), ((2, 3, 4, 5), (0, -1), True),
    ((2, 3, 4, 5), (-3, -3), False), ((2, 3, 4), (4, 0, -1), True),
])
def test_reshape(shape, target, rev) -> None:
    agree(mx.sym.Reshape(X, shape=target, reverse=rev, name="r"), {"data": shape})


@pytest.mark.parametrize("target,keep", [((3, 8), False), ((0, 8), False), ((1, 8), True),
                                         ((1, 2, 4), True)])
def test_reshape_legacy(target, keep) -> None:
    agree(mx.sym.Reshape(X, target_shape=target, keep_highest=keep, name="r"),
          {"data": (3, 2, 4)})


def _special(rank: int) -> st.SearchStrategy[tuple[tuple[int, ...], tuple[int, ...], bool]]:
    """A shape and a Reshape target made of MXNet's codes that describe it."""
    @st.composite
    def make(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
        shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
        target: list[int] = []
        i = 0
        minus_one = False
        while i < len(shape):
            left = len(shape) - i
            choices = ["copy", "keep"]
            if left >= 2:
                choices.append("merge")
            if not minus_one:
                choices += ["infer", "split"]
            kind = draw(st.sampled_from(choices + ["rest"]))
            if kind == "copy":
                target.append(0)
                i += 1
            elif kind == "keep":
                target.append(shape[i])
                i += 1
            elif kind == "merge":
                target.append(-3)
                i += 2
            elif kind == "infer":
                minus_one = True
                target.append(-1)
                i += 1
            elif kind == "split":
                target += [-4, -1, 1] if draw(st.booleans()) else [-4, 1, -1]
                minus_one = True
                i += 1
            else:
                target.append(-2)
                break
        rev = draw(st.booleans())
        if rev:     # the same codes read from the right: kept when MXNet takes them
            try:
                mx.nd.zeros(shape).reshape(tuple(target), reverse=True).wait_to_read()
            except (mx.MXNetError, ValueError):
                rev = False
        return shape, tuple(target), rev
    return make()


@settings(max_examples=25, deadline=None)
@given(case=st.integers(1, 4).flatmap(_special))
def test_reshape_codes_property(case) -> None:
    shape, target, rev = case
    agree(mx.sym.Reshape(X, shape=target, reverse=rev, name="r"), {"data": shape})


@pytest.mark.parametrize("kw", [{}, {"lhs_begin": 1, "lhs_end": 3},
                                {"lhs_begin": 0, "lhs_end": 2, "rhs_begin": 1, "rhs_end": 2},
                                {"lhs_begin": -2, "lhs_end": None, "rhs_begin": 0,
                                 "rhs_end": 1}])
def test_reshape_like(kw) -> None:
    shapes = {"data": (2, 3, 4), "like": (24,)}
    if kw.get("lhs_begin") == 1:
        shapes["like"] = (12,)
    elif kw.get("rhs_begin") == 1:
        shapes["like"] = (5, 6, 7)
    elif kw.get("lhs_begin") == -2:
        shapes["like"] = (12, 9)
    agree(mx.sym.reshape_like(X, mx.sym.var("like"), name="r", **kw), shapes)


@pytest.mark.parametrize("axes", [(), (1, 0, 2), (2, 0, 1), (0, 2, 1)])
def test_transpose(axes) -> None:
    agree(mx.sym.transpose(X, axes=axes, name="t"), {"data": (2, 3, 4)})


@pytest.mark.parametrize("d1,d2", [(0, 1), (1, 3), (2, 2), (-1, 0)])
def test_swapaxis(d1, d2) -> None:
    agree(mx.sym.SwapAxis(X, dim1=d1, dim2=d2, name="s"), {"data": (2, 3, 4, 5)})


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@pytest.mark.parametrize("n", [1, 3])
def test_concat(dim, n) -> None:
    ins = [mx.sym.var(f"x{k}") for k in range(n)]
    shapes = {}
    for k in range(n):
        s = [2, 3, 4]
        s[dim] = k + 1
        shapes[f"x{k}"] = tuple(s)
    agree(mx.sym.Concat(*ins, dim=dim, name="c"), shapes)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("n", [1, 3])
def test_stack(axis, n) -> None:
    ins = [mx.sym.var(f"x{k}") for k in range(n)]
    agree(mx.sym.stack(*ins, axis=axis, name="s"), {f"x{k}": (2, 3) for k in range(n)})


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("squeeze", [False, True])
def test_slice_channel(axis, n, squeeze) -> None:
    shape = [4, 4, 4]
    if squeeze:
        shape[axis] = n
    net = mx.sym.SliceChannel(X, num_outputs=n, axis=axis, squeeze_axis=squeeze,
                              name="split")
    agree(mx.sym.Group(list(net)) if n > 1 else net, {"data": tuple(shape)})


def test_slice_channel_many() -> None:
    net = mx.sym.split(X, num_outputs=1200, axis=1, squeeze_axis=True, name="split")
    built = agree(net, {"data": (2, 1200)})
    assert len(built.outputs) == 1200


@pytest.mark.parametrize("kw,shape", [
    ({"indices_or_sections": 3, "axis": 1}, (2, 6, 2)),
    ({"indices_or_sections": (2, 3), "axis": 1}, (2, 6, 2)),
    ({"indices_or_sections": (1, 2), "axis": 0, "squeeze_axis": True}, (3, 4)),
    ({"indices_or_sections": (2, 5), "axis": -1}, (3, 7)),
])
def test_split_v2(kw, shape) -> None:
    net = mx.sym.split_v2(X, **kw)
    agree(mx.sym.Group(list(net)), {"data": shape})


@pytest.mark.parametrize("begin,end,step", [
    ((0,), (1,), ()), ((None, 1), (None, 3), ()), ((1, None, -1), (None, 0, None), ()),
    ((None, None), (None, None), (-1, -2)), ((-1, -3), (0, None), (-1, -1)),
    ((3, 0), (None, None), (-2, 2)), ((None,), (-2,), (None,)), ((5, 7), (-7, 99), (-1, 1)),
])
def test_slice(begin, end, step) -> None:
    agree(mx.sym.slice(X, begin=begin, end=end, step=step, name="s"), {"data": (5, 6, 3)})


_entry = st.one_of(st.none(), st.integers(-8, 8))


@settings(max_examples=25, deadline=None)
@given(dims=st.lists(st.integers(1, 6), min_size=1, max_size=3), data=st.data())
def test_slice_property(dims, data) -> None:
    n = data.draw(st.integers(1, len(dims)))
    begin = tuple(data.draw(_entry) for _ in range(n))
    end = tuple(data.draw(_entry) for _ in range(n))
    step = tuple(data.draw(st.one_of(st.none(), st.integers(-3, 3).filter(bool)))
                 for _ in range(n))
    sym = mx.sym.slice(X, begin=begin, end=end, step=step, name="s")
    try:
        want = mx.nd.slice(mx.nd.zeros(tuple(dims)), begin=begin, end=end, step=step)
        want.wait_to_read()
    except mx.MXNetError:
        return
    agree(sym, {"data": tuple(dims)})


@pytest.mark.parametrize("axis,begin,end", [(0, 1, 3), (1, 0, None), (-1, -2, None),
                                            (2, 1, -1), (1, -3, 4)])
def test_slice_axis(axis, begin, end) -> None:
    agree(mx.sym.slice_axis(X, axis=axis, begin=begin, end=end, name="s"),
          {"data": (4, 5, 3)})


@pytest.mark.parametrize("axes", [(), (0,), (2, 3), (-1,)])
def test_slice_like(axes) -> None:
    agree(mx.sym.slice_like(X, mx.sym.var("like"), axes=axes, name="s"),
          {"data": (4, 5, 6, 7), "like": (2, 3, 4, 5)})


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_expand_dims(axis) -> None:
    agree(mx.sym.expand_dims(X, axis=axis, name="e"), {"data": (2, 3)})


@pytest.mark.parametrize("shape,axis", [((2, 1, 3, 1), None), ((2, 1, 3, 1), 1),
                                        ((2, 1, 3, 1), (1, 3)), ((2, 1, 3, 1), -1),
                                        ((1, 1), None), ((2, 3), None)])
def test_squeeze(shape, axis) -> None:
    agree(mx.sym.squeeze(X, axis=axis, name="s"), {"data": shape})


@pytest.mark.parametrize("reps", [(2,), (1, 1), (2, 3), (2, 1, 3), (2, 2, 1, 2)])
def test_tile(reps) -> None:
    agree(mx.sym.tile(X, reps=reps, name="t"), {"data": (2, 3)})


@pytest.mark.parametrize("axis", [None, 0, 1, -1, -2])
@pytest.mark.parametrize("repeats", [0, 1, 3])
def test_repeat(axis, repeats) -> None:
    agree(mx.sym.repeat(X, repeats=repeats, axis=axis, name="r"), {"data": (2, 3, 2)})


@pytest.mark.parametrize("axis", [0, 1, (0, 2), (2,), (0, 1, 2)])
def test_reverse(axis) -> None:
    agree(mx.sym.reverse(X, axis=axis, name="r"), {"data": (3, 4, 2)})
    agree(mx.sym.flip(X, axis=axis, name="f"), {"data": (3, 1, 2)})


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@pytest.mark.parametrize("width", [(0, 0, 0, 0, 1, 2, 2, 1), (0, 0, 0, 0, 0, 0, 0, 0),
                                   (0, 0, 0, 0, 1, 1, 1, 1, 2, 0)])
def test_pad(mode, width) -> None:
    shape = (2, 3, 4, 5) if len(width) == 8 else (2, 3, 4, 5, 3)
    agree(mx.sym.Pad(X, mode=mode, pad_width=width, constant_value=1.5, name="p"),
          {"data": shape})


@pytest.mark.parametrize("axis,size", [((1,), (4,)), ((0, 2), (3, 2))])
def test_broadcast_axis(axis, size) -> None:
    agree(mx.sym.broadcast_axis(X, axis=axis, size=size, name="b"), {"data": (1, 1, 1)})


@pytest.mark.parametrize("shape", [(3, 4, 5), (0, 4, 0), (3, 0, 5)])
def test_broadcast_to(shape) -> None:
    agree(mx.sym.broadcast_to(X, shape=shape, name="b"), {"data": (3, 1, 5)})


@pytest.mark.parametrize("kw,like", [({}, (3, 4, 5)),
                                     ({"lhs_axes": (1,), "rhs_axes": (0,)}, (4, 2))])
def test_broadcast_like(kw, like) -> None:
    agree(mx.sym.broadcast_like(X, mx.sym.var("like"), name="b", **kw),
          {"data": (3, 1, 5), "like": like})


@pytest.mark.parametrize("block", [1, 2, 3])
def test_depth_space(block) -> None:
    agree(mx.sym.depth_to_space(X, block_size=block, name="d"),
          {"data": (2, 2 * block * block, 2, 3)})
    agree(mx.sym.space_to_depth(X, block_size=block, name="s"),
          {"data": (2, 3, 2 * block, 3 * block)})


def test_reshape_is_static() -> None:
    built, _ = export(mx.sym.Reshape(X, shape=(-3, 0), name="r"), {"data": (2, 3, 4)})
    kinds = [n.op_type for n in built.model.graph.node]
    assert kinds == ["Reshape"]
    assert np.prod(built.inputs["data"][0]) == 24


@pytest.mark.parametrize("opset", [13, 17, 18, 19])
def test_newer_opsets(opset) -> None:
    net = mx.sym.Group(list(mx.sym.split(X, num_outputs=2, axis=1, squeeze_axis=False))
                       + [mx.sym.Pad(X, mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 2, 0)),
                          mx.sym.squeeze(mx.sym.slice_axis(X, axis=1, begin=0, end=1)),
                          mx.sym.reverse(X, axis=(2, 3))])
    built = agree(net, {"data": (2, 4, 3, 3)}, opset=opset)
    assert built.opset == opset
