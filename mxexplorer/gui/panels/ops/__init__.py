"""The op summary: memory, MACs, parameters and time by operator type."""
from mxexplorer.gui.panels.ops.panel import OpSummaryPanel

__all__ = ["OpSummaryPanel"]
