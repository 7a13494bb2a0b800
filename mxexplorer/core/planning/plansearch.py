"""The plan search: which operators to keep and which MXNet recomputes.

Deterministic: every phase is bounded by a number of probes and model calls, never by
seconds, so the same graph and shapes give the same plan on any machine.  A safety net
in seconds (:attr:`Search.deadline`) only guards against a search that would not end;
when it fires the result says so (:attr:`PlanResult.complete`, and the plan's words),
and the solver's plans are costed by MXNet first, whatever the clock: a cut search
never returns a plan worse than its own solver's.  Every figure is MXNet's own
``Total N MB allocated`` for the tagged graph, and the recompute of a plan is what
MXNet's gradient pass recomputes, read from the ``_mirror`` nodes of the same bind.

Phases after the thresholds (:func:`memplan.plan`):

* solve: plans chosen in the memory model's figures (:mod:`plansolve`), the best of
  them costed by MXNet;
* climb: first-improvement hill climbing on the kept set, over the stage nodes, then
  over every operator, with wider moves once it stops, the moves the model ranks
  first tried first;
* trim: at the best memory, stop recomputing the costliest recomputed nodes one by one
  while the memory stays within half a MB: equal memory, less recompute;
* front: from the best plan towards the unplanned graph, keep recomputed nodes in
  growing groups by MACs saved per byte kept: less recompute for more memory.

:func:`front` is the memory-recompute front of all probes; :func:`describe` says a plan
in words.  No Qt, and MXNet only through the search's oracle.
"""
from __future__ import annotations

from typing import Callable, Iterable, Sequence

from mxexplorer.core.analysis.stats import float32_bytes, human_bytes
from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.planning import liveness, plansolve
from mxexplorer.core.planning.model import MB, Plan, PlanResult, Probe
from mxexplorer.core.planning.moves import near_moves, wide_moves
from mxexplorer.core.planning.plantags import tags_for_kept
from mxexplorer.core.planning.state import Search, measure_baseline, original_thresholds
from mxexplorer.core.runtime import forked
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.progress import CancelToken, no_progress

#: moves of a climb's step the model ranks at most (the rest wait)
MODEL_MOVES = 400


def never_mirrored(doc: GraphDocument, ctx: str) -> frozenset[int]:
    """Operators a plan for ``ctx`` must not recompute.  On a GPU, cuDNN's BatchNorm
    updates its moving averages in forward, so a recomputed one would update them
    twice per iteration: BatchNorm nodes without ``cudnn_off`` are kept.  The CPU
    (and oneDNN) update them in backward: nothing is fixed there."""
    if not ctx.strip().lower().startswith("gpu"):
        return frozenset()
    return frozenset(i for i, n in enumerate(doc.nodes)
                     if not n.is_variable and opinfo.canonical_op(n.op) == "BatchNorm"
                     and str(n.attrs.get("cudnn_off", "False")).lower() not in ("true", "1"))


#: from this many operators, the "best" search's thorough half leaves the original's
#: thresholds to the memory model, as the fast search does: nine binds of the whole
#: graph (6 s of a 1001-layer ResNet's 29) that gave none of the four large benchmark
#: networks its plan (issue 27: "best" within 15 s there)
LARGE = 500


def search_modes(search: Search, n_ops: int, mode: str) -> None:
    """The searches "fast", "thorough" and "best" after the baseline.  "fast": the
    original's thresholds left to the model, then :func:`search_best` with the small
    budgets.  "thorough": the thresholds costed, then the larger budgets.  "best":
    both, each exactly as it runs alone (the fast one in a :meth:`Search.fork`, the
    plans both cost bound once; from :data:`LARGE` operators the thorough one leaves
    the thresholds to the model too), and the better plan of the two: never worse than
    "fast" on the same graph, nor below :data:`LARGE` operators than "thorough"
    (within the half MB where the plan that recomputes less is taken; MXNet's figures
    are whole MB).  Where it can (:attr:`Search.parallel`), the fast half runs in a
    forked process beside the thorough one (:class:`_Beside`); in two threads the two
    took longer than one after the other (DenseNet-201: 16.5 s against 14.0: the GIL)."""
    fast_budget, fast_calls = budgets(n_ops, "fast")
    side = search.fork() if mode == "best" else None
    job: _Beside | None = None
    if side is not None and forks_beside(search, mode):
        job = _Beside(search, side, fast_budget, fast_calls)
    elif mode == "fast" or side is not None:
        fast = side or search
        original_thresholds(fast, probe=False)
        search_best(fast, fast_budget, fast_calls)
        if mode == "fast":
            return
        search.before = len(fast.probes)
    try:
        original_thresholds(search, probe=mode == "thorough" or n_ops < LARGE)
        search_best(search, *budgets(n_ops, mode))
        if job is not None:
            job.finish()
    finally:
        if job is not None:
            job.stop()
    if side is not None:     # beside, the fork costed the unplanned graph first
        search.absorb(side, after=0 if job is not None else 1)


