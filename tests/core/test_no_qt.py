"""The core never imports Qt, and loading a document never imports MXNet."""
from __future__ import annotations

import pkgutil
import subprocess
import sys

import mxexplorer.core


def test_core_modules_import_without_qt() -> None:
    names = [m.name for m in pkgutil.walk_packages(mxexplorer.core.__path__, "mxexplorer.core.")]
    assert "mxexplorer.core.graph.document" in names and len(names) > 50
    code = ("import sys, importlib\n"
            f"for n in {names!r}: importlib.import_module(n)\n"
            "qt = ('PySide6', 'pyqtgraph', 'shiboken6')\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in qt"
            " or m.startswith('mxexplorer.gui')]\n"
            "print(bad); sys.exit(1 if bad else 0)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_opening_a_document_does_not_import_mxnet(tmp_path) -> None:
    from tests.conftest import EXAMPLES

    code = ("import sys\n"
            "from mxexplorer.core.graph.document import GraphDocument\n"
            f"doc = GraphDocument.open({str(EXAMPLES / 'resnet18_v1-symbol.json')!r})\n"
            "assert len(doc.internals()) == 171, len(doc.internals())\n"
            "sys.exit(1 if 'mxnet' in sys.modules else 0)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
