"""The memory planner: plan, pick a point, apply, benchmark, the largest batch, and their
plots."""
from mxexplorer.gui.panels.planner.panel import MemoryPanel

__all__ = ["MemoryPanel"]
