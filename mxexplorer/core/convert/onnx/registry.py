"""Op name -> converter, gathered from the family modules (:mod:`nn`, :mod:`elementwise`,
:mod:`layout`, :mod:`heads`, :mod:`detection`, :mod:`sequence`, :mod:`plugins`) the way the engine's
rules are; an alias (``_Plus``, ``_MulScalar``) finds its op's converter through the
op table.  Each converter says the lowest opset it writes (13 unless it needs more).
Must not import MXNet or Qt.
"""
from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from typing import Any, Callable

from mxexplorer.core.graph import opinfo

#: the family modules, in the order their tables are merged
FAMILIES = ("nn", "nn_more", "elementwise", "elementwise_unary", "elementwise_reduce",
            "layout", "layout_index", "heads", "detection", "detection_nms", "sequence",
            "sequence_rnn", "plugins")
#: the opset written unless one is asked for or a converter needs more
DEFAULT_OPSET = 13
#: the lowest opset our converters write (Squeeze, Unsqueeze, Split and ReduceSum take
#: their axes as inputs from 13 on)
MIN_OPSET = 13

Convert = Callable[[Any, Any], "list[str | None]"]


@dataclass(frozen=True)
class Converter:
    op: str
    convert: Convert
    opset: int          # the lowest opset it writes
    family: str
    #: how many of the node's inputs it reads (None: all); a training head reads its
    #: data, not its label
    reads: int | None = None


_TABLE: dict[str, Converter] = {}


def converts(*ops: str, opset: int = MIN_OPSET, reads: int | None = None
             ) -> Callable[[Convert], Convert]:
    """Register the decorated function for ``ops`` (writing ``opset`` or newer, reading
    the first ``reads`` inputs)."""
    def register(fn: Convert) -> Convert:
        family = fn.__module__.rsplit(".", 1)[-1]
        for op in ops:
            if op in _TABLE:
                raise RuntimeError(f"op {op} has converters in {_TABLE[op].family} "
                                   f"and {family}")
            _TABLE[op] = Converter(op, fn, opset, family, reads)
        return fn
    return register


@functools.lru_cache(maxsize=1)
def table() -> dict[str, Converter]:
    for family in FAMILIES:
        importlib.import_module(f"mxexplorer.core.convert.onnx.{family}")
    return _TABLE


def converter_for(op: str) -> Converter | None:
    """The converter of ``op`` as a file names it (an alias finds its op's)."""
    found = table().get(op)
    if found is None:
        canon = opinfo.canonical_op(op)
        if canon != op:
            found = table().get(canon)
    return found


def supported_ops() -> set[str]:
    return set(table())
