"""DeviceBox: the planner's device list -- the CPU, then every GPU this MXNet lists,
those it cannot run on greyed with the reason -- asked of MXNet in a child process
(nothing touches a GPU in the window's process), with a short note under it."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QWidget

from mxexplorer.core.runtime import isolated
from mxexplorer.core.runtime.devices import Device
from mxexplorer.core.runtime.mxnet_env import list_devices
from mxexplorer.gui import workers
from mxexplorer.gui.text import plain_label
from mxexplorer.gui.theme import set_role


def _devices_job(progress: Any, token: Any) -> list[Device]:
    """The device list, asked in a child."""
    devices: list[Device] = isolated.call(list_devices, progress=progress, token=token,
                                          what="the device query")
    return devices


class DeviceBox(QComboBox):
    """Signals
    -------
    listed(list): the devices MXNet listed (:class:`Device`), after the box shows them
    """

    listed = Signal(list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.addItem("CPU", "cpu")
        #: the device to choose once listed (a remembered GPU not seen yet)
        self.wanted = "cpu"
        #: why GPUs are greyed: a line; the sentences in its tooltip
        self.note = plain_label()
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        set_role(self.note, "muted")
        self.note.hide()
        self._job = workers.JobSlot(self)
        self._job.finished.connect(self._on_devices)
        self.currentIndexChanged.connect(self._on_index_changed)

    def load(self) -> None:
        """Ask MXNet for the devices (after it has loaded), on a worker."""
        self._job.start(_devices_job)

    def stop(self) -> None:
        self._job.cancel(quiet=True)

    def choose(self, spec: str) -> None:
        """``spec`` ("cpu", "gpu:1") now if listed and runnable, else once listed."""
        self.wanted = spec
        index = self.findData(spec)
        item = self.model().item(index) if index >= 0 else None  # type: ignore[attr-defined]
        if item is not None and item.isEnabled():   # never a greyed GPU
            self.setCurrentIndex(index)

    @Slot(int)
    def _on_index_changed(self, _: int) -> None:
        if self.currentData():
            self.wanted = self.currentData()

    @Slot(object)
    def _on_devices(self, devices: list[Device]) -> None:
        wanted = self.wanted
        self.blockSignals(True)
        self.clear()
        model = self.model()
        for dev in devices:
            self.addItem(dev.label, dev.spec)
            row = self.count() - 1
            if dev.why:
                self.setItemData(row, f"GPU {dev.index} ({dev.name}) {dev.why}.",
                                 Qt.ItemDataRole.ToolTipRole)
            if not dev.runs:                  # listed, greyed, not choosable
                model.item(row).setEnabled(False)      # type: ignore[attr-defined]
        index = self.findData(wanted)
        usable = index >= 0 and next(d for d in devices if d.spec == wanted).runs
        self.setCurrentIndex(index if usable else 0)
        self.blockSignals(False)
        self._note_unrunnable([d for d in devices if d.kind == "gpu" and not d.runs])
        self.listed.emit(list(devices))

    def _note_unrunnable(self, devices: list[Device]) -> None:
        """One short line under the list for the greyed GPUs; the whole sentences (why,
        what to use instead) in its tooltip and each item's."""
        self.note.setVisible(bool(devices))
        if not devices:
            return
        names = ", ".join(str(d.index) for d in devices)
        self.note.setText(f"GPU{'s' if len(devices) > 1 else ''} {names} cannot run "
                          "this MXNet (why: hover)")
        self.note.setToolTip("\n\n".join(f"GPU {d.index} ({d.name}) {d.why}."
                                         for d in devices))
