"""What the public API's parts share: shapes as arguments, its errors, writing a
file a user names.  No Qt."""
from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.runtime import files
from mxexplorer.core.runtime.errors import UserError

ShapeMap = Mapping[str, Sequence[int]]



class InferenceError(UserError):
    """Shape inference stopped at a node: ``node`` and ``op`` name it, the message says
    which input has which shape and what the node needs."""

    def __init__(self, message: str, node: str | None = None, op: str | None = None):
        super().__init__(message)
        self.node = node
        self.op = op


class ShapesMissing(UserError):
    """No input shape was given and the file has none: ``inputs`` names the inputs."""

    def __init__(self, inputs: Sequence[str]):
        example = inputs[0] if inputs and inputs[0].isidentifier() else "data"
        super().__init__(f"give the input shapes, e.g. {example}=(1, 3, 224, 224) "
                         f"(inputs: {', '.join(inputs) or 'none'})")
        self.inputs = list(inputs)


def write_text(path: str | os.PathLike[str], text: str, overwrite: bool = False) -> None:
    """``text`` to ``path`` atomically (a complete new file or the old one, never a
    part); an existing file is kept unless ``overwrite``."""
    path = os.fspath(path)
    if os.path.exists(path) and not overwrite:
        raise UserError(f"{path} exists; pass overwrite=True to replace it")
    files.write_atomic(path, text.encode("utf-8"))


def as_shapes(shapes: ShapeMap | None, extra: Mapping[str, Any]) -> dict[str, Shape]:
    """``shapes`` and keyword shapes as ``{name: (d1, d2, ...)}``, each checked."""
    merged: dict[str, Any] = dict(shapes or {})
    merged.update(extra)
    out: dict[str, Shape] = {}
    for name, dims in merged.items():
        try:
            shape = tuple(int(d) for d in dims)
        except (TypeError, ValueError):
            raise UserError(f"the shape of {name!r} must be a sequence of whole numbers, "
                            f"not {dims!r}") from None
        if not shape or any(d <= 0 for d in shape) or shape != tuple(dims):
            raise UserError(f"the shape of {name!r} must be whole numbers above 0, "
                            f"not {dims!r}")
        out[str(name)] = shape
    return out
