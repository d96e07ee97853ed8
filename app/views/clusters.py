"""The Clusters tab: the private result beside the non-private baseline, on the same axes."""

import holoviews as hv
import numpy as np
import panel as pn
import param

from ..state import evaluation
from . import plots, teaching
from .common import View, hidden, md, teach
from .metrics import MetricsTable


class ClustersView(View):
    """Private result beside the non-private baseline, on the same axes.

    The plot is drawn in place: a new result whose plots have the same layers as the shown ones
    (an ε step, a new seed) only replaces the data of the shown figure (two ``hv.DynamicMap``
    redrawn by one stream), so the server sends column data and titles rather than new
    figures; other results (another algorithm, the data owner view) build a new figure.
    """

    _layers = param.Parameter(
        default=None, precedence=-1, doc="the shown plots' layers, or the text shown instead"
    )

    def __init__(self, **params):
        super().__init__(**params)
        self._frames = [None, None]  # (left, right) overlays of the live figure, newest
        self._redraw = None  # the stream that redraws the live figure from ``_frames``
        self._live = []  # the live figure's two DynamicMaps
        self._update()

    @param.depends("lab.result", "lab.settings.owner_view", watch=True)
    def _update(self):
        lab, result = self.lab, self.lab.result
        if result is None:
            text = "No result yet." + (" Press **Release**." if lab.mode == "private" else "")
            self._frames, self._layers = [None, None], text
            return
        if result.spec.task == "cocluster":
            self._layers = "Co-clustering results are in the **Co-clusters** tab."
            return
        frames = list(self._overlays())
        layers = tuple(_layers(frame) for frame in frames)
        if layers == self._layers and self._redraw is not None:
            self._frames[:] = frames  # the shown figure's DynamicMaps read these
            # a new value each time: HoloViews memoizes a DynamicMap on its streams' values;
            # the maps are evaluated before the plots are told, so that a figure rendered
            # afresh (its tab opened again) starts from this frame, not the last one drawn
            redraw = self._redraw
            redraw.update(version=redraw.version + 1)
            for dmap in self._live:
                dmap[()]
            hv.streams.Stream.trigger([redraw])
        else:
            self._frames = frames  # a new list: a figure being replaced keeps its own
            self._layers = layers

    @param.depends("_layers")
    def _plots(self):
        if isinstance(self._layers, str) or self._layers is None:
            return md(self._layers or "")
        frames, self._redraw = self._frames, _Redraw()
        live = [
            hv.DynamicMap(lambda version, i=i: frames[i], streams=[self._redraw]).opts(
                framewise=True
            )
            for i in range(2)
        ]
        for dmap in live:
            dmap[()]  # evaluated now: the layout can be inspected before it is rendered
        self._live = live
        return pn.pane.HoloViews(
            (live[0] + live[1]).opts(shared_axes=True),
            css_classes=["pc-clusters-plot"],
            sizing_mode="stretch_width",
        )

    def figure(self, analyst=False):
        """The HoloViews layout: the result beside the baseline; ``analyst`` (downloads of
        private results): the released result only, whatever the data owner view shows."""
        overlays = self._overlays(analyst)
        return None if overlays is None else (overlays[0] + overlays[1]).opts(shared_axes=True)

    def _overlays(self, analyst=False):
        """(result, baseline) overlays of :meth:`figure`; None when there is nothing to draw."""
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
        return left, right

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


_Redraw = hv.streams.Stream.define("Redraw", version=0)


def _layers(overlay):
    """The kinds of the layers of a plot (a figure is redrawn in place only with the same)."""
    items = overlay.values() if isinstance(overlay, hv.Overlay) else [overlay]
    return tuple((type(el).__name__, el.group, el.label) for el in items)
