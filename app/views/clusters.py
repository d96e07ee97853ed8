"""The Clusters tab: the private result beside the non-private baseline, on the same axes."""

import numpy as np
import panel as pn
import param

from ..state import evaluation
from . import plots, teaching
from .common import View, hidden, md, teach
from .metrics import MetricsTable


class ClustersView(View):
    """Private result beside the non-private baseline, on the same axes: a new figure per
    result (see CHANGELOG on the in-place redraw), the scores below it updated in place."""

    @param.depends("lab.result", "lab.settings.owner_view")
    def _plots(self):
        lab, result = self.lab, self.lab.result
        if result is None:
            return md("No result yet." + (" Press **Release**." if lab.mode == "private" else ""))
        if result.spec.task == "cocluster":
            return md("Co-clustering results are in the **Co-clusters** tab.")
        return pn.pane.HoloViews(
            self.figure(), css_classes=["pc-clusters-plot"], sizing_mode="stretch_width"
        )

    def figure(self, analyst=False):
        """The HoloViews layout: the result beside the baseline; ``analyst`` (downloads of
        private results): the released result only, whatever the data owner view shows."""
        lab, result = self.lab, self.lab.result
        if result is None or result.spec.task == "cocluster":
            return None
        if analyst and result.owner_only:
            return None
        ds = result.dataset
        raw = lab.show_raw and not (analyst and not ds.public)
        P, mean = plots.projection(ds.X if raw else ds, raw)  # not raw: public axes (shape)
        flag = raw and not ds.public
        eps = result.settings.get("epsilon")
        left = self._draw(
            result,
            result.estimator,
            P,
            mean,
            raw,
            plots.mark(
                result.spec.title(result.kind) + (f", ε={eps:g}" if eps is not None else ""), flag
            ),
        )
        base = lab.baseline(result) if raw and not result.owner_only else None
        if base is not None:
            right = self._draw(
                result,
                base,
                P,
                mean,
                True,
                plots.mark(f"non-private: {result.baseline_spec.label}", flag),
                evaluation.match_clusters(result.estimator, base),
            )
        elif raw:
            right = plots.empty(
                "non-private baseline",
                "no baseline for this task"
                if not result.owner_only
                else "this result is not private",
                P,
                mean,
                names=ds.feature_names,
            )
        else:
            right = hidden("non-private baseline")
        return (left + right).opts(shared_axes=True)

    @staticmethod
    def _draw(result, est, P, mean, raw, title, perm=None):
        """One result on the shared axes; ``perm`` recolours a baseline's clusters to match."""
        ds = result.dataset
        names = ds.feature_names
        if raw:
            labels = evaluation.labels_of(ds.X, est)
            if perm is not None and labels is not None:
                labels = perm[np.asarray(labels)]
            base = plots.points(ds.X, labels, P, mean, title, names=names)
        else:
            base = plots.empty(title, "", P, mean, names=names)
        over = base
        if getattr(est, "subspaces_", None) is not None:
            bases = np.asarray(est.subspaces_)
            if perm is not None:
                bases = bases[np.argsort(perm)]
            over = over * plots.directions(bases, P, names=names)
        if getattr(est, "cluster_centers_", None) is not None:
            over = over * plots.centres(est.cluster_centers_, P, mean, names=names)
        balls = evaluation.balls_of(est)
        if balls is not None:
            centres, radii = balls
            over = (
                over
                * plots.centres(centres, P, mean, color="crimson", names=names)
                * plots.balls(centres, radii, P, mean)
            )
        return over.opts(title=title)

    @param.depends("lab.result", "lab.settings.owner_view")
    def _metrics(self):
        return MetricsTable(lab=self.lab).__panel__()

    def __panel__(self):
        return pn.Column(
            teach(teaching.CLUSTERS),
            self._plots,
            pn.param.ParamMethod(self._metrics, inplace=True),  # new scores, same pane
            sizing_mode="stretch_width",
        )
