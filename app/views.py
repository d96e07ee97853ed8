"""``pn.viewable.Viewer`` views of the dashboard: sidebar panels (data, settings, ledger) and the
result tabs (clusters, subspaces, co-clusters, report). Views only read the models of one
:class:`~privclust.app.models.Lab`; every user-derived string is escaped before rendering.
"""
import json
import os

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import param

from . import algorithms, evaluation, plots, teaching
from .models import PRESETS, Lab
from .safety import UPLOAD_EXTENSIONS, escape, max_upload_bytes

EPSILON_GRID = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0,
                500.0, 1000.0]
ALERT_TYPES = {"info": "info", "success": "success", "warning": "warning", "danger": "danger"}


def _md(text, **kw):
    return pn.pane.Markdown(text, sizing_mode="stretch_width", **kw)


class _View(pn.viewable.Viewer):
    lab = param.ClassSelector(class_=Lab)


class Banner(_View):
    """The top banner: demo (nothing spent) or PRIVATE with the budget."""

    @param.depends("lab.mode", "lab.ledger.spent", "lab.data.dataset", "lab.settings.owner_view")
    def _banner(self):
        lab = self.lab
        if lab.mode == "demo":
            return pn.pane.Alert(teaching.DEMO_BANNER, alert_type="success",
                                 css_classes=["pc-banner", "pc-demo"], sizing_mode="stretch_width")
        total, spent, left = lab.ledger.total, lab.ledger.spent, lab.ledger.remaining
        name = escape(getattr(lab.data.dataset, "name", ""))
        text = teaching.PRIVATE_BANNER.format(name=f": {name}" if name else "", spent=spent[0],
                                              total=total[0], remaining=left[0])
        items = [pn.pane.Alert(text, alert_type="danger", css_classes=["pc-banner", "pc-private"],
                               sizing_mode="stretch_width")]
        if lab.settings.owner_view:
            items.append(pn.pane.Alert(teaching.OWNER_WARNING, alert_type="warning",
                                       sizing_mode="stretch_width"))
        return pn.Column(*items, sizing_mode="stretch_width")

    def __panel__(self):
        return pn.panel(self._banner, sizing_mode="stretch_width")


class BoundedFileDropper(pn.widgets.FileDropper):
    """A ``FileDropper`` whose size limit holds on the server.

    Panel's ``FileDropper`` checks ``max_file_size`` only in the browser (FilePond) and buffers
    every chunk it is sent, so a client that skips that check could fill the server's memory.
    Here the bytes of all unfinished uploads together may not exceed ``max_bytes``: the first
    chunk over the limit discards that file's buffer and calls ``on_reject(name, message)``.
    """

    def __init__(self, max_bytes, on_reject=None, **params):
        super().__init__(**params)
        self._max_bytes = int(max_bytes)
        self._on_reject = on_reject
        self._sizes = {}
        self._rejected = set()

    def _process_event(self, event):
        data = event.data if isinstance(event.data, dict) else {}
        if event.event_name != "upload_event":
            return super()._process_event(event)
        name = str(data.get("name"))
        chunk = data.get("data")
        if data.get("chunk") == 1:
            self._rejected.discard(name)
            self._sizes[name] = 0
        elif name in self._rejected or name not in self._file_buffer:
            return None  # the rest of a refused file, or a chunk without a first chunk
        self._sizes[name] = self._sizes.get(name, 0) + (
            len(chunk) if isinstance(chunk, (bytes, bytearray, memoryview, str)) else 0)
        if sum(self._sizes.values()) > self._max_bytes:
            self._file_buffer.pop(name, None)
            self._sizes.pop(name, None)
            self._rejected.add(name)
            if self._on_reject is not None:
                self._on_reject(name, f"{os.path.basename(name)}: the file is too large for the "
                                      f"server limit of {self._max_bytes / 2**20:g} MB")
            return None
        if data.get("chunk") == data.get("total_chunks"):
            self._sizes.pop(name, None)
        return super()._process_event(event)