def forks_beside(search: Search, mode: str) -> bool:
    """Whether :func:`search_modes` runs the fast half in a fork beside this search
    (which then costs the unplanned graph there, not here)."""
    return mode == "best" and search.parallel


#: what a search run beside another brings back (:class:`_Beside`)
_OUTCOME = ("probes", "baseline", "best_kept", "best_cost", "best_threshold",
            "best_recompute", "least_cost", "cut")


class _Beside:
    """The fast half of "best" run in a forked copy of the process
    (:class:`forked.Beside`) while this one runs the thorough half: on two cores the
    fast search costs little of the wall time.  It costs the unplanned graph first
    (the baseline: this search needs it only at the end).  Its probes reach the caller's
    ``on_probe`` as they are costed (passed on before each of this search's reports and
    while it waits); its outcome is set on ``side`` for :meth:`Search.absorb`.  The
    copy starts with what this process holds, so the fast search follows exactly the
    path it follows alone."""

    def __init__(self, search: Search, side: Search, budget: int, calls: int):
        self.search, self.side = search, side

        def work(send: Callable[[Probe], None]) -> dict[str, object]:
            side.on_probe, side.progress, side.token = send, no_progress, CancelToken()
            if side.baseline is None:
                # the unplanned graph's bind (a second on a 1001-layer ResNet) is the
                # first probe here, off the thorough search's path, which needs its
                # figure only at the end; if MXNet cannot bind the graph, the error
                # comes back from here
                measure_baseline(side)
            original_thresholds(side, probe=False)
            search_best(side, budget, calls)
            return {name: getattr(side, name) for name in _OUTCOME}

        self.job = forked.Beside(work)
        search.drain = self.drain

    def passed_on(self, probe: Probe) -> None:
        search = self.search
        search.token.check()              # nothing more is reported once cancelled
        search.before += 1
        if search.on_probe is not None:
            search.on_probe(probe)
        search.report_progress()           # while it waits for the fork, too

    def drain(self) -> None:
        for probe in self.job.messages():
            self.passed_on(probe)

    def finish(self) -> None:
        outcome = self.job.result(self.search.token, self.passed_on)
        for name, value in outcome.items():
            setattr(self.side, name, value)

    def stop(self) -> None:
        self.search.drain = None
        self.job.stop()


