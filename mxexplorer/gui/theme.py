"""Light and dark: the colours of the window, the graph and the plots, following the
system's colour scheme (Qt 6.5+ ``QStyleHints.colorScheme``) unless the user picks one
in View > Theme.

Qt widgets take the palette; what Qt does not colour (the graph scene, pyqtgraph,
which ignores the palette, and status words in red, green or amber) reads the
current :class:`Theme` and follows ``themes().changed``.  A label gets a status
colour with :func:`set_role`, which the manager re-applies on every change.
"""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

PREFERENCES = ("system", "light", "dark")
_ROLE = "mx_role"           # widget property naming its status colour


@dataclass(frozen=True)
class Theme:
    name: str
    dark: bool
    canvas: str          # the graph's background
    edge: str            # edges and arrowheads
    label: str           # shapes on edges
    stale_label: str     # shapes of the graph before an edit
    selected: str        # the selection pen
    mirror_row: str      # tree rows of mirror stages
    recompute_row: str   # tree rows a plan recomputes
    stale_text: str      # figures of an older analysis
    plot_bg: str
    plot_fg: str
    legend_bg: str
    legend_border: str
    error: str
    good: str
    stale: str
    muted: str

    def colour(self, role: str) -> str:
        return str(getattr(self, role))


LIGHT = Theme("light", False, canvas="#fbfbfb", edge="#5a5a5a", label="#404040",
              stale_label="#b0b0b0", selected="#1769e0", mirror_row="#ffecb3",
              recompute_row="#ffd6aa", stale_text="#969696", plot_bg="#ffffff",
              plot_fg="#333333", legend_bg="#ffffff", legend_border="#cccccc",
              error="#b00000", good="#205020", stale="#8a6d00", muted="#666666")
DARK = Theme("dark", True, canvas="#1e1f22", edge="#a9adb3", label="#d0d3d8",
             stale_label="#6b6e73", selected="#4d9bff", mirror_row="#5a4614",
             recompute_row="#6b3b12", stale_text="#7d8086", plot_bg="#232427",
             plot_fg="#d0d3d8", legend_bg="#2b2d31", legend_border="#44474d",
             error="#ff7b72", good="#7ee787", stale="#e3b341", muted="#9da1a8")


def _dark_palette() -> QPalette:
    p = QPalette()
    base, window, text = QColor("#1e1f22"), QColor("#2b2d31"), QColor("#dfe1e5")
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        p.setColor(group, QPalette.ColorRole.Window, window)
        p.setColor(group, QPalette.ColorRole.WindowText, text)
        p.setColor(group, QPalette.ColorRole.Base, base)
        p.setColor(group, QPalette.ColorRole.AlternateBase, window)
        p.setColor(group, QPalette.ColorRole.ToolTipBase, window)
        p.setColor(group, QPalette.ColorRole.ToolTipText, text)
        p.setColor(group, QPalette.ColorRole.PlaceholderText, QColor("#8b8f96"))
        p.setColor(group, QPalette.ColorRole.Text, text)
        p.setColor(group, QPalette.ColorRole.Button, QColor("#33363b"))
        p.setColor(group, QPalette.ColorRole.ButtonText, text)
        p.setColor(group, QPalette.ColorRole.BrightText, QColor("#ff6b6b"))
        p.setColor(group, QPalette.ColorRole.Highlight, QColor("#2f6fd0"))
        p.setColor(group, QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
        p.setColor(group, QPalette.ColorRole.Link, QColor("#6aa6ff"))
        p.setColor(group, QPalette.ColorRole.Mid, QColor("#44474d"))
        p.setColor(group, QPalette.ColorRole.Dark, QColor("#17181a"))
        p.setColor(group, QPalette.ColorRole.Light, QColor("#4a4d53"))
    disabled = QColor("#6f737a")
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text,
                 QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Base, window)
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Button, window)
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Window, window)
    return p


