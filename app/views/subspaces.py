"""The Subspaces tab: projector-distance heatmaps of the released subspaces against the truth and
the baseline."""

import panel as pn
import param

from privclust.core.metrics import projector_distances

from . import plots, teaching
from .common import View, md, teach
from .metrics import MetricsTable


class SubspacesView(View):
    """Principal-angle (projector distance) heatmaps against the baseline and the truth."""

    @param.depends("lab.result", "lab.settings.owner_view")
    def _plots(self):
        lab, result = self.lab, self.lab.result
        if result is None or result.spec.task != "subspace":
            return md("Run a subspace clustering algorithm to compare subspaces.")
        S = getattr(result.estimator, "subspaces_", None)
        if S is None:
            return md("This result has no subspaces.")
        items = []
        ds = result.dataset
        truth = (getattr(ds, "truth", {}) or {}).get("subspaces")
        # truth computed from non-public records is evaluation only (data owner view)
        truth_public = getattr(ds, "truth_public", ds.public)
        if truth is not None and (truth_public or lab.show_raw):
            items.append(
                plots.distance_heatmap(
                    projector_distances(S, truth),
                    plots.mark("private vs true subspaces", not truth_public or result.owner_only),
                    "true",
                    "private",
                )
            )
        base = lab.baseline(result) if lab.show_raw else None
        if base is not None:
            items.append(
                plots.distance_heatmap(
                    projector_distances(S, base.subspaces_),
                    plots.mark("private vs non-private", not result.dataset.public),
                    "baseline",
                    "private",
                )
            )
        if not items:
            return md(
                "Nothing to compare with: no public ground truth, and the baseline and "
                "truth computed from the records need the data owner view."
            )
        return pn.pane.HoloViews(
            plots.grid(items), sizing_mode="stretch_width", css_classes=["pc-subspaces-plot"]
        )

    def __panel__(self):
        return pn.Column(
            teach(teaching.SUBSPACES),
            self._plots,
            MetricsTable(lab=self.lab),
            sizing_mode="stretch_width",
        )
