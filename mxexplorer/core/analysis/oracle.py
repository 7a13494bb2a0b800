"""MXNet asked about one node the engine has no rule for.

Owns :class:`MXNetOracle`: given a node and what is known of its inputs, it builds a
one-node graph, lets MXNet 1.9.1 infer it and hands back the inputs' and outputs'
shapes (or dtypes), or MXNet's refusal as a :class:`~mxexplorer.core.ops.base.RuleError`
in plain words.  MXNet is imported on the first question, never before; where it is not
installed the oracle says so once (:attr:`MXNetOracle.missing`) and answers nothing.
Must not import Qt.
"""
from __future__ import annotations

import warnings
from typing import Any

from mxexplorer.core.graph import opinfo, symbol_io
from mxexplorer.core.graph.model import CURRENT_VERSION, Node
from mxexplorer.core.ops.base import MaybeShape, RuleError
from mxexplorer.core.ops.engine import NoAnswer, legacy_to_shape, shape_to_legacy
from mxexplorer.core.runtime.errors import MXNetMissingError
from mxexplorer.core.runtime.mxnet_env import import_mxnet, mxnet_available


class MXNetOracle:
    """Answers for ops without a rule by asking MXNet (see the module docstring)."""

    def __init__(self) -> None:
        self._mx: Any = None
        #: why MXNet cannot be asked, once known
        self.missing: str | None = None if mxnet_available() else "MXNet is not installed"

    @property
    def usable(self) -> bool:
        return self.missing is None

    def _import(self) -> Any:
        if self._mx is None:
            if self.missing is not None:
                raise NoAnswer(self.missing)
            try:
                self._mx = import_mxnet()
            except MXNetMissingError as exc:
                self.missing = str(exc)
                raise NoAnswer(self.missing) from None
        return self._mx

    def _symbol(self, node: Node) -> Any:
        mx = self._import()
        n = len(node.inputs)
        nodes: list[dict[str, Any]] = [{"op": "null", "name": f"in{i}", "inputs": []}
                                       for i in range(n)]
        entry: dict[str, Any] = {"op": node.op, "name": "n", "attrs": dict(node.attrs),
                                 "inputs": [[i, 0, 0] for i in range(n)]}
        entry.update(node.extra)
        nodes.append(entry)
        text = symbol_io.dumps({"nodes": nodes, "arg_nodes": list(range(n)),
                                "heads": [[n, k, 0] for k in range(self._visible(node))],
                                "attrs": {"mxnet_version": ["int", CURRENT_VERSION]}})
        try:
            return mx.sym.load_json(text).get_internals()
        except mx.base.MXNetError as exc:
            raise RuleError(_reason(exc)) from None

    @staticmethod
    def _visible(node: Node) -> int:
        return max(len(opinfo.outputs(node.op, node.attrs)[1]), 1)

    def _ask(self, node: Node, ins: list[Any], outs: list[Any], kind: str
             ) -> tuple[list[Any], list[Any]]:
        if not opinfo.is_registered(node.op) or opinfo.canonical_op(node.op) == "Custom":
            # a plug-in's op, or a Custom op registered by the model's own Python code:
            # MXNet knows no more of it than we do
            raise NoAnswer(f"MXNet 1.9.1 cannot run {node.op}")
        mx = self._import()
        sym = self._symbol(node)
        args = sym.list_arguments()
        aux = sym.list_auxiliary_states()
        names = sym.list_outputs()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if kind == "shape":
                    given = {f"in{i}": shape_to_legacy(s) for i, s in enumerate(ins)
                             if s is not None}
                    a, o, x = sym.infer_shape_partial(**given)
                else:
                    import numpy as np

                    a, o, x = sym.infer_type_partial(
                        **{f"in{i}": np.dtype(t) for i, t in enumerate(ins) if t is not None})
        except mx.base.MXNetError as exc:
            raise RuleError(_reason(exc)) from None

        def value(v: Any) -> Any:
            if v is None:
                return None
            if kind == "shape":
                return legacy_to_shape(tuple(int(d) for d in v))
            import numpy as np
            return np.dtype(v).name
        known = dict(zip(args, a or [None] * len(args)))
        known.update(zip(aux, x or [None] * len(aux)))
        # MXNet started from what we know of the inputs: its answer is at least as known
        new_ins = []
        for i in range(len(ins)):
            answer = value(known.get(f"in{i}"))
            new_ins.append(answer if answer is not None else ins[i])
        visible = [value(v) for name, v in zip(names, o or [None] * len(names))
                   if name == "n" or name.startswith("n_")]
        new_outs = list(outs)
        for k, v in enumerate(visible[:len(new_outs)]):
            if v is not None:
                new_outs[k] = v if new_outs[k] is None else _merged(new_outs[k], v)
        return new_ins, new_outs

    def shapes(self, node: Node, ins: list[MaybeShape], outs: list[MaybeShape]
               ) -> tuple[list[MaybeShape], list[MaybeShape]]:
        return self._ask(node, ins, outs, "shape")

    def dtypes(self, node: Node, ins: list[str | None], outs: list[str | None]
               ) -> tuple[list[str | None], list[str | None]]:
        return self._ask(node, ins, outs, "dtype")


def _merged(ours: Any, theirs: Any) -> Any:
    """Our output value filled in from MXNet's (a disagreement is MXNet's to report)."""
    if isinstance(ours, tuple) and isinstance(theirs, tuple) and len(ours) == len(theirs):
        return tuple(a if a >= 0 else b for a, b in zip(ours, theirs))
    return ours


def _reason(exc: BaseException) -> str:
    text = symbol_io.mxnet_message(exc)
    # "Error in operator n: ..." names our one-node graph's node: keep what follows
    marker = "Error in operator n: "
    if marker in text:
        text = text.split(marker, 1)[1]
    return f"MXNet: {text}"


__all__ = ["MXNetOracle"]
