"""SessionPanel: what every panel holds -- its session, the settings, the host, the
session's document and selection.  The host is kept on purpose: a panel that dropped
it let the only reference to a test's holder widget (the session's parent) go, and
the session was deleted under it."""
from __future__ import annotations

from PySide6.QtWidgets import QWidget

from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.gui.host import DialogHost
from mxexplorer.gui.session import DocumentSession
from mxexplorer.gui.settings import Settings


class SessionPanel(QWidget):
    def __init__(self, session: DocumentSession, settings: Settings, host: DialogHost,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.settings = settings
        self.host = host
        self.document: GraphDocument = session.document
        self.selection = session.selection