class DataPanel(_View):
    """Dataset choice: presets with sliders, registry sets, upload with preview."""

    def __init__(self, **params):
        super().__init__(**params)
        data = self.lab.data
        self.source = pn.widgets.RadioButtonGroup.from_param(
            data.param.source, options={"Preset": "preset", "Registry": "registry",
                                        "Upload": "upload"}, sizing_mode="stretch_width")
        self.preset = pn.widgets.Select.from_param(
            data.param.preset, options={label: key for key, (label, _) in PRESETS.items()},
            label="preset")
        self.sliders = pn.Param(data, parameters=["n_samples", "n_features", "n_clusters",
                                                  "subspace_dim", "noise", "seed"],
                                show_name=False, sizing_mode="stretch_width")
        self.registry = pn.widgets.Select.from_param(data.param.registry_name)
        mb = max_upload_bytes() / 2**20
        self.dropper = BoundedFileDropper(
            max_upload_bytes(), on_reject=self._on_reject,
            accepted_filetypes=list(UPLOAD_EXTENSIONS), multiple=False,
            max_file_size=f"{mb:g}MB", sizing_mode="stretch_width")
        self.dropper.param.watch(self._on_upload, "value")
        self.error = pn.pane.Alert("", alert_type="danger", visible=False,
                                   css_classes=["pc-upload-error"], sizing_mode="stretch_width")
        self.lab.data.param.watch(self._error, "error")
        self._error()
        self.upload_help = _md(f"CSV/TSV (numeric columns, optional header), NPY/NPZ (no pickle) "
                               f"or Matrix Market MTX, at most {mb:g} MB. Uploaded data is "
                               "private: it never leaves this session.", css_classes=["pc-help"])
        self.no_registry = _md("No registry datasets found (set PRIVCLUST_DATA_DIR).")
        self.groups = {"preset": pn.Column(self.preset, self.sliders, sizing_mode="stretch_width"),
                       "registry": pn.Column(self.registry, self.no_registry,
                                             sizing_mode="stretch_width"),
                       "upload": pn.Column(self.dropper, self.upload_help,
                                           sizing_mode="stretch_width")}
        data.param.watch(self._choice, "source")
        self._choice()

    def _on_upload(self, event):
        if not event.new:
            return
        name, payload = list(event.new.items())[-1]
        self.lab.data.upload(name, payload)

    def _on_reject(self, name, message):
        self.lab.data.error = message

    def _choice(self, *events):
        """Persistent widgets stay in one static layout; only their visibility changes."""
        src = self.lab.data.source
        for key, group in self.groups.items():
            group.visible = key == src
        has_registry = bool(self.lab.data.param.registry_name.objects)
        self.registry.visible, self.no_registry.visible = has_registry, not has_registry

    def _error(self, *events):
        err = self.lab.data.error
        self.error.param.update(object=f"**Could not use this data.** {escape(err)}" if err else "",
                                visible=bool(err))

    @param.depends("lab.data.dataset", "lab.settings.owner_view")
    def _summary(self):
        ds = self.lab.data.dataset
        if ds is None:
            return _md("No dataset loaded.")
        kind = "public demo data" if ds.public else "private data"
        sparse = ", sparse" if ds.is_sparse else ""
        return _md(f"**{escape(ds.name)}**: {_size_text(self.lab, ds)}{sparse} ({kind}).",
                   css_classes=["pc-data-summary"])

    def __panel__(self):
        return pn.Column("### Data", self.source, *self.groups.values(), self.error, self._summary,
                         sizing_mode="stretch_width")


def _size_text(lab, ds):
    """"n records x d features". For private data outside the data owner view the number of
    records is shown only when the Curator says it is public (``public_facts``: under the
    replace-one unit n is public; under add/remove it is private)."""
    if lab.raw_allowed(ds):
        return f"{ds.n_samples} records x {ds.n_features} features"
    facts = lab.ledger.public_facts() if lab.ledger.dataset is ds else {}
    if "n_samples" in facts:
        return (f"{facts['n_samples']} records x {ds.n_features} features (the number of "
                "records is public under the replace-one ledger)")
    return (f"{ds.n_features} features, number of records hidden (the data owner view "
            "shows it)")


