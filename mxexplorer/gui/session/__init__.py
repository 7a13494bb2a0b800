"""One open document and the small models its panels agree on.

:class:`DocumentSession` owns the document, its undo stack and the selection, and is
made of models that each carry their own signals:

- ``inputs`` (:class:`Inputs`): the data inputs' shapes and dtype;
- ``analysis`` (:class:`Analysis`): shape inference and statistics, and whether they
  still describe the document;
- ``plans`` (:class:`PlanState`): the memory plan and its selected point, the largest
  batch and the benchmark, one job slot per result;
- ``insight`` (:class:`~mxexplorer.gui.insight.Insight`): colour metric and profile;
- ``file`` (:class:`DocumentFile`): modified or not, saving and the recovery file.

Panels are built from a session and read these; they never read each other.
"""
from mxexplorer.gui.session.analysis import STALE_EDIT, STALE_SHAPES, Analysis
from mxexplorer.gui.session.file import DocumentFile
from mxexplorer.gui.session.inputs import Inputs
from mxexplorer.gui.session.plans import PlanState
from mxexplorer.gui.session.session import DocumentSession

__all__ = ["Analysis", "DocumentFile", "DocumentSession", "Inputs", "PlanState",
           "STALE_EDIT", "STALE_SHAPES"]
