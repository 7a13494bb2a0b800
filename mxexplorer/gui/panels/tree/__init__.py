"""The internals tree: every output of the graph, grouped and searchable, with its figures."""
from mxexplorer.gui.panels.tree.panel import InternalsPanel

__all__ = ["InternalsPanel"]