class DataPreview(_View):
    """Table preview and 2-D projection of the loaded data (raw data: demo or owner view)."""

    @param.depends("lab.data.dataset", "lab.settings.owner_view")
    def _preview(self):
        ds = self.lab.data.dataset
        if ds is None:
            return _md("No dataset loaded.")
        cols = ds.feature_names or [f"x{j}" for j in range(ds.n_features)]
        shown = ", ".join(escape(c) for c in cols[:12]) + (" ..." if len(cols) > 12 else "")
        head = _md(f"**{escape(ds.name)}**: {_size_text(self.lab, ds)}. Columns: {shown}",
                   css_classes=["pc-preview"])
        if not self.lab.raw_allowed(ds):
            return pn.Column(head, _md("The values of private data are hidden. Switch on the "
                                       "data owner view to see them (not private)."))
        X = ds.X[:8]
        X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
        df = pd.DataFrame(X[:, :12], columns=[str(c) for c in cols[:12]])
        private = not ds.public
        table = pn.pane.DataFrame(df, escape=True, index=False, max_rows=8,
                                  sizing_mode="stretch_width", css_classes=["pc-preview-table"])
        items = [head, _md(plots.mark("First rows:", private)), table]
        if not ds.is_sparse:
            P, mean = plots.projection(ds.X, True)
            items.append(pn.pane.HoloViews(plots.points(ds.X, ds.labels, P, mean,
                                                        plots.mark("2-D projection (PCA)",
                                                                   private))))
        return pn.Column(*items, sizing_mode="stretch_width")

    def __panel__(self):
        return pn.panel(self._preview)


