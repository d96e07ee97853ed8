"""The progress of a release on a large data set (shards read on Dask): partitions done / total.

Before its charge a release checks every shard (its record count); that check can be
cancelled, and nothing is charged then. Once charged, the release reads the partitions pass
after pass and always completes: Cancel is off. The counts come from
:meth:`privclust.core.Curator.progress` (public: the number of partitions and passes).
"""

import panel as pn

from .. import large_data
from .common import View, md

POLL_MS = 200


class LargeDataProgress(View):
    """Progress bar, counts and Cancel of a release on a large data set (hidden otherwise)."""

    def __init__(self, **params):
        super().__init__(**params)
        self.bar = pn.indicators.Progress(
            value=0, max=100, sizing_mode="stretch_width", css_classes=["pc-dask-progress"]
        )
        self.text = md("", css_classes=["pc-dask-progress-text"])
        self.cancel = pn.widgets.Button(
            label="Cancel (before the charge)",
            color="light",
            sizing_mode="stretch_width",
            css_classes=["pc-dask-cancel"],
            disabled=True,
        )
        self.cancel.on_click(self._cancel)
        self._cb = None
        self.lab.param.watch(self._show, ["running"])
        self.lab.data.param.watch(self._show, ["dataset"])
        self._show()

    def _curator(self):
        ledger = self.lab.ledger
        if large_data.is_large(self.lab.data.dataset) and ledger.dataset is self.lab.data.dataset:
            return ledger.curator
        return None

    def _cancel(self, event=None):
        curator = self._curator()
        if curator is not None:
            curator.cancel()
            self.cancel.disabled = True

    def _show(self, *events):
        large = large_data.is_large(self.lab.data.dataset)
        for widget in (self.bar, self.text, self.cancel):
            widget.visible = large
        if large and self._cb is None and pn.state.curdoc is not None:
            self._cb = pn.state.add_periodic_callback(self.tick, period=POLL_MS)
        elif not large and self._cb is not None:
            self._cb.stop()
            self._cb = None
        self.tick()

    def tick(self):
        """Read the release's counts (periodic callback while the page is served)."""
        curator = self._curator()
        snap = curator.progress() if curator is not None else None
        running = self.lab.running
        if snap is None:
            self.bar.value, self.text.object, self.cancel.disabled = 0, "", True
            return
        self.bar.value = int(100 * min(snap["done"], snap["total"]) / max(snap["total"], 1))
        if running and snap["phase"] in ("idle", "checking"):
            self.text.object = (
                f"Checking the shards before the charge: {snap['done']} / "
                f"{snap['total']} partitions. Cancel stops it: nothing is "
                "charged."
            )
        elif running:
            self.text.object = (
                f"Charged: pass {snap['passes']}, {snap['done']} / "
                f"{snap['total']} partitions read. A charged release always "
                "completes."
            )
        elif snap["passes"]:
            self.text.object = (
                f"Last release: {snap['passes']} passes over {snap['total']} partitions, done."
            )
        else:
            self.text.object = "Large data set on Dask: releases read it partition by partition."
        self.cancel.disabled = not (running and snap["phase"] in ("idle", "checking"))

    def __panel__(self):
        self._show()
        return pn.Column(self.bar, self.text, self.cancel, sizing_mode="stretch_width")
