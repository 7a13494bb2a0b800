"""Shared fixtures.  Qt runs offscreen; settings never touch the user's files."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MXNET_SUBGRAPH_VERBOSE", "0")
# never hand files to (or listen in place of) the user's running mxexplorer
os.environ["MXEXPLORER_INSTANCE"] = f"mxexplorer-test-{os.getpid()}"

import pathlib  # noqa: E402

import pytest  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
DATA = pathlib.Path(__file__).resolve().parent / "data"
EXAMPLES = REPO / "resources" / "examples"


@pytest.fixture
def mlp_copy(tmp_path):
    """A copy of the example checkpoint pair (symbol file + .params) in tmp_path."""
    import shutil

    for name in ("mlp-symbol.json", "mlp-0000.params"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return tmp_path / "mlp-symbol.json"


def dead_pid() -> int:
    """The pid of a process that has ended (for files "left by a crashed run")."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def corpus_files() -> list[pathlib.Path]:
    return sorted(p for p in CORPUS.glob("*.json")) if CORPUS.is_dir() else []


@pytest.fixture(scope="session")
def zoo(tmp_path_factory: pytest.TempPathFactory):
    """``zoo(name, size=224)`` -> path of a Gluon model-zoo export (random weights)."""
    import mxnet as mx
    from mxnet.gluon.model_zoo import vision

    folder = tmp_path_factory.mktemp("zoo")
    cache: dict[tuple[str, int], pathlib.Path] = {}

    def export(name: str, size: int = 224) -> pathlib.Path:
        key = (name, size)
        if key not in cache:
            net = vision.get_model(name, pretrained=False)
            net.initialize()
            net.hybridize()
            net(mx.nd.zeros((1, 3, size, size)))
            prefix = folder / f"{name}_{size}"
            net.export(str(prefix))
            cache[key] = pathlib.Path(f"{prefix}-symbol.json")
        return cache[key]

    return export
