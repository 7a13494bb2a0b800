"""SIGKILL during save, autosave and restore: what is on disk after the next start.

Each trial starts a child that works on a checkpoint pair (a Gluon ResNet-18 export,
45 MB of weights) and reports each step it completed; the child is killed at a random
moment; then the next start's tidying runs (``tidying.tidy``, as the window does) and the
files are checked:

* save: the child renames a layer (its parameters follow, so the checkpoint's keys
  change) and saves over the pair, again and again.  The pair on disk must be whole
  (the symbol's parameters are exactly the checkpoint's keys, same shapes), of the last
  generation reported saved or the one after it, with no temporary left.
* autosave: the child writes recovery files, again and again: the newest orphan must
  read back, of the last generation reported or the one after.
* restore: the child restores an orphan and saves it over the pair, then drops the
  orphan: afterwards either the orphan is still there or the pair holds its edits.
* race: as save, but after the kill and before the next start another program (a
  training script: ``mx.model.save_checkpoint``) writes the pair, with a mark of its own
  (an attribute on the first convolution, a changed bias).  The next start must leave
  the other program's pair on disk, whole, with its mark: a committed save the kill
  cut short is kept beside it (``-recovered-`` copies, checked whole), never replayed
  over it (a "stale replay").

Every tenth trial also loads the pair with MXNet and binds it.

    python benchmarks/kill_saves.py [--trials 120] [--seed 1]

    python benchmarks/kill_saves.py --modes race --trials 100

Prints a table: trials, mismatched pairs, stray temporaries, edits lost, the other
program's changes lost, stale replays (all must be 0), and the save results kept aside.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)

CHILD = r'''
import os, sys, time
sys.path.insert(0, {root!r})
from mxexplorer.core.graph import edits
from mxexplorer.core.runtime import files
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.recovery import RecoveryStore

mode, path, saves, recovery = sys.argv[1:5]
saves = saves or None          # "" (--no-journal): saves without their journal
doc = GraphDocument.open(path)
store = RecoveryStore(recovery)

def generation(doc):
    name = next(n.name for n in doc.nodes if n.name.endswith("conv0_fwd")
                and n.name.startswith("g"))
    return int(name.split("_")[0][1:])

gen = generation(doc)
def conv():
    return next(i for i, n in enumerate(doc.nodes)
                if n.name.endswith("conv0_fwd") and n.name.startswith("g"))
if mode in ("save", "race"):
    while True:
        gen += 1
        edits.RenameNodeEdit(conv(), f"g{{gen}}_conv0_fwd").apply(doc)
        doc.save(path, journal_dir=saves)
        doc = GraphDocument.open(path)
        print("saved", gen, flush=True)
elif mode == "autosave":
    key = store.new_key()
    while True:
        gen += 1
        edits.RenameNodeEdit(conv(), f"g{{gen}}_conv0_fwd").apply(doc)
        store.write(key, doc)
        print("saved", gen, flush=True)
elif mode == "restore":
    orphan = store.orphans()[0]
    restored = store.restore(orphan)
    restored.save(path, journal_dir=saves)
    print("saved", orphan.data["graph"]["nodes"][0]["name"], flush=True)
    store.discard(orphan)
    print("discarded", flush=True)
'''


def _export(folder: str) -> str:
    import mxnet as mx
    from mxnet.gluon.model_zoo import vision

    net = vision.get_model("resnet18_v1", pretrained=False)
    net.initialize()
    net.hybridize()
    net(mx.nd.zeros((1, 3, 64, 64)))
    prefix = os.path.join(folder, "net")
    net.export(prefix)
    path = prefix + "-symbol.json"
    # generation 0: the first convolution is named g0_conv0_fwd (its weight follows)
    from mxexplorer.core.graph import edits
    from mxexplorer.core.graph.document import GraphDocument

    doc = GraphDocument.open(path)
    conv = next(i for i, n in enumerate(doc.nodes) if n.name.endswith("conv0_fwd"))
    edits.RenameNodeEdit(conv, "g0_conv0_fwd").apply(doc)
    doc.save(path)
    return path


def _generation(doc) -> int:
    name = next(n.name for n in doc.nodes if n.name.endswith("conv0_fwd")
                and n.name.startswith("g"))
    return int(name.split("_")[0][1:])


def _pair_whole(path: str, with_mxnet: bool) -> str:
    """'' when the symbol's parameters are exactly the checkpoint's (names and
    shapes), else what is wrong."""
    from mxexplorer.core.graph import params_file
    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.graph.kinds import NodeKind

    doc = GraphDocument.open(path)
    kinds = doc.kinds()
    wanted = {doc.nodes[i].name for i, k in enumerate(kinds)
              if k in (NodeKind.PARAM, NodeKind.AUX)}
    have = {p.name: p.shape for p in params_file.read_params_index(doc.params_path)}
    if wanted != set(have):
        return f"keys differ: {sorted(wanted ^ set(have))[:4]}"
    if with_mxnet:
        import mxnet as mx

        sym, args, aux = mx.model.load_checkpoint(path[:-len("-symbol.json")], 0)
        exe = sym.simple_bind(mx.cpu(), grad_req="null", data=(1, 3, 64, 64))
        exe.copy_params_from(args, aux)
    return ""


def _other_program_writes(path: str, mark: int) -> None:
    """A training script's checkpoint over the pair: MXNet's own writer (in place, not
    atomic), its own graph (the export this run began with, kept in ``reference/``)
    with a mark on its first convolution and one bias set to ``mark``."""
    import mxnet as mx

    prefix = path[:-len("-symbol.json")]
    reference = os.path.join(os.path.dirname(os.path.dirname(path)), "reference", "net")
    sym, args, aux = mx.model.load_checkpoint(reference, 0)
    conf = json.loads(sym.tojson())
    conv = next(n for n in conf["nodes"] if n["name"].endswith("conv0_fwd"))
    conv.setdefault("attrs", {})["__other__"] = str(mark)
    bias = next(k for k in sorted(args) if k.endswith("_bias"))
    args[bias] = mx.nd.full(args[bias].shape, mark)
    mx.model.save_checkpoint(prefix, 0, mx.sym.load_json(json.dumps(conf)), args, aux)


def _mark_on_disk(path: str) -> tuple[str | None, float | None]:
    import mxnet as mx

    with open(path) as fh:
        conf = json.load(fh)
    conv = next(n for n in conf["nodes"] if n["name"].endswith("conv0_fwd"))
    arrays = mx.nd.load(path.replace("-symbol.json", "-0000.params"))
    bias = next(k for k in sorted(arrays) if k.startswith("arg:") and k.endswith("_bias"))
    return conv.get("attrs", {}).get("__other__"), float(arrays[bias].asnumpy().flat[0])


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def _temps(folder: str) -> list[str]:
    if not os.path.isdir(folder):
        return []
    return [n for n in os.listdir(folder) if ".mxexplorer-" in n and n.endswith(".tmp")]


def trial(mode: str, work: str, path: str, kill_after: float, check_mxnet: bool,
          journal: bool = True) -> dict:
    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.graph.recovery import RecoveryStore
    from mxexplorer.core.runtime import tidying

    folder = os.path.dirname(path)
    saves, recovery = os.path.join(work, "saves"), os.path.join(work, "recovery")
    store = RecoveryStore(recovery)
    before = _generation(GraphDocument.open(path))
    if mode == "restore":
        # an orphan to restore: the pair one generation on, written by a "dead" run
        doc = GraphDocument.open(path)
        conv = next(i for i, n in enumerate(doc.nodes) if n.name.endswith("conv0_fwd")
                    and n.name.startswith("g"))
        from mxexplorer.core.graph import edits

        edits.RenameNodeEdit(conv, f"g{_generation(doc) + 1}_conv0_fwd").apply(doc)
        file = store.write("1-1", doc)
        with open(file) as fh:             # written by a run that is gone: an orphan
            record = json.load(fh)
        record.update(pid=_dead_pid(), started=None)
        with open(file, "w") as fh:
            json.dump(record, fh)
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(root=HERE), mode, path,
                              saves if journal else "", recovery], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    time.sleep(kill_after)
    child.send_signal(signal.SIGKILL)
    out, err = child.communicate()
    reported = [line.split() for line in out.splitlines()]
    saved = [int(w[1]) for w in reported if w[0] == "saved" and w[1].isdigit()]
    mark = 0
    if mode == "race":                     # another program writes between kill and start
        mark = random.randrange(1000, 10 ** 6)
        _other_program_writes(path, mark)
    # the next start
    said = tidying.tidy(saves, [folder, recovery])
    result = {"mode": mode, "mismatched": 0, "temps": 0, "lost": 0, "theirs_lost": 0,
              "stale": 0, "kept": 0, "note": ""}
    if mode == "race":
        got = _mark_on_disk(path)
        if got != (str(mark), float(mark)):
            result["theirs_lost"], result["note"] = 1, f"mark {mark}, on disk {got}"
        # the other program's graph is the export's (generation 0): any other on disk
        # is the killed save's, replayed over it
        if _generation(GraphDocument.open(path)) != 0:
            result["stale"] = 1
        for kept in [k for t in said for k in getattr(t, "kept", ())]:
            if kept.endswith("-symbol.json"):
                result["kept"] += 1
                # killed between the renames: its .params was in place already (and
                # the other program wrote over it): the symbol is kept alone
                why = _pair_whole(kept, False) if os.path.exists(
                    kept.replace("-symbol.json", "-0000.params")) else ""
                if why:
                    result["mismatched"], result["note"] = 1, "kept copy: " + why
            os.unlink(kept)
    temps = _temps(folder) + _temps(recovery)
    result["temps"] = len(temps)
    why = _pair_whole(path, check_mxnet)
    if why:
        result["mismatched"], result["note"] = 1, why
    doc = GraphDocument.open(path)
    on_disk = _generation(doc)
    if mode == "save" and saved and on_disk not in (saved[-1], saved[-1] + 1):
        result["lost"], result["note"] = 1, f"saved {saved[-1]}, on disk {on_disk}"
    if mode == "autosave":
        orphans = store.orphans()
        newest = orphans[0] if orphans else None
        if saved:
            got = _generation(store.restore(newest)) if newest else None
            if got not in (saved[-1], saved[-1] + 1):
                result["lost"], result["note"] = 1, f"autosaved {saved[-1]}, kept {got}"
        for orphan in orphans:
            store.discard(orphan)
    if mode == "restore":
        orphans = store.orphans()
        if not orphans and on_disk != before + 1:      # neither offered nor saved
            result["lost"], result["note"] = 1, f"restored {before + 1}, on disk {on_disk}"
        for orphan in orphans:            # the next trial starts clean
            store.discard(orphan)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=120)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--modes", default="save,autosave,restore,race",
                        help="comma-separated trial modes, taken in turn")
    parser.add_argument("--no-journal", action="store_true",
                        help="save without the journal (what the pair save was before: "
                             "shows what the journal prevents)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="mxexplorer-kills-")
    try:
        model = os.path.join(work, "model")
        os.makedirs(model)
        path = _export(model)
        os.makedirs(os.path.join(work, "reference"))
        for name in ("net-symbol.json", "net-0000.params"):
            shutil.copy(os.path.join(model, name), os.path.join(work, "reference", name))
        # how long one save takes here: kills land anywhere in two of them
        from mxexplorer.core.graph.document import GraphDocument

        started = time.perf_counter()
        GraphDocument.open(path).save(path, journal_dir=os.path.join(work, "saves"))
        span = max(0.2, 2 * (time.perf_counter() - started)) + 0.6   # + the child's start
        rows = []
        modes = args.modes.split(",")
        for k in range(args.trials):
            mode = modes[k % len(modes)]
            rows.append(trial(mode, work, path, rng.uniform(0.3, 0.3 + span), k % 10 == 0,
                              not args.no_journal))
            bad = [r for r in rows[-1:] if r["mismatched"] or r["temps"] or r["lost"]
                   or r["theirs_lost"] or r["stale"]]
            if bad:
                print("  trial", k, bad[0], flush=True)
        print(f"{'mode':<10} {'kills':>6} {'mismatched pairs':>17} {'stray temporaries':>18} "
              f"{'edits lost':>11} {'theirs lost':>12} {'stale replays':>14} "
              f"{'kept aside':>11}")
        for mode in modes + ["all"]:
            sel = [r for r in rows if mode in ("all", r["mode"])]
            print(f"{mode:<10} {len(sel):>6} {sum(r['mismatched'] for r in sel):>17} "
                  f"{sum(r['temps'] for r in sel):>18} {sum(r['lost'] for r in sel):>11} "
                  f"{sum(r['theirs_lost'] for r in sel):>12} "
                  f"{sum(r['stale'] for r in sel):>14} {sum(r['kept'] for r in sel):>11}")
        print(f"(kills at a uniform moment within {span:.1f} s of each start; "
              f"{json.dumps({'seed': args.seed})})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