def search_best(search: Search, budget: int, model_calls: int) -> None:
    """The solver (a climb in the memory model's figures, its best plans costed by
    MXNet), then a climb, a trim and the front with MXNet, within ``budget`` probes and
    ``model_calls`` calls of the model in all; the climb's moves ranked by the model
    while it predicts MXNet well on this graph and calls are left."""
    doc = search.doc
    ops = [i for i in doc.order() if not doc.nodes[i].is_variable
           and opinfo.canonical_op(doc.nodes[i].op) != "Dropout"]
    if not search.models:                  # one replay of the graph for every fork
        search.models.append(liveness.Model(doc, search.by_entry))
    model = plansolve.ModelSearch(search.models[0], tags_for_kept(doc, ()), search.fixed,
                                  search.figures)
    search.predict = _predictor(search, model, model_calls)
    # the solver's share of the model's calls; the rest ranks the climb's moves (a
    # small budget goes mostly to the solver: its climbs find what few probes cannot)
    share = 0.85 if budget < 20 else 0.67
    left = budget - solve(search, model, ops, max(3, budget // 10), int(model_calls * share))
    left -= climb(search, int(left * 0.35))       # the stage nodes, from the best
    left -= climb(search, left // 2, candidates=ops)
    left -= climb(search, left // 3, candidates=ops, wide=True)
    reserve = max(2 if budget < 20 else 4, budget // 20)     # the front's points
    while left > reserve:                          # trim and climb while either pays
        before = (search.best_cost, search.best_recompute)
        left -= trim(search, max((left - reserve) // 2, 4))
        left -= climb(search, left - reserve, candidates=ops)
        if (search.best_cost, search.best_recompute) == before:
            break
    spread(search, max(left, reserve))


def budgets(n_ops: int, mode: str = "best") -> tuple[int, int]:
    """MXNet probes and memory-model calls a search may make after the original's
    thresholds, by graph size: a probe binds the whole graph and a model call replays
    it, so both are counts of node-visits.  "best" and "thorough": 30,000 node-probes
    (12 to 400; "best" 8 to 400) and 600,000 node-calls (40 to 5,000) ("best" runs the
    fast search besides); "fast": 6,000 (8 to 400) and 120,000 (40 to 1,500), a few
    seconds on any graph."""
    n = max(n_ops, 1)
    # until issue 27 "best" had the small budgets from 500 operators, and stayed well
    # above "thorough" (DenseNet-169 1,814 against 1,712 MB, a 1001-layer ResNet 834
    # against 743)
    if mode == "fast":
        return max(8, min(400, 6_000 // n)), max(40, min(1500, 120_000 // n))
    # "best" takes the fast search's floor of 8 probes: from 2,500 operators 30,000
    # node-probes are fewer than 12, and a 1001-layer ResNet's probe is a 0.6 s bind
    # (its plan comes from the solver's first one; the floor of 12 added 2.5 s of
    # front points that "thorough" still gives)
    return max(8 if mode == "best" else 12, min(400, 30_000 // n)), \
        max(40, min(5000, 600_000 // n))


def solve(search: Search, model: plansolve.ModelSearch, ops: Sequence[int], verify: int,
          calls: int) -> int:
    """Plans chosen in the memory model's figures (:mod:`plansolve`): the thresholds'
    and the chain program's kept sets, then climbs by roles, stage nodes, single
    operators (``ops``) and wider moves until none pays, within ``calls`` model calls; the
    ``verify`` best the model found (half a MB apart) are costed by MXNet (kind
    ``solver``).  Returns the probes spent."""
    doc = search.doc
    limit = model.calls + calls
    stage_order = [i for i in model.model.order if i in search.stages]
    chain = plansolve.ChainCost(model.model, stage_order)
    starts = [search.threshold_plan(t)[0] for t in sweep_thresholds(search, 24)]
    starts += plansolve.chain_plans(chain)
    starts += [k for k, c in search.costs.items() if c is not None] + search.starts
    ranked = sorted(set(map(model.key, starts)), key=lambda k: (chain(k), k))
    model.out_of_time = lambda: search.out_of_time("solver")
    for kept in ranked[:max(4, calls // 10)]:
        search.token.check()
        model(kept)
        if model.out_of_time():       # one start at least: the climbs begin there
            break
    roles = plansolve.roles(doc, model.model, search.stages)
    runs = plansolve.runs(doc, model.model, search.stages)
    best = model.best(1)[0]
    while model.calls < limit and not model.out_of_time():
        before = best
        for step in ("runs", "roles", "stages", "ops", "wide"):
            search.token.check()
            left = max(limit - model.calls, 0)
            if step == "runs":
                best = model.climb_periodic(best, runs, left // 2)
            elif step == "roles":
                best = model.climb_groups(best, roles, left // 4)
            else:
                best = model.climb_moves(best, stage_order if step == "stages" else
                                         ops, left // 2, wide=step == "wide")
        if best == before:
            break
    # costed whatever the clock says: what the solver found is never lost to a cut
    probes = 0
    for kept in model.distinct_best(verify):
        search.token.check()
        if kept not in search.costs:
            probes += 1
            search.cost_of(kept, "solver", None)
    return probes


def _predictor(search: Search, model: plansolve.ModelSearch, calls: int
               ) -> Callable[[tuple[int, ...]], float | None] | None:
    """The memory model's MB for a kept set, or None once ``calls`` model calls are
    spent or the model has missed MXNet's figure by more than 12 % (median over the
    probes so far, from the tenth): a model that cannot rank this graph's plans would
    only delay the right moves."""
    checked = [-1]
    limit = model.calls + calls      # from where the model search stands

    def gated(kept: tuple[int, ...]) -> float | None:
        if len(search.costs) != checked[0]:     # new figures from MXNet: still right?
            checked[0] = len(search.costs)
            errors = sorted(abs(model.cache[k] / c - 1) for k, c in search.costs.items()
                            if c and k in model.cache)
            if len(errors) >= 10 and errors[len(errors) // 2] > 0.12:
                search.predict = None      # from the next step on: graph order
        if model.calls >= limit and model.key(kept) not in model.cache:
            return None
        return model(kept)

    return gated


def trim(search: Search, max_probes: int) -> int:
    """Keep, one at a time, the recomputed nodes of the best plan that cost the most
    MACs, while the memory stays within half a MB of the least seen."""
    probes = 0
    tried: set[int] = set()
    while probes < max_probes and search.best_kept is not None \
            and not search.out_of_time("trim"):
        best = search.best_kept
        todo = [i for i in _by_macs(search, search.mirrored.get(best, ())) if i not in tried]
        if not todo:
            break
        node = todo[0]
        tried.add(node)
        key = tuple(sorted(set(best) | {node}))
        if key not in search.costs:
            probes += 1
        search.cost_of(key, "trim", None)
    return probes


def spread(search: Search, max_probes: int) -> int:
    """Points of less recompute for more memory: the best plan keeping, in growing
    groups, the nodes it recomputes, those saving the most MACs per byte first; and
    the plan that recomputes only operators without MACs."""
    best = search.best_kept
    if best is None:
        return 0
    recomputed = search.mirrored.get(best, ())
    per_node = search.gstats.per_node
    ranked = sorted((i for i in recomputed if per_node.get(i) and per_node[i].macs),
                    key=lambda i: (-per_node[i].macs / max(per_node[i].activation_bytes, 1),
                                   i))
    plans: list[tuple[int, ...]] = []
    count = 1
    while count < len(ranked):
        plans.append(tuple(sorted(set(best) | set(ranked[:count]))))
        count *= 2
    plans.append(tuple(sorted(set(best) | set(ranked))))
    cheap_only = [i for i in search.doc.order() if i in per_node and per_node[i].macs]
    plans.append(tuple(sorted(set(best) | set(cheap_only))))
    probes = 0
    for key in plans:
        if probes >= max_probes or search.out_of_time("front"):
            break
        if key not in search.costs:
            probes += 1
            search.cost_of(key, "front", None)
    return probes


def _by_macs(search: Search, nodes: Iterable[int]) -> list[int]:
    per_node = search.gstats.per_node
    return sorted((i for i in nodes if per_node.get(i) and per_node[i].macs),
                  key=lambda i: (-per_node[i].macs, i))


# ------------------------------------------------------------------ the front
def front(probes: Iterable[Probe]) -> list[Probe]:
    """The probes no other beats on both memory and recompute, by memory (ties: the
    first found).  Probes without a measured recompute are left out, and so are plans
    needing as much as the unplanned graph or more (it recomputes nothing)."""
    probes = list(probes)
    unplanned = min((p.cost_mb for p in probes if p.kind == "baseline" and p.ok
                     and p.cost_mb is not None), default=None)
    points = sorted((p for p in probes if p.ok and p.cost_mb is not None
                     and p.kind != "baseline" and p.recompute_macs is not None
                     and (unplanned is None or p.cost_mb < unplanned)),
                    key=lambda p: (p.cost_mb, p.recompute_macs))
    out: list[Probe] = []
    for p in points:
        if not out or p.recompute_macs < out[-1].recompute_macs:  # type: ignore[operator]
            out.append(p)
    return out


def least_recompute_under(probes: Iterable[Probe], budget_mb: float) -> Probe | None:
    """The plan that recomputes least among those needing at most ``budget_mb``."""
    fits = [p for p in front(probes) if p.cost_mb is not None and p.cost_mb <= budget_mb]
    return min(fits, key=lambda p: (p.recompute_macs, p.cost_mb)) if fits else None


def pick_within(probes: Iterable[Probe], budget_mb: float) -> Probe:
    """:func:`least_recompute_under`, or one line saying that no plan fits."""
    probe = least_recompute_under(probes, budget_mb)
    if probe is None:
        least = min((p.cost_mb or 0.0 for p in front(probes)), default=None)
        raise UserError(f"no plan needs {budget_mb:,.0f} MB or less" + (
            f"; the least is {least:,.0f} MB" if least is not None else ""))
    return probe


def cut_words(result: PlanResult) -> str:
    """What a search cut by its safety net means for its plan ("" for a whole one)."""
    if result.complete:
        return ""
    return (f"The search was cut by its safety net ({result.time_limit:,.0f} s) in its "
            f"{result.cut_in}, on a machine too slow or too busy for it: this is the best "
            f"plan found by then (never worse than its solver's), and another run may "
            f"find a better one.")


def describe(result: PlanResult, plan: Plan) -> str:
    """A plan in words: memory against the unplanned graph, recompute, time, what
    MXNet's figure leaves out, and a search cut by its safety net."""
    base, cost = result.baseline_mb, plan.cost_mb
    change = (cost - base) / base if base else 0.0
    share = plan.recompute_share
    if plan.recompute_macs == 0 and cost >= base:
        words = (f"Training activations need {base:,.0f} MB without a plan, and this "
                 f"point is that graph: nothing is recomputed.")
    else:
        words = (f"Training activations need {base:,.0f} MB without a plan; this plan needs "
                 f"{cost:,.0f} MB ({change:+.0%}) and recomputes {share:.0%} of the forward "
                 f"pass, about {share / 3:+.0%} time per iteration (a training step is about "
                 f"three forward passes).")
    if result.costed_by != "mxnet":
        words += (" These figures are the memory model's (MXNet does not run here): "
                  "within 0.1 % of MXNet's own report without a plan, up to 13 % below "
                  "it with one (the model zoo's networks).")
    if result.state_bytes:
        words += (f" Parameters and their gradients come on top "
                  f"({human_bytes(result.state_bytes)}"
                  f" each), and the optimizer's state (SGD with momentum: one more copy; "
                  f"Adam: two).")
    cut = cut_words(result)
    return f"{words} {cut}" if cut else words


# ------------------------------------------------------------------ moves
def sweep_thresholds(search: Search, points: int) -> list[int]:
    """Thresholds on a geometric grid up to the whole activation size."""
    total_mb = sum(float32_bytes(s) for s in search.by_entry.values()) / MB
    low = max(1.0, total_mb / max(8 * len(search.stages), 1))
    return [int(low * (total_mb / low) ** (k / max(points - 1, 1))) for k in range(points)]


def sweep(search: Search, points: int) -> None:
    """:func:`sweep_thresholds` costed by MXNet; plans that tag the same nodes are
    costed once."""
    for t in sweep_thresholds(search, points):
        kept, _, tags = search.threshold_plan(t)
        search.cost_of(kept, "threshold", t, tags)


def climb(search: Search, max_probes: int, candidates: Sequence[int] | None = None,
          wide: bool = False) -> int:
    """First-improvement hill climbing on the kept set, with the cost oracle: move one
    kept node to a nearby candidate, drop one, or keep one more (or an adjacent pair).
    Candidates are the stage nodes in graph order (or ``candidates``).  ``wide``: the
    moves of a climb that has stopped -- one kept node moved 4-8 places, two
    neighbouring kept nodes shifted together, one kept node moved and its neighbour
    dropped.  Returns the probes it spent (the safety net aside, a count only)."""
    order = list(candidates) if candidates is not None else \
        [i for i in search.doc.order() if i in search.stages]
    index = {n: k for k, n in enumerate(order)}
    probes = 0
    improved = True
    while improved and search.best_kept is not None:
        improved = False
        kept = list(search.best_kept)
        moves = wide_moves(kept, order, index) if wide else \
            near_moves(kept, order, index)
        predict = search.predict
        if predict is not None:            # the most promising first, by the model
            fresh = [m for m in moves if m not in search.costs][:MODEL_MOVES]
            guesses = [predict(m) for m in fresh]
            known = [k for k, g in enumerate(guesses) if g is not None]
            known.sort(key=lambda k: (guesses[k], k))
            moves = [fresh[k] for k in known] + \
                [m for m, g in zip(fresh, guesses) if g is None]
        start_cost = search.best_cost
        for move in moves:
            if probes >= max_probes or search.out_of_time("climb"):
                return probes
            if move in search.costs:
                continue
            probes += 1
            search.cost_of(move, "local", None)
            if search.best_cost < start_cost - 0.5:
                improved = True
                break
    return probes


