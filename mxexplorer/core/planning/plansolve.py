"""Plans chosen with the memory model, before MXNet is asked: the planner's solver.

MXNet's bind is the judge of every plan shown (10-500 ms a probe); the memory model
(:mod:`liveness`, a few ms, its median error 0.8 % over the benchmark searches) chooses
which plans are worth a bind:

* :func:`chain_plans`, a dynamic program over the stage chain.  Keeping stage nodes
  ``K`` (all else recomputed) costs about the bytes kept plus the largest segment
  recomputed at once: ``sum(size(k) for k in K) + max(segment between kept nodes)``,
  a segment weighing the bytes of its outputs that some backward reads.  For each
  bound on the segment the least kept bytes is a sliding-window minimum over the
  chain (linear), so every bound of a fine grid is solved exactly.  The objective
  tracks the live peak, not MXNet's allocator: its plans are starting points.
* :func:`runs`: like stage nodes in a row (a stage's block outputs), where good plans
  are periodic (:meth:`ModelSearch.climb_periodic`).
* :func:`roles`: operators that play the same part in repeated blocks (the same op
  at the same place after the same kind of stage, in segments of the same length),
  kept or recomputed together: one move decides, say, "keep every bottleneck's first
  1x1 convolution" for all fifty blocks of a ResNet-152.
* :class:`ModelSearch`: climbs in the model's figures over those moves, stage nodes
  and single operators, deterministic, bounded by a number of model calls.

No Qt, no MXNet.
"""
from __future__ import annotations

from collections import deque
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.planning import liveness
from mxexplorer.core.planning.moves import near_moves, wide_moves

#: periods tried on a run of stage nodes, with those near its square root (offsets:
#: first, middle, last)
PERIODS = (1, 2, 3, 4, 5, 6, 8, 10, 12)


def periods(length: int) -> list[int]:
    """Periods to try on a run of ``length`` stage nodes, those nearest its square root
    first (keeping every sqrt(n)-th of n equal blocks is the classic best, Chen et al.
    2016), so a small budget tries the likely ones."""
    root = max(1, round(length ** 0.5))
    near = {root - 1, root, root + 1}
    return sorted((p for p in set(PERIODS) | near if 1 <= p <= length),
                  key=lambda p: (abs(p - root), p))


class ChainCost:
    """The chain objective of a kept set: bytes kept plus the heaviest segment."""

    def __init__(self, model: liveness.Model, stages: Sequence[int]):
        self.order = order = list(model.order)
        self.pos = {n: k for k, n in enumerate(order)}
        read = {e for i in order for e in model.needs[i]}
        weight = [sum(model.size[(i, k)] for k in model.out_keys[i] if (i, k) in read)
                  for i in order]
        self.prefix = [0]
        for w in weight:
            self.prefix.append(self.prefix[-1] + w)
        self.kept_bytes = {i: sum(model.size[(i, k)] for k in model.out_keys[i])
                           for i in order}
        self.stages = sorted((s for s in stages if s in self.pos), key=self.pos.__getitem__)

    def segment(self, after: int, before: int) -> int:
        """Bytes read in backward of the operators strictly between two positions."""
        return self.prefix[before] - self.prefix[after + 1]

    def __call__(self, kept: Iterable[int]) -> int:
        at = sorted(self.pos[k] for k in kept if k in self.pos)
        bounds = [-1] + at + [len(self.prefix) - 1]
        heaviest = max(self.segment(a, b) for a, b in zip(bounds, bounds[1:]))
        return sum(self.kept_bytes[self.order[p]] for p in at) + heaviest


def chain_plans(cost: ChainCost, bounds: int = 96) -> list[tuple[int, ...]]:
    """For each of ``bounds`` bounds on a segment (a geometric grid), the stage nodes
    to keep so that no segment is heavier and the kept bytes are least; distinct kept
    sets, best first by the chain objective."""
    stages = cost.stages
    pos = [cost.pos[s] for s in stages]
    n_total = len(cost.prefix) - 1
    total = cost.prefix[-1]
    if not stages or total <= 0:
        return []
    smallest = max(1, min(cost.segment(a, b) for a, b in zip([-1] + pos, pos + [n_total])
                          ) or 1)
    plans: dict[tuple[int, ...], int] = {}
    for g in range(bounds):
        bound = smallest * (total / smallest) ** (g / max(bounds - 1, 1))
        kept = _least_kept(cost, pos, stages, bound)
        if kept is not None and kept not in plans:
            plans[kept] = cost(kept)
    return sorted(plans, key=lambda k: (plans[k], k))


