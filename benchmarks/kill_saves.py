"""SIGKILL during save, autosave and restore: what is on disk after the next start.

Each trial starts a child that works on a checkpoint pair (a Gluon ResNet-18 export,
45 MB of weights) and reports each step it completed; the child is killed at a random
moment; then the next start's tidying runs (``files.tidy``, as the window does) and the
files are checked:

* save: the child renames a layer (its parameters follow, so the checkpoint's keys
  change) and saves over the pair, again and again.  The pair on disk must be whole
  (the symbol's parameters are exactly the checkpoint's keys, same shapes), of the last
  generation reported saved or the one after it, with no temporary left.
* autosave: the child writes recovery files, again and again: the newest orphan must
  read back, of the last generation reported or the one after.
* restore: the child restores an orphan and saves it over the pair, then drops the
  orphan: afterwards either the orphan is still there or the pair holds its edits.

Every tenth trial also loads the pair with MXNet and binds it.

    python benchmarks/kill_saves.py [--trials 120] [--seed 1]

Prints a table: trials, mismatched pairs, stray temporaries, edits lost (all must be 0).
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
if mode == "save":
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
    from mxexplorer.core.runtime import files

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
    # the next start
    files.tidy(saves, [folder, recovery])
    result = {"mode": mode, "mismatched": 0, "temps": 0, "lost": 0, "note": ""}
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
        # how long one save takes here: kills land anywhere in two of them
        from mxexplorer.core.graph.document import GraphDocument

        started = time.perf_counter()
        GraphDocument.open(path).save(path, journal_dir=os.path.join(work, "saves"))
        span = max(0.2, 2 * (time.perf_counter() - started)) + 0.6   # + the child's start
        rows = []
        for k in range(args.trials):
            mode = ("save", "autosave", "restore")[k % 3]
            rows.append(trial(mode, work, path, rng.uniform(0.3, 0.3 + span), k % 10 == 0,
                              not args.no_journal))
            bad = [r for r in rows[-1:] if r["mismatched"] or r["temps"] or r["lost"]]
            if bad:
                print("  trial", k, bad[0], flush=True)
        print(f"{'mode':<10} {'kills':>6} {'mismatched pairs':>17} {'stray temporaries':>18} "
              f"{'edits lost':>11}")
        for mode in ("save", "autosave", "restore", "all"):
            sel = [r for r in rows if mode in ("all", r["mode"])]
            print(f"{mode:<10} {len(sel):>6} {sum(r['mismatched'] for r in sel):>17} "
                  f"{sum(r['temps'] for r in sel):>18} {sum(r['lost'] for r in sel):>11}")
        print(f"(kills at a uniform moment within {span:.1f} s of each start; "
              f"{json.dumps({'seed': args.seed})})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
