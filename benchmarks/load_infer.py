"""Print load and shape-inference times for a ResNet-152 export and a 1001-layer ResNet.

Targets on a 2-core machine: JSON load under 50 ms (ResNet-152) and 300 ms
(ResNet-1001); inference under 200 ms and 1 s.  Run: ``python benchmarks/load_infer.py``.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.nets import network  # noqa: E402


def best_of(fn, repeat: int = 5) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def main() -> None:
    from mxexplorer.core.analysis import stats
    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.runtime.mxnet_env import import_mxnet

    cases = [("resnet152_v1", {"data": (32, 3, 224, 224)}, 0.050, 0.200),
             ("resnet1001", {"data": (64, 3, 32, 32)}, 0.300, 1.0)]
    import subprocess

    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import mxnet"], check=True)
    print(f"python + import mxnet in a fresh process: {time.perf_counter() - t0:.2f} s "
          "(the GUI does this in the background)")
    paths = {name: network(name) for name, *_ in cases}
    import_mxnet()
    print(f"{'network':<14} {'internals':>9} {'load (min/med)':>18} {'target':>7} "
          f"{'infer+stats (min/med)':>22} {'target':>7}")
    for name, given, load_target, infer_target in cases:
        path = paths[name]

        def load(path: str = path) -> GraphDocument:
            doc = GraphDocument.open(path, use_mxnet=False)
            doc.internals()
            doc.kinds()
            return doc

        lmin, lmed = best_of(load)
        doc = load()

        def infer(doc: GraphDocument = doc, given: dict = given) -> None:
            # what the GUI's worker runs: snapshot -> shapes + statistics
            assert stats.analyze(doc.snapshot(), given).shapes.error is None

        imin, imed = best_of(infer)
        print(f"{name:<14} {len(doc.internals()):>9} {lmin * 1e3:>8.0f}/{lmed * 1e3:<6.0f} ms "
              f"{load_target * 1e3:>5.0f}ms {imin * 1e3:>11.0f}/{imed * 1e3:<6.0f} ms "
              f"{infer_target * 1e3:>5.0f}ms")


if __name__ == "__main__":
    main()
