"""The Data tab: a preview of the loaded data (values only where raw data may be shown)."""

import numpy as np
import pandas as pd
import panel as pn
import param

from ..safety import escape
from . import plots
from .common import View, md, size_text


class DataPreview(View):
    """Table preview and 2-D projection of the loaded data (raw data: demo or owner view)."""

    @param.depends("lab.data.dataset", "lab.settings.owner_view")
    def _preview(self):
        ds = self.lab.data.dataset
        if ds is None:
            return md("No dataset loaded.")
        cols = ds.feature_names or [f"x{j}" for j in range(ds.n_features)]
        shown = ", ".join(escape(c) for c in cols[:12]) + (" ..." if len(cols) > 12 else "")
        head = md(
            f"**{escape(ds.name)}**: {size_text(self.lab, ds)}. Columns: {shown}",
            css_classes=["pc-preview"],
        )
        if not self.lab.raw_allowed(ds):
            return pn.Column(
                head,
                md(
                    "The values of private data are hidden. Switch on the "
                    "data owner view to see them (not private)."
                ),
            )
        X = ds.X[:8]
        X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
        df = pd.DataFrame(X[:, :12], columns=[str(c) for c in cols[:12]])
        private = not ds.public
        table = pn.pane.DataFrame(
            df,
            escape=True,
            index=False,
            max_rows=8,
            sizing_mode="stretch_width",
            css_classes=["pc-preview-table"],
        )
        items = [head, md(plots.mark("First rows:", private)), table]
        if not ds.is_sparse:
            P, mean = plots.projection(ds.X, True)
            items.append(
                pn.pane.HoloViews(
                    plots.points(
                        ds.X, ds.labels, P, mean, plots.mark("2-D projection (PCA)", private)
                    )
                )
            )
        return pn.Column(*items, sizing_mode="stretch_width")

    def __panel__(self):
        return pn.panel(self._preview)
