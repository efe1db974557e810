"""The Live profile panel's Run box: backend (the catalogue's, those that cannot run the model
disabled), input data, warm-up, measure, threads, device and the CUDA graph box. ``RunForm.settings``
reads it back as the request's run settings."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from trtstudio.backends import catalogue
from trtstudio.errors import InputError


class RunForm(QGroupBox):
    """The Run box. ``offer_backends(path)`` enables the backends that can run a model and picks
    one; ``settings()`` the run settings it describes; ``sync(running)`` locks it during a run."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Run", parent)
        form = QFormLayout(self)
        self.backend_combo = self._backend_combo()
        form.addRow("Backend", self.backend_combo)
        data_row = QHBoxLayout()
        self.data_combo = QComboBox()
        self.data_combo.addItems(["Random", "File / folder"])
        self.data_combo.currentIndexChanged.connect(self._on_data_combo_changed)
        self.data_edit = QLineEdit()
        self.data_edit.setPlaceholderText(".npy, .npz or folder of NAME.npy")
        self.data_edit.setEnabled(False)
        self.data_browse = QPushButton("…")
        self.data_browse.setEnabled(False)
        self.data_browse.setMaximumWidth(28)
        self.data_browse.clicked.connect(self._on_data_browse_clicked)
        data_row.addWidget(self.data_combo)
        data_row.addWidget(self.data_edit, 1)
        data_row.addWidget(self.data_browse)
        form.addRow("Input data", data_row)
        self.warmup_spin = QSpinBox()
        self.warmup_spin.setRange(0, 1_000_000)
        self.warmup_spin.setValue(10)
        form.addRow("Warm-up", self.warmup_spin)
        count_row = QHBoxLayout()
        self.count_mode = QComboBox()
        self.count_mode.addItems(["Iterations", "Duration (s)", "Until stopped"])
        self.count_spin = QSpinBox()
        self.count_spin.setRange(1, 1_000_000_000)
        self.count_spin.setValue(1000)
        self.count_mode.currentIndexChanged.connect(self._on_count_mode_changed)
        count_row.addWidget(self.count_mode)
        count_row.addWidget(self.count_spin, 1)
        form.addRow("Measure", count_row)
        self.threads_spin = QSpinBox()
        self.threads_spin.setRange(0, 256)
        self.threads_spin.setSpecialValueText("default")
        self.threads_spin.setToolTip("onnxruntime intra-op threads (0: onnxruntime's default)")
        form.addRow("Threads", self.threads_spin)
        self.device_spin = QSpinBox()  # the CUDA device of the torch and ORT GPU backends
        self.device_spin.setRange(-1, 63)
        self.device_spin.setSpecialValueText("default")
        self.device_spin.setValue(-1)
        self.device_spin.setToolTip("CUDA device for GPU backends (default: device 0); 'ort' runs on the CPU")
        form.addRow("Device", self.device_spin)
        self.graph_check = QCheckBox("CUDA graph (compared with eager)")
        self.graph_check.setToolTip("TensorRT, PyTorch: replay the enqueue from a CUDA graph; PyTorch "
                                    "also runs eager against it in paired rounds: what launch overhead costs")
        form.addRow(self.graph_check)

    def _backend_combo(self) -> QComboBox:
        """The catalogue's backends (the CLI's --backend choices), by label. Until the user picks
        one, each model opened gets the backend ``auto`` picks for it on the command line
        (catalogue.default_backend); a pick is kept for the models it can run."""
        combo = QComboBox()
        for info in catalogue.CATALOGUE.values():
            combo.addItem(info.label, info.name)
        self._backend_picked = False
        combo.activated.connect(self._on_backend_picked)
        return combo

    def backend(self) -> str:
        """The backend picked (its catalogue name)."""
        return str(self.backend_combo.currentData())

    def offer_backends(self, path: str) -> None:
        """Enable the backends that can run ``path`` here (the others say why in their tooltip) and
        select the one ``auto`` picks for it (the user's pick, where they made one it can run)."""
        avail = catalogue.availability(path)
        model = self.backend_combo.model()
        for i in range(self.backend_combo.count()):
            why = avail.get(self.backend_combo.itemData(i))
            item = model.item(i)  # type: ignore[attr-defined]
            item.setEnabled(why is None)
            item.setToolTip(why or "")
        current = self.backend_combo.currentData()
        if self._backend_picked and avail.get(current) is None:
            return
        auto = catalogue.default_backend(path)
        usable = [name for name, why in avail.items() if why is None]
        want = auto if avail.get(auto) is None else (usable[0] if usable else auto)
        self.backend_combo.setCurrentIndex(self.backend_combo.findData(want))

    def settings(self) -> dict[str, Any]:
        """The ``ProfileRequest`` fields this box sets (InputError for a missing data path)."""
        mode = self.count_mode.currentIndex()
        data = self.data_edit.text().strip() if self.data_combo.currentIndex() == 1 else None
        if self.data_combo.currentIndex() == 1 and not data:
            raise InputError(None, "choose an input data file or folder, or pick Random")
        return {
            "backend": self.backend(),
            "input_path": data,
            "warmup": self.warmup_spin.value(),
            "iterations": self.count_spin.value() if mode == 0 else None,
            "duration_s": float(self.count_spin.value()) if mode == 1 else None,
            "threads": self.threads_spin.value() or None,
            "device": self.device_spin.value() if self.device_spin.value() >= 0 and self.backend() != "ort" else None,
            "cuda_graph": self.graph_check.isEnabled() and self.graph_check.isChecked(),
        }

    def apply_settings(self, settings: dict[str, Any]) -> None:
        """Set the box from run settings as ``settings()`` gives them (a session's): the backend
        where it can run the model here (then kept as the user's pick), input data, warm-up,
        iterations or duration (neither: until stopped), threads, device, CUDA graph. Keys that
        are absent leave their control as it is."""
        backend = settings.get("backend")
        i = self.backend_combo.findData(backend) if backend else -1
        item = self.backend_combo.model().item(i) if i >= 0 else None  # type: ignore[attr-defined]
        if item is not None and item.isEnabled():
            self.backend_combo.setCurrentIndex(i)
            self._backend_picked = True
        if "input_path" in settings:
            data = settings.get("input_path")
            self.data_combo.setCurrentIndex(1 if data else 0)
            self.data_edit.setText(str(data or ""))
        if isinstance(settings.get("warmup"), int):
            self.warmup_spin.setValue(settings["warmup"])
        if isinstance(settings.get("iterations"), int):
            self.count_mode.setCurrentIndex(0)
            self.count_spin.setValue(settings["iterations"])
        elif isinstance(settings.get("duration_s"), (int, float)):
            self.count_mode.setCurrentIndex(1)
            self.count_spin.setValue(max(1, round(settings["duration_s"])))
        elif "iterations" in settings and "duration_s" in settings:
            self.count_mode.setCurrentIndex(2)
        if "threads" in settings:
            self.threads_spin.setValue(int(settings.get("threads") or 0))
        if "device" in settings:
            self.device_spin.setValue(-1 if settings.get("device") is None else int(settings["device"]))
        if "cuda_graph" in settings:
            self.graph_check.setChecked(bool(settings.get("cuda_graph")))

    def sync(self, running: bool) -> None:
        """Lock the settings while a run goes on; enable the device (not for ort) and the CUDA graph
        box (for the backends that replay one) as the backend allows."""
        for w in (self.backend_combo, self.warmup_spin, self.count_mode, self.count_spin, self.threads_spin,
                  self.data_combo):
            w.setEnabled(not running)
        self.count_spin.setEnabled(not running and self.count_mode.currentIndex() != 2)
        self.device_spin.setEnabled(not running and self.backend() != "ort")
        self.graph_check.setEnabled(not running and self.backend() in catalogue.graph_backends())

    @Slot(int)
    def _on_backend_picked(self, _index: int) -> None:
        self._backend_picked = True

    @Slot(int)
    def _on_count_mode_changed(self, index: int) -> None:
        self.count_spin.setEnabled(index != 2)
        if index == 1 and self.count_spin.value() > 3600:
            self.count_spin.setValue(10)

    @Slot(int)
    def _on_data_combo_changed(self, index: int) -> None:
        self.data_edit.setEnabled(index == 1)
        self.data_browse.setEnabled(index == 1)

    @Slot()
    def _on_data_browse_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Input data", "", "Arrays (*.npy *.npz);;All files (*)")
        if path:
            self.data_edit.setText(path)
