"""The Co-clusters tab: the released contingency table, the exact one and the reordered matrix."""

import numpy as np
import panel as pn
import param

from privclust.core.metrics import contingency_table

from . import plots, teaching
from .common import View, md, teach
from .metrics import MetricsTable


class CoclustersView(View):
    """Reordered matrices and the noisy vs exact contingency table."""

    @param.depends("lab.result", "lab.settings.owner_view")
    def _plots(self):
        lab, result = self.lab, self.lab.result
        if result is None or result.spec.task != "cocluster":
            return md("Run a co-clustering algorithm to see co-clusters.")
        est, ds = result.estimator, result.dataset
        items = []
        T = getattr(est, "table_", None)
        if T is not None:
            items.append(
                plots.table(
                    T,
                    plots.mark(
                        "released contingency table"
                        if result.spec.private
                        else "contingency table",
                        result.owner_only,
                    ),
                )
            )
        if lab.show_raw:
            flag = not ds.public
            rows, cols = est.row_labels_, est.column_labels_
            items.append(
                plots.table(
                    contingency_table(ds.X, rows, cols), plots.mark("exact table (raw data)", flag)
                )
            )
            items.append(
                plots.matrix(
                    ds.X,
                    np.argsort(rows, kind="stable"),
                    np.argsort(cols, kind="stable"),
                    plots.mark(f"reordered by {result.spec.label}", flag),
                )
            )
            base = lab.baseline(result)
            if base is not None:
                items.append(
                    plots.matrix(
                        ds.X,
                        np.argsort(base.row_labels_, kind="stable"),
                        np.argsort(base.column_labels_, kind="stable"),
                        plots.mark("reordered by Fast-τCC", flag),
                    )
                )
        return pn.pane.HoloViews(
            plots.grid(items), sizing_mode="stretch_width", css_classes=["pc-coclusters-plot"]
        )

    def __panel__(self):
        return pn.Column(
            teach(teaching.COCLUSTERS),
            self._plots,
            MetricsTable(lab=self.lab),
            sizing_mode="stretch_width",
        )