class SettingsPanel(_View):
    """Task, algorithm (with its privacy kind), epsilon/delta, parameters, Release."""

    def __init__(self, **params):
        super().__init__(**params)
        s = self.lab.settings
        self.task = pn.widgets.Select.from_param(
            s.param.task, options={v: k for k, v in algorithms.TASKS.items()}, label="task",
            css_classes=["pc-task"])
        self.algorithm = pn.widgets.Select(label="algorithm", sizing_mode="stretch_width",
                                           css_classes=["pc-algorithm"])
        self.algorithm.param.watch(self._pick, "value")
        s.param.watch(self._sync_algorithms, ["task", "algorithm"])
        self._sync_algorithms()
        self.epsilon = pn.widgets.DiscreteSlider(label="ε (epsilon, log scale)",
                                                 options=EPSILON_GRID, value=self._snap(s.epsilon),
                                                 sizing_mode="stretch_width",
                                                 css_classes=["pc-epsilon"])
        self.epsilon.param.watch(lambda e: setattr(s, "epsilon", float(e.new)), "value_throttled")
        s.param.watch(lambda e: setattr(self.epsilon, "value", self._snap(e.new)), "epsilon")
        self.delta = pn.widgets.FloatInput.from_param(s.param.delta, step=1e-6, format="0.000000")
        self.seed = pn.widgets.IntInput.from_param(s.param.seed, css_classes=["pc-seed"])
        self.seed_note = _md("Private data: every release draws fresh randomness; the seed "
                             "applies to demo data only.", css_classes=["pc-seed-note"])
        self.owner = pn.widgets.Checkbox.from_param(s.param.owner_view, css_classes=["pc-owner"])
        self.release = pn.widgets.Button(label="Release", color="primary",
                                         sizing_mode="stretch_width", css_classes=["pc-release"])
        self.release.on_click(lambda e: self.lab.param.trigger("release"))
        self.status = pn.pane.Alert("", visible=False, css_classes=["pc-status"],
                                    sizing_mode="stretch_width")
        self.lab.param.watch(self._status, ["message", "message_kind"])
        self._status()
        self.demo_note = _md("Demo data: results follow the sliders (no Release needed).")
        self.stale_note = _md("Settings changed since the last release.")
        self.lab.param.watch(self._actions, ["mode", "running", "stale"])
        s.param.watch(self._show_privacy_inputs, ["algorithm"])
        self._actions()
        self._show_privacy_inputs()

    @staticmethod
    def _snap(value):
        return min(EPSILON_GRID, key=lambda g: abs(np.log(g) - np.log(value)))

    def _sync_algorithms(self, *events):
        s = self.lab.settings
        options = {algorithms.by_key(k, s.specs).title: k for k in s.param.algorithm.objects}
        self.algorithm.param.update(options=options, value=s.algorithm)

    def _pick(self, event):
        if event.new is not None and event.new != self.lab.settings.algorithm:
            self.lab.settings.algorithm = event.new

    @param.depends("lab.settings.algorithm", "lab.settings.algo", "lab.stale", "lab.result")
    def _kind(self):
        s = self.lab.settings
        spec = s.spec
        if spec is None:
            return _md("No algorithm of this task is available yet.")
        kind = spec.effective_kind(s.values(spec))
        label = {"cell": "cell-level", "none": "NOT private"}.get(kind, kind)
        extra = ""
        if kind == "none" and self.lab.mode == "private":
            extra = (" On private data it runs only in the data owner view, marked NOT "
                     "PRIVATE; it is never released or downloaded." if s.owner_view else
                     " Release refuses it on private data.")
        return _md(f"**{spec.label}** — *{label}*: {algorithms.KIND_TEXT[kind]}{extra}",
                   css_classes=["pc-kind"])

    def _show_privacy_inputs(self, *events):
        spec = self.lab.settings.spec
        self.epsilon.visible = spec is not None and spec.uses_epsilon
        self.delta.visible = spec is not None and spec.uses_delta

    @param.depends("lab.settings.algorithm", "lab.settings.algo")
    def _params(self):
        """Parameter widgets generated from the spec (fresh objects on every render)."""
        s = self.lab.settings
        spec = s.spec
        if spec is None:
            return pn.Column()
        items = []
        names = list(spec.task_params) + (["lower", "upper"] if spec.bounds else [])
        if names:
            items.append(pn.Param(s, parameters=names, show_name=False,
                                  sizing_mode="stretch_width"))
        if s.algo is not None and spec.params:
            # a slider cannot hold "not set": optional integers (e.g. DP-tauCC's row cap) get a
            # number box that may stay empty
            optional = {name: pn.widgets.IntInput for name, p in s.algo.param.objects().items()
                        if isinstance(p, param.Integer) and p.allow_None}
            items.append(pn.Param(s.algo, show_name=False, sizing_mode="stretch_width",
                                  widgets=optional))
        return pn.Column(*items, sizing_mode="stretch_width")

    def _actions(self, *events):
        lab = self.lab
        private = lab.mode == "private"
        self.demo_note.visible = not private
        self.seed.visible, self.seed_note.visible = not private, private
        self.owner.visible = private and self.lab.settings.owner_allowed
        self.release.visible = private
        self.release.disabled = lab.running
        self.stale_note.visible = private and lab.stale

    def _status(self, *events):
        lab = self.lab
        self.status.param.update(object=escape(lab.message), visible=bool(lab.message),
                                 alert_type=ALERT_TYPES[lab.message_kind])

    def __panel__(self):
        return pn.Column("### Task and algorithm", self.task, self.algorithm, self._kind,
                         self.epsilon, self.delta, self._params, self.seed, self.seed_note,
                         self.demo_note,
                         self.owner, self.release, self.stale_note, self.status,
                         sizing_mode="stretch_width")


