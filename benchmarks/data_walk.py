"""The two data walks of issue 25, measured: which of our modules and which threads an
action passes through, and how many times each panel is woken, until the window is
quiet again.

Walk 1 (edit): in the Attributes panel, the first Pooling's ``kernel`` is changed
((3, 3) -> (2, 2), so every shape after it changes) by typing into its row, then the
window runs until every panel shows it (inference done, the graph laid out and idle).
Walk 2 (plan): Plan (CPU, automatic stages), click a point of the search (the
second-best), Apply, Export the planned JSON.

A "wake-up" is a slot of a panel run from outside it (a signal delivered, a timer, the
window or the session calling it): a call of a panel's ``_on_*`` method or of one of
its refresh entry points (:data:`REFRESH`) whose caller is not the panel's own code.
Qt's calls into models and items to paint (``data``, ``paint`` ...) are not counted.
Threads are counted by identity (the GUI thread, each worker) from a profile hook
installed in every worker's job.

Run: ``python benchmarks/data_walk.py [FILE]`` (offscreen; default: the bundled
resnet18_v1 at batch 8).  Prints one table per walk; ``--json`` prints them as JSON.
"""
from __future__ import annotations

import collections
import json
import os
import sys
import tempfile
import threading
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "mxexplorer") + os.sep
DEFAULT = os.path.join(ROOT, "mxexplorer", "resources", "examples", "resnet18_v1-symbol.json")

#: panel of a module, by words in its dotted name (old and new layouts alike)
PANELS = (("tree", "tree"), ("inspector", "attributes"), ("attributes", "attributes"),
          ("param_stats", "attributes"), ("shape_form", "inputs"), ("inputs", "inputs"),
          ("op_summary", "ops"), ("ops", "ops"), ("graph", "graph"),
          ("memory", "planner"), ("plan_plot", "planner"), ("front_plot", "planner"),
          ("bench_view", "planner"), ("step_chart", "planner"), ("device_box", "planner"),
          ("planner", "planner"))

#: what the issue counted as redone: each call is the whole of that view done again
REDONE = frozenset({"_place_labels", "_restyle", "restyle", "_update_totals", "set_results",
                    "colour_graph", "fill", "_fill", "refresh", "rebuild", "_show_shapes"})

#: refresh entry points called by name from outside a panel
REFRESH = frozenset({"refresh", "fill", "relayout", "rebuild", "set_document", "restyle",
                     "update_view", "reset", "set_shapes", "apply_lod"})


def panel_of(module: str) -> str | None:
    if ".panels." not in module:
        return None
    tail = module.split(".panels.", 1)[1]
    for word, panel in PANELS:
        if tail.startswith(word) or f".{word}" in tail or word in tail.split(".")[0]:
            return panel
    return "other panel"


class Recorder:
    def __init__(self) -> None:
        self.on = False
        self.modules: set[str] = set()
        self.threads: set[int] = set()
        self.wakeups: collections.Counter[str] = collections.Counter()
        self.slots: collections.Counter[str] = collections.Counter()
        self.workers: list[str] = []
        self.calls: collections.Counter[tuple[str, str]] = collections.Counter()
        self.module_names: dict[str, str] = {}
        self.lock = threading.Lock()

    def _module(self, filename: str) -> str | None:
        name = self.module_names.get(filename)
        if name is None:
            if not filename.startswith(PACKAGE):
                name = ""
            else:
                rel = filename[len(PACKAGE) - len("mxexplorer") - 1:-3]
                name = rel.replace(os.sep, ".").removesuffix(".__init__")
            self.module_names[filename] = name
        return name or None

    def hook(self, frame: Any, event: str, arg: Any) -> None:
        if not self.on or event != "call":
            return
        module = self._module(frame.f_code.co_filename)
        if module is None:
            return
        with self.lock:
            self.modules.add(module)
            self.calls[(module, frame.f_code.co_name)] += 1
            self.threads.add(threading.get_ident())
            panel = panel_of(module)
            if panel is not None:
                back = frame.f_back
                caller = self._module(back.f_code.co_filename) if back is not None else None
                name = frame.f_code.co_name
                if (caller is None or panel_of(caller) != panel) and \
                        (name.startswith("_on_") or name in REFRESH):
                    self.wakeups[panel] += 1
                    self.slots[f"{panel}: {name}"] += 1

    def reset(self) -> None:
        self.modules.clear()
        self.threads.clear()
        self.wakeups.clear()
        self.slots.clear()
        self.workers.clear()
        self.calls.clear()


def _worker_names(rec: Recorder) -> None:
    """Every worker's job installs the hook in its own thread (profile hooks are per
    thread, and QThreads are not threading.Thread)."""
    from mxexplorer.gui import workers

    start = workers.start

    def hooked_start(parent: Any, worker: Any) -> Any:
        fn = worker._fn
        if rec.on:
            inner = getattr(fn, "func", fn)
            rec.workers.append(getattr(inner, "__qualname__", type(inner).__name__))

        def job(*args: Any) -> Any:
            sys.setprofile(rec.hook)
            try:
                return fn(*args)
            finally:
                sys.setprofile(None)

        worker._fn = job
        return start(parent, worker)

    workers.start = hooked_start  # type: ignore[assignment]