class ThemeManager(QObject):
    """The process's theme.

    Signals
    -------
    changed(object): the new :class:`Theme`
    """

    changed = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.preference = "system"
        self.current: Theme = LIGHT
        self._light_palette: QPalette | None = None
        app = QGuiApplication.instance()
        if app is not None:
            QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_system_changed)

    def system_is_dark(self) -> bool:
        return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark

    def set_preference(self, preference: str) -> None:
        """"system", "light" or "dark" (anything else counts as "system")."""
        self.preference = preference if preference in PREFERENCES else "system"
        self.apply()

    def apply(self) -> None:
        dark = self.system_is_dark() if self.preference == "system" else \
            self.preference == "dark"
        theme = DARK if dark else LIGHT
        app = QApplication.instance()
        if isinstance(app, QApplication):
            if self._light_palette is None:
                self._light_palette = QPalette(app.palette())
            app.setPalette(_dark_palette() if dark else self._light_palette)
        changed = theme != self.current
        self.current = theme
        restyle_roles()
        if changed:
            self.changed.emit(theme)

    @Slot(Qt.ColorScheme)
    def _on_system_changed(self, scheme: Qt.ColorScheme) -> None:
        if self.preference == "system":
            self.apply()


_manager: ThemeManager | None = None


def themes() -> ThemeManager:
    """The process's theme manager (made on first use, on the GUI thread)."""
    global _manager
    if _manager is None:
        _manager = ThemeManager()
    return _manager


def current() -> Theme:
    return themes().current


def set_role(widget: QWidget, role: str | None) -> None:
    """Colour ``widget``'s text for a status: "error", "good", "stale", "muted" (None:
    the palette's own); kept through theme changes."""
    widget.setProperty(_ROLE, role or "")
    _restyle(widget)


def _restyle(widget: QWidget) -> None:
    role = widget.property(_ROLE)
    widget.setStyleSheet(f"color: {current().colour(role)};" if role else "")


def restyle_roles() -> None:
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return
    for widget in app.allWidgets():
        if widget.property(_ROLE):
            _restyle(widget)


def plot_with_words(owner: QWidget, plot: QWidget, text: str) -> QLabel:
    """Lay ``plot`` out in ``owner`` with wrapping words under it (returned).  The two
    share a splitter and the words scroll: long words once left a short dock's plot a
    40-pixel strip (the plot keeps three quarters, the user moves the handle)."""
    from PySide6.QtWidgets import QFrame, QScrollArea, QSplitter

    words = QLabel(text)
    words.setWordWrap(True)
    words.setTextFormat(Qt.TextFormat.PlainText)
    words.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
    scroll = QScrollArea()
    scroll.setWidget(words)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.setMinimumHeight(words.fontMetrics().lineSpacing() * 2 + 4)
    split = QSplitter(Qt.Orientation.Vertical)
    split.addWidget(plot)
    split.addWidget(scroll)
    split.setStretchFactor(0, 3)
    split.setStretchFactor(1, 1)
    split.setChildrenCollapsible(False)
    plot.setMinimumHeight(90)
    layout = QVBoxLayout(owner)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(split)
    return words


def style_plot(plot: object, theme: Theme) -> None:
    """Colour a pyqtgraph PlotWidget for ``theme`` (pyqtgraph ignores the Qt palette):
    background, axes, their labels and the legend's text."""
    import pyqtgraph as pg

    plot.setBackground(theme.plot_bg)  # type: ignore[attr-defined]
    item = plot.getPlotItem()  # type: ignore[attr-defined]
    pen = pg.mkPen(theme.plot_fg)
    for name in ("left", "bottom"):
        axis = item.getAxis(name)
        axis.setPen(pen)
        axis.setTextPen(pen)
        if axis.label is not None and axis.labelText:
            axis.setLabel(axis.labelText, units=axis.labelUnits, color=theme.plot_fg)
    legend = item.legend
    if legend is not None:
        legend.setLabelTextColor(theme.plot_fg)
        for _, label in legend.items:        # the colour shows once the text is set again
            label.setText(label.text, color=theme.plot_fg)
        legend.setBrush(pg.mkBrush(theme.legend_bg))
        legend.setPen(pg.mkPen(theme.legend_border))