class LedgerPanel(_View):
    """Total / spent / remaining, every charge (its relation and converted cost) and the stored
    releases of the current private dataset; a stored release can be re-opened (no charge)."""

    def __init__(self, **params):
        super().__init__(**params)
        self.picker = pn.widgets.Select(name="stored releases", options={},
                                        sizing_mode="stretch_width",
                                        css_classes=["pc-release-picker"])
        self.reopen = pn.widgets.Button(label="Re-open release", color="light",
                                        css_classes=["pc-reopen"], sizing_mode="stretch_width")
        self.reopen.on_click(lambda e: self._reopen())
        self.lab.ledger.param.watch(self._sync_picker, ["releases", "active"])
        self._sync_picker()

    def _sync_picker(self, *events):
        lg = self.lab.ledger
        options = {f"#{r['id']} {r['time']:%Y-%m-%d %H:%M} UTC · {r['estimator']} · "
                   f"ε {r['epsilon']:g}": r["id"] for r in lg.releases[::-1]}
        self.picker.options = options
        visible = lg.active and bool(options)
        self.picker.visible = self.reopen.visible = visible

    def _reopen(self):
        if self.picker.value is not None:
            self.lab.open_release(self.picker.value)

    @param.depends("lab.ledger.total", "lab.ledger.spent", "lab.ledger.active",
                   "lab.ledger.history", "lab.ledger.releases")
    def _ledger(self):
        lg = self.lab.ledger
        if not lg.active:
            text = ("Demo data: no budget is used." if self.lab.mode == "demo" else
                    f"No budget ledger: {escape(lg.error)}")
            return _md(text, css_classes=["pc-ledger"])
        (te, td), (se, sd), (re_, rd) = lg.total, lg.spent, lg.remaining
        unit = "replace-one record" if lg.unit == "replace" else "add/remove one record"
        head = _md(f"Total ε **{te:g}** (δ {td:g}) · spent ε **{se:g}** (δ {sd:g}) · "
                   f"remaining ε **{re_:g}** (δ {rd:g}). Counted per {unit}; reloading, "
                   "reordering the records or a view of the same source shares this budget.",
                   css_classes=["pc-ledger"])
        bar = pn.indicators.Progress(value=int(round(100 * se / te)) if te else 0, max=100,
                                     sizing_mode="stretch_width", bar_color="danger")
        items = [head, bar]
        if not lg.history:
            items.append(_md("No charges yet."))
        else:
            from .models import relation_note
            rows = []
            for h in lg.history[::-1]:
                note = relation_note(h["relation"], h["requested_epsilon"], h["epsilon"],
                                     lg.unit)
                rows.append({"when (UTC)": f"{h['when']:%H:%M:%S}" if h.get("when") else "",
                             "relation": h["relation"], "asked ε": h["requested_epsilon"],
                             "charged ε": h["epsilon"], "charged δ": h["delta"],
                             "what": str(h.get("what", ""))[:80] + (f" ({note})" if note else "")})
            items.append(pn.pane.DataFrame(pd.DataFrame(rows), escape=True, index=False,
                                           sizing_mode="stretch_width",
                                           css_classes=["pc-history"]))
        if lg.releases:
            df = pd.DataFrame([{"#": r["id"], "time (UTC)": f"{r['time']:%Y-%m-%d %H:%M}",
                                "algorithm": r["estimator"], "guarantee": r["guarantee"],
                                "cost ε": r["epsilon"], "cost δ": r["delta"]}
                               for r in lg.releases[::-1]])
            items += [_md("**Stored releases** (public once made; re-opening one charges "
                          "nothing):"),
                      pn.pane.DataFrame(df, escape=True, index=False, sizing_mode="stretch_width",
                                        css_classes=["pc-releases"])]
        return pn.Column(*items, sizing_mode="stretch_width")

    def __panel__(self):
        return pn.Column("### Budget ledger", self._ledger, self.picker, self.reopen,
                         sizing_mode="stretch_width")


def _teach(text):
    """A teaching box (trusted static Markdown) shown above a view."""
    return pn.pane.Markdown(text, css_classes=["pc-teach"], sizing_mode="stretch_width")


def _hidden(title):
    return plots.empty(title, "hidden: computed on raw data (data owner view)")


