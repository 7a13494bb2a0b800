"""The graph pane: the network laid out by dot (or our layered layout), drawn, styled and
searched."""
from mxexplorer.gui.panels.graph.pane import GraphPane

__all__ = ["GraphPane"]
