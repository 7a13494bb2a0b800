"""The attribute editor: the selected node, its attributes, its name and its checkpoint
values."""
from mxexplorer.gui.panels.attributes.panel import AttributePanel

__all__ = ["AttributePanel"]