class ClustersView(_View):
    """Private result beside the non-private baseline, on the same axes."""

    @param.depends("lab.result", "lab.settings.owner_view")
    def _plots(self):
        lab, result = self.lab, self.lab.result
        if result is None:
            return _md("No result yet." + (" Press **Release**." if lab.mode == "private" else ""))
        if result.spec.task == "cocluster":
            return _md("Co-clustering results are in the **Co-clusters** tab.")
        return pn.pane.HoloViews(self.figure(), css_classes=["pc-clusters-plot"])

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
        P, mean = plots.projection(ds.X, raw)
        flag = raw and not ds.public
        left = self._draw(result, result.estimator, P, mean, raw, plots.mark(
            f"{result.spec.title}, ε={result.settings.get('epsilon', 0):g}", flag))
        base = lab.baseline(result) if raw and not result.owner_only else None
        if base is not None:
            right = self._draw(result, base, P, mean, True,
                               plots.mark(f"non-private: {result.baseline_spec.label}", flag),
                               evaluation.match_clusters(result.estimator, base))
        elif raw:
            right = plots.empty("non-private baseline", "no baseline for this task"
                                if not result.owner_only else "this result is not private")
        else:
            right = _hidden("non-private baseline")
        return (left + right).opts(shared_axes=True)

    @staticmethod
    def _draw(result, est, P, mean, raw, title, perm=None):
        """One result on the shared axes; ``perm`` recolours a baseline's clusters to match."""
        ds = result.dataset
        if raw:
            labels = evaluation.labels_of(result, est)
            if perm is not None and labels is not None:
                labels = perm[np.asarray(labels)]
            base = plots.points(ds.X, labels, P, mean, title)
        else:
            base = plots.empty(title)
        over = base
        if getattr(est, "subspaces_", None) is not None:
            bases = np.asarray(est.subspaces_)
            if perm is not None:
                bases = bases[np.argsort(perm)]
            over = over * plots.directions(bases, P)
        if getattr(est, "cluster_centers_", None) is not None:
            over = over * plots.centres(est.cluster_centers_, P, mean)
        centres = getattr(est, "centers_", None)
        radii = getattr(est, "radii_", None)
        if centres is None and getattr(est, "center_", None) is not None:
            centres, radii = np.atleast_2d(est.center_), np.atleast_1d(est.radius_)
        if centres is not None:
            over = over * plots.centres(centres, P, mean, color="crimson") * plots.balls(
                centres, radii, P, mean)
        return over.opts(title=title)

    @param.depends("lab.result", "lab.settings.owner_view")
    def _metrics(self):
        return MetricsTable(lab=self.lab)

    def __panel__(self):
        return pn.Column(_teach(teaching.CLUSTERS), self._plots, self._metrics,
                         sizing_mode="stretch_width")


class MetricsTable(_View):
    """Scores of the current result; evaluation-only ones only when raw data may be shown."""

    def __panel__(self):
        lab, result = self.lab, self.lab.result
        if result is None:
            return pn.Column()
        base = lab.baseline(result) if lab.show_raw else None
        rows = [(n, v, e) for n, v, e in evaluation.metrics(result, base)
                if lab.show_raw or not e]
        if not rows:
            return _md("No released metric for this result.")
        lines = [f"- {n}: **{v:.4g}**" + (" *(evaluation only, not private)*" if e and
                                          lab.mode == "private" else
                                          (" *(evaluation only)*" if e else ""))
                 for n, v, e in rows]
        return _md("\n".join(lines), css_classes=["pc-metrics"])


