"""The input shapes form: the data inputs' shapes in, inference started, its verdict shown."""
from mxexplorer.gui.panels.inputs.panel import ShapeFormPanel

__all__ = ["ShapeFormPanel"]