def _least_kept(cost: ChainCost, pos: list[int], stages: Sequence[int], bound: float
                ) -> tuple[int, ...] | None:
    """The least kept bytes with every segment within ``bound`` (None: impossible).
    Node 0 is the chain's start, nodes 1..m the stages, m+1 its end; a window of
    predecessors slides with the (non-decreasing) prefix."""
    m = len(stages)
    points = [-1] + pos + [len(cost.prefix) - 1]
    keep = [0] + [cost.kept_bytes[s] for s in stages] + [0]
    best = [0] * (m + 2)
    came = [-1] * (m + 2)
    window: deque[int] = deque()      # candidates i, best[i] increasing
    left = 0
    for j in range(1, m + 2):
        window_add = j - 1
        while window and best[window[-1]] >= best[window_add]:
            window.pop()
        window.append(window_add)
        while left < j and cost.segment(points[left], points[j]) > bound:
            left += 1
        while window and window[0] < left:
            window.popleft()
        if not window:
            if j == m + 1:
                return None
            best[j] = 1 << 62
            continue
        i = window[0]
        best[j] = best[i] + keep[j] if best[i] < (1 << 62) else 1 << 62
        came[j] = i
    if best[m + 1] >= 1 << 62:
        return None
    kept = []
    j = came[m + 1]
    while j > 0:
        kept.append(stages[j - 1])
        j = came[j]
    return tuple(sorted(kept))


def runs(doc: GraphDocument, model: liveness.Model, stages: Iterable[int]
         ) -> list[list[int]]:
    """Stage nodes grouped by op and output size, in graph order (three or more):
    the block outputs of a network's stages, where good plans are periodic."""
    groups: dict[tuple[str, int], list[int]] = {}
    stage_set = set(stages)
    chain = [i for i in model.order if i in stage_set]
    after = dict(zip(chain, chain[1:]))
    for i in chain:
        key = (opinfo.canonical_op(doc.nodes[i].op), model.size[(i, model.out_keys[i][0])])
        groups.setdefault(key, []).append(i)
    out: list[list[int]] = []
    for g in (g for g in groups.values() if len(g) >= 3):
        # a run that only follows another node for node (a block's ReLU after its
        # addition) would repeat its choices one place later: the stage climb moves them
        if not any(len(r) == len(g) and [after.get(i) for i in r] == g for r in out):
            out.append(g)
    return out


def roles(doc: GraphDocument, model: liveness.Model, stages: Iterable[int]
          ) -> list[tuple[int, ...]]:
    """Groups of operators that play the same part in repeated blocks: the same op,
    the same place after the last stage node, the same length of segment and the same
    op at its start.  Groups of two or more, the biggest first."""
    stage_set = set(stages)
    groups: dict[tuple[object, ...], list[int]] = {}
    segment: list[int] = []
    start_op = ""

    def close() -> None:
        for k, i in enumerate(segment):
            key = (opinfo.canonical_op(doc.nodes[i].op), k, len(segment), start_op)
            groups.setdefault(key, []).append(i)

    for i in model.order:
        if i in stage_set:
            close()
            segment = []
            start_op = opinfo.canonical_op(doc.nodes[i].op)
        elif i not in model.dropout:
            segment.append(i)
    close()
    out = [tuple(g) for g in groups.values() if len(g) >= 2]
    return sorted(out, key=lambda g: (-len(g), g[0]))