class SubspacesView(_View):
    """Principal-angle (projector distance) heatmaps against the baseline and the truth."""

    @param.depends("lab.result", "lab.settings.owner_view")
    def _plots(self):
        lab, result = self.lab, self.lab.result
        if result is None or result.spec.task != "subspace":
            return _md("Run a subspace clustering algorithm to compare subspaces.")
        S = getattr(result.estimator, "subspaces_", None)
        if S is None:
            return _md("This result has no subspaces.")
        items = []
        ds = result.dataset
        truth = (getattr(ds, "truth", {}) or {}).get("subspaces")
        # truth computed from non-public records is evaluation only (data owner view)
        truth_public = getattr(ds, "truth_public", ds.public)
        if truth is not None and (truth_public or lab.show_raw):
            items.append(plots.distance_heatmap(
                evaluation.pairwise(S, truth),
                plots.mark("private vs true subspaces", not truth_public or result.owner_only),
                "true", "private"))
        base = lab.baseline(result) if lab.show_raw else None
        if base is not None:
            items.append(plots.distance_heatmap(
                evaluation.pairwise(S, base.subspaces_),
                plots.mark("private vs non-private", not result.dataset.public), "baseline",
                "private"))
        if not items:
            return _md("Nothing to compare with: no public ground truth, and the baseline and "
                       "truth computed from the records need the data owner view.")
        return pn.pane.HoloViews(hv.Layout(items).cols(2))

    def __panel__(self):
        return pn.Column(_teach(teaching.SUBSPACES), self._plots, MetricsTable(lab=self.lab),
                         sizing_mode="stretch_width")


class CoclustersView(_View):
    """Reordered matrices and the noisy vs exact contingency table."""

    @param.depends("lab.result", "lab.settings.owner_view")
    def _plots(self):
        lab, result = self.lab, self.lab.result
        if result is None or result.spec.task != "cocluster":
            return _md("Run a co-clustering algorithm to see co-clusters.")
        est, ds = result.estimator, result.dataset
        items = []
        T = getattr(est, "table_", None)
        if T is not None:
            items.append(plots.table(T, plots.mark(
                "released contingency table" if result.spec.private else "contingency table",
                result.owner_only)))
        if lab.show_raw:
            flag = not ds.public
            rows, cols = est.row_labels_, est.column_labels_
            items.append(plots.table(evaluation.exact_table(ds.X, rows, cols),
                                     plots.mark("exact table (raw data)", flag)))
            items.append(plots.matrix(ds.X, np.argsort(rows, kind="stable"),
                                      np.argsort(cols, kind="stable"),
                                      plots.mark(f"reordered by {result.spec.label}", flag)))
            base = lab.baseline(result)
            if base is not None:
                items.append(plots.matrix(ds.X, np.argsort(base.row_labels_, kind="stable"),
                                          np.argsort(base.column_labels_, kind="stable"),
                                          plots.mark("reordered by Fast-τCC", flag)))
        return pn.pane.HoloViews(hv.Layout(items).cols(2))

    def __panel__(self):
        return pn.Column(_teach(teaching.COCLUSTERS), self._plots, MetricsTable(lab=self.lab),
                         sizing_mode="stretch_width")


