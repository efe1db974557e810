"""The window's tools: build, precision and scenario dialogs, the live profile's runs (recorded in the
Workspace with the model each ran), and the environment (status bar, Help > Check environment, About)."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QLabel, QMessageBox, QScrollArea, QTabWidget

from trtstudio._version import __version__
from trtstudio.ui.dock_layout import PROFILE_DOCK_MIN_PX
from trtstudio.ui.workers import error_text, run_in_thread

THIS_MACHINE = "This machine"


def _environment() -> list[dict[str, Any]]:
    from trtstudio.environment import check_environment

    return check_environment(probe_gpu=True)


class WindowTools(QObject):
    """Dialogs and runs of ``window`` (the MainWindow). ``panel_run``: the workspace entry of the
    profile panel's run while it goes on."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.w = window
        self.panel_run: Any = None
        self._target: str | None = None  # Profile > Target: ssh://..., None for this machine
        self._make_target_label()
        self.present_view: Any = None  # View > Present's window while open

    def make_profile_holder(self, defer: bool = False) -> QScrollArea:
        """The Live profile dock's content: the ProfilePanel (``window.profile_panel``) in a scroll area;
        with ``defer`` a placeholder until :meth:`build_profile_panel`."""
        self.profile_holder = holder = QTabWidget()
        if defer:
            holder.addTab(QLabel("live panels follow once the model is on screen..."), "Profile")
        else:
            self.build_profile_panel()
        scroll = QScrollArea()  # the panels' minimum size must not push the window beyond the screen
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        holder.setMinimumWidth(PROFILE_DOCK_MIN_PX - 20)  # its height: what the controls and plots need (the dock scrolls, nothing overlaps)
        scroll.setWidget(holder)
        return scroll

    def build_profile_panel(self, live: Any = None) -> None:
        """Make the ProfilePanel in the holder's first tab (replacing a placeholder), for the model
        open now (``live``: its LivePanels, made already)."""
        holder = self.profile_holder
        if self.w.profile_panel is not None:
            return
        placeholder = holder.widget(0) if holder.count() else None
        try:
            from trtstudio.ui.profile_panel import ProfilePanel

            panel = ProfilePanel(live=live)
            panel.wait_for = self.w.view.layout_settled
            panel.sig_layer_times.connect(
                lambda rows: self.w.statusBar().showMessage(f"per-layer profile: {len(rows)} entries", 5000))
            panel.sig_run_started.connect(self.on_run_started)
            panel.sig_run_outcome.connect(self.on_run_outcome)
            panel.sweep_tab.sig_finished.connect(self.w.workspace.add_sweep)  # saved with sessions and reports
            panel.target = self._target
            panel.live.sig_start_requested.connect(self.start_profile)
            panel.live.sig_run_attached.connect(lambda: self.w.docks.on_run_shown())  # the dock widens to its plots
            self.w.profile_panel = panel
            holder.insertTab(0, panel, "Profile")
        except ImportError:
            holder.insertTab(0, QLabel("live profiling unavailable"), "Profile")
        holder.setCurrentIndex(0)
        if placeholder is not None:
            holder.removeTab(holder.indexOf(placeholder))
            placeholder.deleteLater()
        model = self.w.workspace.model
        if self.w.profile_panel is not None and model is not None:
            self.w.show_model_in_profile_panel(model)

    def _need_model(self) -> bool:
        from trtstudio.engine.layer_graph import is_layer_model

        model = self.w.model
        if model is None or is_layer_model(model):  # an engine's own graph is nothing to build or run
            self.w.sig_error.emit("open an ONNX model first (File > Open)"
                                  + ("; the engine's graph shows its layers, it cannot be built or run"
                                     if self.w.workspace.engine is not None else ""))
            return False
        return True

    def open_build_dialog(self) -> None:
        if not self._need_model():
            return
        from trtstudio.ui.build_dialog import BuildDialog

        dlg = BuildDialog(self.w.model.path, self.w, log_panel=self.w.log_panel)
        dlg.sig_built.connect(self._on_build_dialog_built)
        dlg.sig_unsupported.connect(self.w.mark_unsupported)
        dlg.show()
        self.w.build_dialog = dlg

    def _on_build_dialog_built(self, result: Any) -> None:
        engine = getattr(result, "engine_info", None) or (result if hasattr(result, "layers") else None)
        if engine is not None:
            self.w.set_engine(engine)

    def open_precision_dialog(self) -> None:
        if not self._need_model():
            return
        from trtstudio.ui.precision_dialog import PrecisionSweepDialog

        dlg = PrecisionSweepDialog(self.w.model.path, self.w)
        dlg.sig_node_errors.connect(self.w.show_node_errors)
        dlg.show()
        self.w.precision_dialog = dlg

    def open_scenario_dialog(self) -> None:
        """Profile > Scenario: several models together (contention, cycles, soak, cold start)."""
        from trtstudio.ui.scenario_dialog import ScenarioDialog

        self.w.scenario_dialog = ScenarioDialog(self.w, models=[str(self.w.model.path)] if self.w.model else [])
        self.w.scenario_dialog.show()

    def open_upgrade_dialog(self) -> None:
        """File > Upgrade check: the open model built by several TensorRT versions, side by side."""
        from trtstudio.ui.upgrade_dialog import UpgradeDialog

        self.w.upgrade_dialog = UpgradeDialog(self.w, model=str(self.w.model.path) if self.w.model else "")
        self.w.upgrade_dialog.show()

    def open_triton_dialog(self) -> None:
        """Profile > Triton Inference Server: sweep a served model (the open model's name prefilled)."""
        from pathlib import Path

        from trtstudio.ui.triton_panel import TritonDialog

        name = Path(self.w.model.path).stem if self.w.model is not None else ""
        self.w.triton_dialog = TritonDialog(self.w, model=name)
        self.w.triton_dialog.show()

    def open_triton_search_dialog(self) -> None:
        """Profile > Triton config search: which config meets a latency target at the highest throughput
        (the open ONNX model prefilled)."""
        from trtstudio.ui.triton_search_dialog import TritonSearchDialog

        path = str(self.w.model.path) if self.w.model is not None and str(self.w.model.path).endswith(".onnx") else ""
        self.w.triton_search_dialog = TritonSearchDialog(self.w, model=path)
        self.w.triton_search_dialog.show()

    def start_profile(self) -> None:
        if self.w.profile_panel is not None:
            self.w.profile_dock.show()
            self.w.profile_panel.start()
        elif self.w.plots_pending():
            self.w.statusBar().showMessage("the live panels are being prepared; start the run in a moment", 5000)

    def stop_profile(self) -> None:
        if self.w.profile_panel is not None:
            self.w.profile_panel.stop()

    def on_run_started(self, request: Any, state: Any) -> None:
        self.panel_run = self.w.workspace.add_run(request, state, status="running")
        if self._target:
            self._show_target(f"connecting to {self._target}…")
            self._target_timer.start()

    # -- Profile > Target: where the Live profile panel's runs run -------------------------------------
    def _make_target_label(self) -> None:
        from PySide6.QtCore import QTimer

        self.target_label = QLabel()
        self.w.statusBar().addPermanentWidget(self.target_label)
        self._target_timer = QTimer(self)
        self._target_timer.setInterval(500)
        self._target_timer.timeout.connect(self._on_target_timer_timeout)
        self._show_target()

    def remembered_targets(self) -> list[str]:
        """The SSH targets chosen before (newest first; never a password: ssh's own config authenticates)."""
        from PySide6.QtCore import QSettings

        value = QSettings("trtstudio", "trtstudio").value("remote/targets", [])
        return [str(v) for v in (value if isinstance(value, list) else [value] if value else [])]

    def set_target(self, text: str | None) -> str | None:
        """Run the Live profile panel's next runs on ``text`` (``ssh://[user@]host[:port]``; None or
        "This machine": here). A malformed URL is one line in the status bar; nothing changes."""
        from PySide6.QtCore import QSettings

        from trtstudio.errors import InputError
        from trtstudio.remote.target import Target

        url = None if not text or text == THIS_MACHINE else text.strip()
        if url is not None:
            try:
                Target.parse(url)
            except InputError as exc:
                self.w.statusBar().showMessage(f"error: {exc.one_line()}", 10000)
                return self._target
            kept = [url, *[t for t in self.remembered_targets() if t != url]][:10]
            QSettings("trtstudio", "trtstudio").setValue("remote/targets", kept)
        self._target = url
        if self.w.profile_panel is not None:
            self.w.profile_panel.target = url
        self._show_target()
        return url

    def choose_target(self) -> None:
        """Profile > Target...: this machine or a remembered (or new) SSH host."""
        from PySide6.QtWidgets import QInputDialog

        items = [THIS_MACHINE, *self.remembered_targets()]
        current = items.index(self._target) if self._target in items else 0
        text, ok = QInputDialog.getItem(self.w, "Profile target", "Run profiles on (or type ssh://[user@]host[:port]):",
                                        items, current, True)
        if ok:
            self.set_target(text)

    def _show_target(self, state: str | None = None) -> None:
        where = self._target or "this machine"
        self.target_label.setText(f"target: {where}" + (f" ({state})" if state else ""))

    def _on_target_timer_timeout(self) -> None:
        panel = self.w.profile_panel
        if panel is None or not panel.is_running():
            self._target_timer.stop()
            error = panel.error_text() if panel is not None else ""
            self._show_target("connection failed: " + error if error and "lost" not in error else
                              ("connection lost" if error else "ready"))
            return
        samples = panel.live.samples
        n = samples.count if samples is not None else 0
        self._show_target(f"connected, {n:,} samples streamed" if n else f"connecting to {self._target}…")

    def on_run_outcome(self, request: Any, outcome: Any) -> None:
        entry, self.panel_run = self.panel_run, None
        if entry is None:
            return
        if outcome is None:
            self.w.workspace.update_run(entry, status="failed", error=self.w.profile_panel.error_text())
            return
        result = outcome.result
        status = "failed" if result is not None and result.error else (
            "stopped" if result is not None and result.stopped else "finished")
        self.w.workspace.update_run(entry, status=status, record=outcome.record,
                                  data=outcome.run_data() if result is not None else None)

    def show_environment(self) -> None:
        """Status bar: which backends and GPU are usable. Probed once in a worker (NVML, libcuda, ORT)."""
        self.w.status_label.setText("checking backends and GPU...")
        run_in_thread(lambda _s: _environment(), on_done=self._on_environment,
                      on_error=lambda exc: self.w.status_label.setText(f"environment: {error_text(exc)}"), name="env")

    def _on_environment(self, items: list[dict[str, Any]]) -> None:
        self.w.environment = items
        by = {it["name"]: it for it in items}
        have = [n for n in ("onnxruntime", "tensorrt", "tensorrt_rtx", "pycuda") if by.get(n, {}).get("status") == "ok"]
        driver = by.get("NVIDIA driver", {})
        gpu = driver.get("detail") if driver.get("status") == "ok" else "no GPU"
        self.w.status_label.setText(f"backends: {', '.join(have) or 'none'} | GPU: {gpu}")
        self.w.sig_environment.emit(items)

    def present(self) -> Any:
        """View > Present: the run and its verdicts full screen in large type (ui.present_view)."""
        from trtstudio.ui.present_view import PresentView

        if self.present_view is not None and self.present_view.isVisible():
            self.present_view.close()
            return self.present_view
        self.present_view = PresentView(self.w)
        self.present_view.start()
        return self.present_view

    def check_environment(self) -> None:
        """Help > Check environment: what trtstudio can use here and how to install the rest."""
        def done(rows: list[dict[str, Any]]) -> None:
            lines = []
            for r in rows:
                mark = {"ok": "OK", "missing": "MISSING", "warning": "WARN"}.get(r.get("status", ""), r.get("status", ""))
                line = f"{mark:8} {r.get('name')}: {r.get('version') or ''} {r.get('detail') or ''}".rstrip()
                if r.get("status") != "ok" and r.get("fix"):
                    line += f"\n         fix: {r['fix']}"
                lines.append(line)
            box = self.w.message_box(QMessageBox.Icon.Information, "Check environment",
                            "What trtstudio can use on this machine:", "\n".join(lines))
            box.setInformativeText("\n".join(ln.split("\n")[0] for ln in lines))

        self.w.loader.work("Checking the environment...", _environment, done, name="env")

    def about(self) -> None:
        rows = "".join(f"<tr><td>{html.escape(str(it['name']))}</td><td>{html.escape(str(it.get('version') or '-'))}"
                       f"</td><td>{html.escape(str(it.get('detail') or ''))}</td></tr>" for it in self.w.environment)
        QMessageBox.about(self.w, "About trtstudio",
                          f"<h3>trtstudio {__version__}</h3><p>Open desktop profiler for NVIDIA TensorRT: the ONNX "
                          f"graph, the engine's layers and live runs together.</p><table cellspacing=4>{rows}</table>"
                          "<p>Help &gt; Check environment says how to install what is missing.</p>")