class ModelSearch:
    """Kept sets costed by the memory model (cached; ``calls`` counts the new ones)."""

    def __init__(self, model: liveness.Model, base: Mapping[int, str],
                 fixed: Iterable[int] = (),
                 figures: dict[tuple[int, ...], float] | None = None):
        self.model = model
        self.base = dict(base)
        #: what MXNet recomputes when nothing is kept; a kept set leaves out its nodes
        self.mirrorable = model.recomputed_by(self.base)
        self.fixed = frozenset(fixed)
        self.cache: dict[tuple[int, ...], float] = {}
        self.calls = 0
        #: the model's figures, shared with other searches of the same graph (a kept set
        #: one of them replayed is not replayed again; each still counts it as a call,
        #: so a search spends its budget as it does alone)
        self.figures = figures if figures is not None else {}
        #: the search's safety net: climbs stop when it says so (never by default)
        self.out_of_time: Callable[[], bool] = lambda: False

    def key(self, kept: Iterable[int]) -> tuple[int, ...]:
        return tuple(sorted(set(kept) | self.fixed))

    def __call__(self, kept: Iterable[int]) -> float:
        key = self.key(kept)
        if key not in self.cache:
            self.calls += 1
            figure = self.figures.get(key)
            if figure is None:
                figure = self.model.total_mb({}, mirrored=self.mirrorable - set(key))
                self.figures[key] = figure
            self.cache[key] = figure
        return self.cache[key]

    def best(self, count: int) -> list[tuple[int, ...]]:
        """The ``count`` least-memory kept sets seen, least first."""
        return sorted(self.cache, key=lambda k: (self.cache[k], k))[:count]

    def _climb(self, start: tuple[int, ...], budget: int,
               moves: Callable[[Callable[[], tuple[int, ...]]], Iterable[Iterable[int]]],
               restart: bool = False) -> tuple[int, ...]:
        """Passes over ``moves(best)`` (``best()`` is the best kept set so far) until a
        pass changes nothing, at most ``budget`` calls.  A move the model puts half a MB
        below the best becomes the best; ``restart``: the pass then starts again from it
        (first improvement), and moves costed before are passed over."""
        best, cost = self.key(start), self(start)
        limit = self.calls + budget

        def current() -> tuple[int, ...]:      # the best as it stands when asked
            return best

        improved = True
        while improved and self.calls < limit:
            improved = False
            for candidate in moves(current):
                if self.calls >= limit or self.out_of_time():
                    return best
                move = self.key(candidate)
                if restart and move in self.cache:
                    continue
                if self(move) < cost - 0.5:
                    best, cost, improved = move, self.cache[move], True
                    if restart:
                        break
        return best

    def climb_groups(self, start: tuple[int, ...], groups: Sequence[Sequence[int]],
                     budget: int) -> tuple[int, ...]:
        """Keep (or stop keeping) each group whole while the model says it pays."""
        def moves(best: Callable[[], tuple[int, ...]]) -> Iterator[set[int]]:
            for group in groups:
                members, now = set(group), set(best())
                yield now - members if members <= now else now | members

        return self._climb(start, budget, moves)

    def climb_moves(self, start: tuple[int, ...], order: Sequence[int], budget: int,
                    wide: bool = False) -> tuple[int, ...]:
        """First-improvement climb over :func:`moves.near_moves` (``wide``:
        :func:`moves.wide_moves`) in ``order``."""

        moves_of = wide_moves if wide else near_moves
        index = {n: k for k, n in enumerate(order)}
        return self._climb(start, budget, lambda best: moves_of(list(best()), list(order),
                                                                 index), restart=True)

    def climb_periodic(self, start: tuple[int, ...], runs: Sequence[Sequence[int]],
                       budget: int) -> tuple[int, ...]:
        """Per run of like stage nodes (a ResNet stage's block outputs), the best of
        keeping every p-th from offset o, or none, the other runs as they are."""
        def moves(best: Callable[[], tuple[int, ...]]) -> Iterator[set[int]]:
            for run in runs:
                rest = set(best()) - set(run)
                for period in periods(len(run)):
                    for offset in sorted({0, period // 2, period - 1}):
                        yield rest | set(run[offset::period])
                yield rest

        return self._climb(start, budget, moves)

    def distinct_best(self, count: int) -> list[tuple[int, ...]]:
        """Up to ``count`` of the least-memory kept sets, at least half a MB apart in the
        model's figures (plans it cannot tell apart are costed once)."""
        out: list[tuple[int, ...]] = []
        last = None
        for key in sorted(self.cache, key=lambda k: (self.cache[k], k)):
            if last is None or self.cache[key] >= last + 0.5:
                out.append(key)
                last = self.cache[key]
                if len(out) >= count:
                    break
        return out
