"""What an ONNX export reports, whichever converters made it: :class:`ExportReport` (the
file, the opset, the weights, what was changed, the check) and :class:`UnsupportedOps`
(the nodes whose ops no converter knows).  Must not import MXNet or Qt."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mxexplorer.core.convert.onnx_check import CheckReport
from mxexplorer.core.runtime.errors import UserError


class UnsupportedOps(UserError):
    """Operators the converter lacks: ``nodes`` is [(node id, name, op)]."""

    def __init__(self, nodes: list[tuple[int, str, str]]):
        self.nodes = nodes
        shown = ", ".join(f"{name} ({op})" for _, name, op in nodes[:6])
        more = f" and {len(nodes) - 6} more" if len(nodes) > 6 else ""
        ops = sorted({op for _, _, op in nodes})
        super().__init__(f"{len(nodes)} node(s) use ops MXNet's ONNX converter lacks "
                         f"({', '.join(ops)}): {shown}{more}; cut the graph before them "
                         "(Cut here / export up to an output) to export the part before")

    def __reduce__(self) -> tuple[Any, ...]:          # crosses from the child process
        return (UnsupportedOps, (self.nodes,))


@dataclass(frozen=True)
class ExportReport:
    path: str
    opset: int
    weights: str
    fixes: tuple[str, ...] = field(default=())
    check: CheckReport | None = None
    size_bytes: int = 0
    #: who converted: "mxexplorer" (our converters) or "mx2onnx" (MXNet's, fixed)
    via: str = "mx2onnx"

    def lines(self) -> list[str]:
        out = [f"wrote {self.path} (opset {self.opset}, {self.size_bytes:,} bytes, "
               f"{self.weights})"]
        out += [f"fixed: {fix}" for fix in self.fixes]
        if self.check is not None:
            for k, o in enumerate(self.check.outputs):
                if not self.check.compared:
                    out.append(f"output {k} {o.name} {o.shape}: largest magnitude "
                               f"{o.max_abs:.3g}")
                    continue
                top = f", top-1 agreement {o.top1:.0%}" if o.top1 is not None else ""
                if o.reordered:
                    top += f", {o.reordered} rows of equal scores matched in another order"
                out.append(f"output {k} {o.name} {o.shape}: max abs {o.max_abs:.3g}, "
                           f"max rel {o.max_rel:.3g}{top}")
            out.append(self.check.verdict())
        return out

    def to_dict(self) -> dict[str, Any]:
        check = self.check
        return {"path": self.path, "via": self.via, "opset": self.opset,
                "weights": self.weights,
                "fixes": list(self.fixes), "size_bytes": self.size_bytes,
                "check": None if check is None else check.to_dict()}