def main(argv: list[str]) -> None:
    as_json = "--json" in argv
    args = [a for a in argv if not a.startswith("--")]
    path = args[0] if args else DEFAULT
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt

    from mxexplorer.gui.app import configure_threads, ensure_app
    from mxexplorer.gui.settings import Settings
    try:
        from mxexplorer.gui.window.main_window import MainWindow
    except ImportError:                  # before issue 25 (to measure what it changed)
        from mxexplorer.gui.main_window import MainWindow  # type: ignore[no-redef]

    rec = Recorder()
    _worker_names(rec)
    app = ensure_app()
    configure_threads(app)
    folder = tempfile.mkdtemp()
    window = MainWindow(Settings(os.path.join(folder, "s.ini")))
    window.resize(1400, 860)
    getattr(window, "files", window).open_path(path)   # (before issue 25: on the window)
    window.show()
    sys.setprofile(rec.hook)

    def busy() -> bool:
        s = window.session
        if s is None or not window.mxnet_ready or window.memory is None:
            return True
        # the session before issue 25 had one slot per job kind, named on the session
        inference = getattr(s, "inference", None) or s.analysis.job
        planner = getattr(s, "planner", None) or s.plans
        validating = getattr(window.inspector, "validating", False)
        return inference.busy or planner.busy or validating or window.graph_pane.busy_now

    def settle(quiet_s: float = 1.5, timeout: float = 300.0) -> None:
        deadline = time.monotonic() + timeout
        quiet_since = None
        while time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.003)
            if busy():
                quiet_since = None
            elif quiet_since is None:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > quiet_s:
                return
        raise SystemExit("the window did not settle")

    settle()
    window.shape_form.set_shapes({"data": (8, 3, 224, 224)})
    settle()
    doc = window.document
    assert doc is not None
    pool = [i for i, n in enumerate(doc.nodes) if n.op == "Pooling"][0]
    results = {}

    # walk 1: an attribute edited in the Attributes panel, until every panel shows it
    window.selection.set([pool])
    settle(0.3)
    table = window.inspector.table
    row = next(r for r in range(table.rowCount())
               if table.item(r, 0).data(Qt.ItemDataRole.UserRole) == "kernel")
    rec.reset()
    rec.on = True
    start = time.perf_counter()
    table.item(row, 1).setText("(2, 2)")
    settle()
    rec.on = False
    assert doc.nodes[pool].attrs["kernel"] == "(2, 2)", "the edit did not land"
    s = window.session
    fresh = s.fresh_shapes() if hasattr(s, "fresh_shapes") else s.analysis.fresh_shapes()
    assert fresh is not None and fresh.error is None, "no fresh shapes after the edit"
    results["edit"] = _summary(rec, time.perf_counter() - start - 1.5)

    # walk 2: Plan, pick a point, Apply, Export
    panel = window.memory
    panel.stages.setCurrentIndex(panel.stages.findData("auto"))
    rec.reset()
    rec.on = True
    start = time.perf_counter()
    panel.start_button.click()
    settle()
    session = window.session
    plan = session.plans.result if hasattr(session, "plans") else session.plan
    assert plan is not None, f"no plan: {panel.status.text()} {panel.start_button.isEnabled()}"
    probes = sorted((p for p in plan.probes if p.ok and p.cost_mb is not None),
                    key=lambda p: p.cost_mb)
    if len(probes) > 1:
        panel._on_probe_clicked(probes[1])   # what a click on the point delivers
    settle(0.3)
    panel.apply_button.click()
    settle(0.3)
    out = os.path.join(folder, "planned-symbol.json")
    panel.export_to(out)
    settle(0.3)
    rec.on = False
    assert os.path.exists(out), "no export"
    results["plan"] = _summary(rec, time.perf_counter() - start - 1.5 - 0.6)
    sys.setprofile(None)
    if as_json:
        print(json.dumps(results, indent=1))
    else:
        for walk, r in results.items():
            print(f"walk {walk}: {r['modules']} modules ({r['gui_modules']} gui, "
                  f"{r['core_modules']} core), {r['functions']} functions, {r['calls']:,} "
                  f"calls; GUI thread + workers {r['workers']}; about {r['seconds']:.1f} s")
            print("  wake-ups per panel: " + ", ".join(f"{k} {v}" for k, v in
                                                      sorted(r["wakeups"].items())))
            print("  views redone: " + ", ".join(f"{k} {v}" for k, v in r["redone"].items()))
    window.session.undo_stack.setClean()
    window.close()


def _summary(rec: Recorder, seconds: float) -> dict[str, Any]:
    mods = sorted(rec.modules)
    return {"modules": len(mods), "gui_modules": sum(".gui." in m for m in mods),
            "core_modules": sum(".core." in m for m in mods),
            "threads": len(rec.threads), "wakeups": dict(rec.wakeups),
            "workers": dict(collections.Counter(rec.workers)),
            "functions": len(rec.calls), "calls": sum(rec.calls.values()),
            "redone": {f"{m.rsplit('.', 1)[-1]}.{f}": n for (m, f), n in sorted(rec.calls.items())
                       if f in REDONE},
            "slots": dict(sorted(rec.slots.items())),
            "seconds": max(seconds, 0.0), "module_list": mods}


if __name__ == "__main__":
    main(sys.argv[1:])