def _jsonable(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    return v


def report_payload(result):
    """The downloadable record of a result.

    Private data: the Release only (``release.to_dict()``: released attributes, parameters,
    guarantee, cost, time), never a baseline, per-record arrays that were not released or the
    hash of the data. Demo data: public settings, guarantee and outputs. A NOT PRIVATE (data
    owner) result has no download: ValueError.
    """
    if result.owner_only:
        raise ValueError("a NOT PRIVATE result of the data owner view is never downloaded")
    release = result.release
    if release is not None:
        return {"algorithm": result.spec.label, "task": result.spec.task,
                "release": release.to_dict()}
    g = result.guarantee
    return {
        "algorithm": result.spec.label,
        "class": result.spec.class_path.rsplit(".", 1)[-1],
        "task": result.spec.task,
        "settings": {k: _jsonable(v) for k, v in result.settings.items()},
        "dataset_fingerprint": (getattr(result.dataset, "fingerprint", None)
                                if getattr(result.dataset, "public", False) else None),
        "guarantee": g.to_dict() if g is not None else {"kind": "none"},
        "released": {k: _jsonable(v) for k, v in evaluation.released(result).items()},
    }


def _csv_cell(value):
    """CSV injection guard (OWASP): a cell starting with = + - @ tab/CR gets a quote prefix."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "@", "\t", "\r") or (
        text[:1] == "-" and not _is_number(text)) else text


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def report_csv(result):
    """Released arrays as long CSV rows: output, index, value (a NOT PRIVATE result: none)."""
    if result.owner_only:
        raise ValueError("a NOT PRIVATE result of the data owner view is never downloaded")
    rows = []
    for name, value in evaluation.released(result).items():
        arr = np.atleast_1d(np.asarray(value))
        for idx in np.ndindex(arr.shape):
            rows.append((name, "/".join(map(str, idx)), _csv_cell(arr[idx])))
    return pd.DataFrame(rows, columns=["output", "index", "value"]).to_csv(index=False)


class ReportView(_View):
    """Guarantee, mechanisms, metrics and downloads of the current result."""

    @param.depends("lab.result", "lab.settings.owner_view")
    def _report(self):
        lab, result = self.lab, self.lab.result
        if result is None:
            return _md("No result yet.")
        g = result.guarantee
        spec = result.spec
        release = result.release
        if result.owner_only:
            return pn.Column(_md(f"### NOT PRIVATE · {escape(spec.label)}\n\nComputed on the raw "
                                 "data in the data owner view: not a release, never stored, "
                                 "listed or downloaded.", css_classes=["pc-report"]),
                             MetricsTable(lab=lab), sizing_mode="stretch_width")
        lines = [f"### {spec.title}",
                 f"**Privacy kind:** {spec.kind_text}",
                 f"**Guarantee:** {escape(g.summary()) if g is not None else 'none (baseline)'}"]
        if release is not None:
            eps, delta = release.cost
            lines.append(f"**Release #{release.id}** made {release.time:%Y-%m-%d %H:%M:%S} UTC; "
                         f"charged ε {eps:g}" + (f", δ {delta:g}" if delta else "") +
                         f" ({'replace-one' if release.unit == 'replace' else release.unit} "
                         f"ledger). Randomness: {escape(release.randomness)}.")
        if result.from_cache:
            lines.append("*Answered from the release store: not charged again.*")
        if g is not None and g.warnings:
            lines.append("**Warnings:**\n" + "\n".join(f"- {escape(w)}" for w in g.warnings))
        items = [_md("\n\n".join(lines), css_classes=["pc-report"])]
        if g is not None and g.mechanisms:
            df = pd.DataFrame([m if isinstance(m, dict) else m.to_dict() for m in g.mechanisms])
            items.append(pn.pane.DataFrame(df, escape=True, index=False,
                                           sizing_mode="stretch_width"))
        items.append(MetricsTable(lab=lab))
        payload = report_payload(result)
        items.append(pn.Row(
            pn.widgets.FileDownload(callback=lambda: _bytes(json.dumps(payload, indent=2)),
                                    filename="privclust_result.json", color="success",
                                    label="Download results (JSON)"),
            pn.widgets.FileDownload(callback=lambda: _bytes(report_csv(result)),
                                    filename="privclust_result.csv", color="success",
                                    label="Download released outputs (CSV)"),
            pn.widgets.FileDownload(callback=lambda: _plot_html(
                                        ClustersView(lab=lab).figure(analyst=True)),
                                    filename="privclust_clusters.html", color="light",
                                    label="Download plot (HTML)")))
        return pn.Column(*items, sizing_mode="stretch_width")

    def __panel__(self):
        return pn.Column(_teach(teaching.REPORT), self._report, sizing_mode="stretch_width")


def _plot_html(fig):
    """A standalone HTML file of a plot, with Bokeh inlined (no CDN when it is opened)."""
    from bokeh.embed import file_html
    from bokeh.resources import INLINE
    if fig is None:
        return _bytes("<p>No plot for this result.</p>")
    return _bytes(file_html(hv.render(fig, backend="bokeh"), INLINE, "privclust plot"))


def _bytes(text):
    import io
    return io.BytesIO(text.encode("utf-8"))
