"""What a benchmark reports: each graph's times and memory (:class:`BenchResult`), the
estimate made before the timed rounds (:class:`Estimate`), and the comparison of the
graphs with its verdict (:class:`Comparison`); plain data, picklable across the child
process.  No MXNet, no Qt.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mxexplorer.core.graph import opinfo
from mxexplorer.core.planning import benchstats


@dataclass(frozen=True)
class Timing:
    median_ms: float
    min_ms: float
    max_ms: float
    runs: int

    def to_dict(self) -> dict[str, float]:
        return {"median_ms": self.median_ms, "min_ms": self.min_ms, "max_ms": self.max_ms,
                "runs": self.runs}


@dataclass(frozen=True)
class BenchResult:
    label: str
    device: str
    batch: int
    train: Timing
    infer: Timing
    planned_mb: float | None         # MXNet's "Total N MB allocated" for training
    gpu_used_mb: float | None        # measured on a GPU, None on the CPU
    context_mb: float | None = None  # the CUDA context, measured before MXNet's first call
    workspace_mb: float | None = None   # the largest convolution workspace limit
    settings: tuple[tuple[str, str], ...] = ()   # MXNet settings made for the run

    @property
    def train_samples_per_s(self) -> float:
        return self.batch * 1000.0 / self.train.median_ms if self.train.median_ms else 0.0

    @property
    def infer_samples_per_s(self) -> float:
        return self.batch * 1000.0 / self.infer.median_ms if self.infer.median_ms else 0.0

    @property
    def memory_mb(self) -> float | None:
        """Memory used on a GPU, else MXNet's planned figure."""
        return self.gpu_used_mb if self.gpu_used_mb is not None else self.planned_mb

    def summary(self) -> str:
        """One line for people: the CLI and the panel both print this."""
        if self.gpu_used_mb is not None:
            mem = f"{self.gpu_used_mb:.0f} MB measured"
        elif self.planned_mb is not None:
            mem = f"{self.planned_mb:.0f} MB planned by MXNet"
        else:
            mem = "? MB"
        line = (f"{self.label}: {self.train.median_ms:.1f} ms/iter "
                f"({self.train.min_ms:.1f}-{self.train.max_ms:.1f}), "
                f"{self.train_samples_per_s:.1f} samples/s, inference "
                f"{self.infer.median_ms:.1f} ms, memory {mem}")
        if self.settings:
            line += " [" + ", ".join(f"{k}={v}" for k, v in self.settings) + "]"
        return line

    def memory_note(self) -> str:
        """Measured against planned memory, with the difference named (GPU only)."""
        return memory_note(self.planned_mb, self.gpu_used_mb, self.context_mb,
                           self.workspace_mb)

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "device": self.device, "batch": self.batch,
                "train": self.train.to_dict(), "infer": self.infer.to_dict(),
                "train_samples_per_s": self.train_samples_per_s,
                "infer_samples_per_s": self.infer_samples_per_s,
                "planned_mb": self.planned_mb, "gpu_used_mb": self.gpu_used_mb,
                "context_mb": self.context_mb, "workspace_mb": self.workspace_mb,
                "settings": dict(self.settings), "memory_note": self.memory_note()}


def memory_note(planned_mb: float | None, used_mb: float | None, context_mb: float | None,
                workspace_mb: float | None) -> str:
    """One sentence: what a GPU run used beside what MXNet planned, and why they differ.

    MXNet's "Total N MB allocated" counts the graph's arrays only; the convolution
    workspace (``workspace``, up to 1024 MB per device by default), cuDNN/cuBLAS handles
    and the memory pool's rounding are outside it, and the CUDA context comes before
    it.  Memonger users have reported 744 MB planned and 5.1 GB seen (apache/mxnet#2682).
    """
    if used_mb is None:
        return ""
    parts = [f"measured {used_mb:.0f} MB"]
    if planned_mb is not None:
        extra = used_mb - planned_mb
        parts.append(f"against MXNet's planned {planned_mb:.0f} MB")
        if extra > 0.5:
            outside = ["convolution workspace"
                       + (f" (limit {workspace_mb:.0f} MB)" if workspace_mb else ""),
                       "cuDNN/cuBLAS handles", "the memory pool's rounding"]
            parts.append(f"{extra:.0f} MB more, outside MXNet's plan: " + ", ".join(outside))
        elif extra < -0.5:
            parts.append(f"{-extra:.0f} MB less (in-place reuse MXNet's count leaves in)")
    line = "; ".join(parts)
    if context_mb is not None and context_mb > 0.5:
        line += f"; the CUDA context takes {context_mb:.0f} MB before any of it"
    return line[0].upper() + line[1:] + "."


