"""What every command shares: input shapes from ``--shape``, JSON out, a progress line
on a terminal, and the one-line failure.  No Qt, no MXNet."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from mxexplorer.core.runtime.errors import UserError, escape_controls


def shape_args(values: Sequence[str] | None) -> dict[str, tuple[int, ...]]:
    """``NAME=D1,D2,...`` options as {name: shape}."""
    from mxexplorer.core.analysis.shapes import parse_shape_arg

    shapes: dict[str, tuple[int, ...]] = {}
    for text in values or ():
        name, shape = parse_shape_arg(text)
        shapes[name] = shape
    return shapes


def data_shapes(doc: Any, args: argparse.Namespace) -> dict[str, tuple[int, ...]]:
    """The ``--shape`` options, required: without them one line names the inputs."""
    shape_map = shape_args(args.shape)
    if not shape_map:
        inputs = ", ".join(doc.nodes[i].name for i in doc.data_inputs()) or "none"
        raise UserError(f"give the input shapes with --shape NAME=D1,D2,... (inputs: {inputs})")
    return shape_map


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2) + "\n")


def listed(items: list[str], limit: int = 8) -> str:
    """``a, b, c (+5 more)``, or ``-`` for none."""
    if not items:
        return "-"
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


class TerminalProgress:
    """Progress on stderr, one rewritten line, only when stderr is a terminal."""

    def __init__(self) -> None:
        self.live = sys.stderr.isatty()

    def __call__(self, done: int, total: int, message: str) -> None:
        if self.live:
            sys.stderr.write(f"\r{message[:70]:<70}")
            sys.stderr.flush()

    def close(self) -> None:
        if self.live:
            sys.stderr.write("\r" + " " * 70 + "\r")


def fail(message: str, code: int = 2) -> int:
    """One line on stderr (control characters a file put in it escaped); returns the
    exit status."""
    sys.stderr.write(f"mxexplorer: error: {escape_controls(message)}\n")
    return code
