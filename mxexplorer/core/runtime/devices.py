"""The devices a graph can run on, as the CLI and the window name them."""
from __future__ import annotations

from dataclasses import dataclass

from mxexplorer.core.runtime.errors import UserError


@dataclass(frozen=True)
class Device:
    """A context to compute on, and whether this MXNet can run there (and why not)."""

    kind: str  # "cpu" or "gpu"
    index: int
    name: str
    free_bytes: int | None = None
    total_bytes: int | None = None
    capability: tuple[int, int] | None = None
    runs: bool = True
    why: str = ""               # the verdict's sentence (why not; or what is set there)

    @property
    def label(self) -> str:
        if self.kind == "cpu":
            return "CPU"
        facts = [f"{self.capability[0]}.{self.capability[1]}"] if self.capability else []
        if self.free_bytes is not None and self.total_bytes is not None:
            facts.append(f"{self.free_bytes / 2**30:.1f} of {self.total_bytes / 2**30:.1f} "
                         "GiB free")
        elif self.total_bytes is not None:
            facts.append(f"{self.total_bytes / 2**30:.1f} GiB")
        if not self.runs:
            facts.append("cannot run this MXNet")
        return f"GPU {self.index}: {self.name}" + (f" ({', '.join(facts)})" if facts else "")

    @property
    def spec(self) -> str:
        return "cpu" if self.kind == "cpu" else f"gpu:{self.index}"


def parse_device(spec: str) -> tuple[str, int]:
    """``cpu``, ``gpu``, ``gpu:1`` -> (kind, index); a clear error otherwise."""
    text = spec.strip().lower()
    if text in ("cpu", "cpu:0"):
        return "cpu", 0
    if text == "gpu":
        return "gpu", 0
    if text.startswith("gpu:") and text[4:].isdigit() and len(text) < 10:
        return "gpu", int(text[4:])
    raise UserError(f"unknown device {spec!r}: use cpu, gpu or gpu:N")
