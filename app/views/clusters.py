"""The Clusters tab: the private result beside the non-private baseline, on the same axes."""

import threading

import numpy as np
import panel as pn
import param

from ..server import session_hooks
from ..state import evaluation
from . import plots, teaching
from .common import View, hidden, md, teach
from .live_figure import LiveFigure, layout
from .metrics import MetricsTable


class ClustersView(View):
    """Private result beside the non-private baseline, on the same axes: a result drawn with
    the same layers as the shown one (an ε step, a new seed) redraws the shown figure in place
    (:class:`~.live_figure.LiveFigure`), any other gets a new figure; the scores below it are
    updated in place."""

    _shown = param.Parameter(default=None, precedence=-1, doc="the plot area: a text or a figure")

    def __init__(self, **params):
        # before Viewer.__init__: the lab may change (and call _update) as soon as it is set
        self._live = None  # the LiveFigure shown, if any
        self._lock = threading.Lock()  # outside a server, results come on the caller's thread
        self._pending = False  # a redraw is scheduled on the session's thread
        self._doc = pn.state.curdoc if session_hooks.in_session() else None
        super().__init__(**params)
        self._show()

    @param.depends("lab.result", "lab.settings.owner_view", watch=True)
    def _update(self):
        """Show the lab's result: on a server page on the session's thread (next tick; results
        come on the session's worker thread, see :class:`~.live_figure.LiveFigure`), once for
        any number of results that came meanwhile; elsewhere now."""
        if self._doc is None:
            self._show()
        elif not self._pending:
            self._pending = True
            self._doc.add_next_tick_callback(self._show)

    def _show(self):
        self._pending = False  # a result coming from now on is shown by another call
        lab, result = self.lab, self.lab.result
        with self._lock:
            if result is None:
                text = "No result yet." + (" Press **Release**." if lab.mode == "private" else "")
            elif result.spec.task == "cocluster":
                text = "Co-clustering results are in the **Co-clusters** tab."
            else:
                text = None
            if text is not None:
                self._live = None
                self._shown = md(text)
                return
            frames = self._overlays()
            public = result.dataset.public and not result.private_mode
            if self._live is not None and self._live.redraw(frames, public=public):
                return
            self._live = LiveFigure(frames, public=public)
            self._shown = pn.Column(  # the class on a Panel wrapper: the figure's own is copied
                pn.pane.Bokeh(self._live.model, sizing_mode="stretch_width"),
                css_classes=["pc-clusters-plot"],
                sizing_mode="stretch_width",
            )

    @param.depends("_shown")
    def _plots(self):
        return self._shown

    def figure(self, analyst=False):
        """The HoloViews layout: the result beside the baseline; ``analyst`` (downloads of
        private results): the released result only, whatever the data owner view shows."""
        frames = self._overlays(analyst)
        return None if frames is None else layout(frames)

    def _overlays(self, analyst=False):
        """The (result, baseline) overlays of :meth:`figure`; None when there is none."""
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
