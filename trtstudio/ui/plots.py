"""pyqtgraph, configured once for every plot of the window: the modules that draw plots import
``pg`` from here, so the configuration holds wherever the first plot is made.

pyqtgraph takes about 0.2 s to import. The window does not import it before a model given on the
command line is on screen (``MainWindow(defer_plots=True)``); it imports it then in a worker thread
and builds the plot panels after (see ``MainWindow.start_plots``).
"""

from __future__ import annotations

import pyqtgraph as pg

pg.setConfigOptions(antialias=False, background="w", foreground="k")

__all__ = ["pg"]