def workspace_limit_mb(graph_json: str) -> float | None:
    """The largest ``workspace`` a convolution of the graph may take (MB); MXNet's
    default is 1024 where the attribute is absent.  None: no convolution."""
    import json

    data = json.loads(graph_json)
    most: float | None = None
    for node in data.get("nodes", []) if isinstance(data, dict) else []:
        if node.get("op") not in ("Convolution", "Deconvolution"):
            continue
        attrs = opinfo.node_attrs(node)
        try:
            value = float(attrs.get("workspace", 1024))
        except (TypeError, ValueError):
            value = 1024.0
        most = value if most is None else max(most, value)
    return most


@dataclass(frozen=True)
class Estimate:
    """How long the timed rounds will take, from the warm-up's last round: reported
    before they start.

    ``over_budget``: even the fewest rounds (:data:`benchmark.MIN_ROUNDS`) run past
    the budget (the rounds alone: loading, binding and warm-up are spent by then, and a
    smaller batch hardly shortens them; a busy machine's slow start-up made a 0.01 s
    graph "over" a 5 s budget); ``smaller_batch`` is then a batch whose benchmark would
    fit (time taken as proportional to the batch: a rough guess, rounded down to a power
    of two), or None.
    """

    rounds: int          # timed rounds, each graph trained and inferred once in each
    round_s: float       # one round
    seconds: float       # the timed rounds still to run
    spent_s: float       # before them: loading, binding, warm-up
    budget_s: float
    graphs: int
    batch: int
    loops: int = 1       # iterations in one timed sample
    smaller_batch: int | None = None

    @property
    def over_budget(self) -> bool:
        return self.seconds > self.budget_s

    @property
    def smaller_seconds(self) -> float | None:
        """The timed rounds at ``smaller_batch``, as the guess takes them (in proportion
        to the batch)."""
        if not self.smaller_batch:
            return None
        return self.seconds * self.smaller_batch / max(self.batch, 1)

    def line(self) -> str:
        """"about 52 s: 12 runs of each graph", and when over the budget, by how much."""
        each = "each graph" if self.graphs > 1 else "the graph"
        text = f"about {self.seconds:.0f} s: {self.rounds} runs of {each}"
        if self.over_budget:
            text += f" (over the {self.budget_s:.0f} s budget"
            smaller = self.smaller_seconds
            if smaller is None:
                text += ")"
            elif smaller <= self.budget_s:
                text += f"; batch {self.smaller_batch} would fit)"
            else:
                text += f"; batch {self.smaller_batch}, the smallest, about {smaller:.0f} s)"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "round_s": self.round_s, "seconds": self.seconds,
                "spent_s": self.spent_s, "budget_s": self.budget_s, "loops": self.loops,
                "over_budget": self.over_budget, "smaller_batch": self.smaller_batch}


@dataclass(frozen=True)
class Comparison:
    """The graphs timed round by round (:func:`time_graphs`), and what that says.

    ``pairs``: per round, the first and the second graph's training ms; ``order``: the
    labels of the timed training runs, in the order they ran; ``complete`` False: it
    stopped after the estimate, over the budget (``results`` then hold the warm-up's
    last round).
    """

    results: tuple[BenchResult, ...]
    estimate: Estimate | None = None
    pairs: tuple[tuple[float, float], ...] = ()
    order: tuple[str, ...] = ()
    stats: benchstats.RatioStats | None = None
    load: float | None = None
    cores: int = 1
    notes: tuple[str, ...] = ()
    verdict: str = ""
    complete: bool = True

    @property
    def ratio(self) -> float | None:
        """The second graph's training time over the first's (geometric mean)."""
        return self.stats.ratio if self.stats is not None else None

    @property
    def ratio_interval(self) -> tuple[float, float] | None:
        return (self.stats.low, self.stats.high) if self.stats is not None else None

    def lines(self) -> list[str]:
        """For people: the verdict first, each graph's summary and memory, the noise."""
        lines = [line for r in self.results for line in (r.summary(), r.memory_note())
                 if line]
        return ([self.verdict] if self.verdict else []) + lines + list(self.notes)

    def to_dict(self) -> dict[str, Any]:
        interval = self.ratio_interval
        return {"results": [r.to_dict() for r in self.results], "ratio": self.ratio,
                "ratio_interval": list(interval) if interval else None,
                "level": self.stats.level if self.stats else benchstats.LEVEL,
                "verdict": self.verdict, "notes": list(self.notes),
                "pairs": [list(p) for p in self.pairs], "order": list(self.order),
                "rounds": self.results[0].train.runs if self.complete else 0,
                "load": self.load, "cores": self.cores,
                "estimate": self.estimate.to_dict() if self.estimate else None,
                "complete": self.complete}
