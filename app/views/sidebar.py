"""The sidebar: the data panel (presets, registry, upload), the settings panel (task, algorithm,
privacy, Release) and the ledger panel (budget, charges, stored releases)."""

import json
import re

import numpy as np
import pandas as pd
import panel as pn
import param
from bokeh.models import CustomJSTickFormatter

from .. import catalogue
from ..safety import UPLOAD_EXTENSIONS, escape, max_upload_bytes
from ..state import PRESETS, relation_note
from ..state.plan import kmeans_advice, public_shape
from ..state.settings import EPSILON_GRID
from .common import View, md, size_text, upload_dropper
from .progress import LargeDataProgress


def parse_box_lines(text, names):
    """A pasted box per column: one line per column, ``lower, upper`` or ``name, lower, upper``
    (commas, semicolons, tabs or spaces); a line naming a column sets that column, the others
    go in order. Returns (lower, upper) lists; ValueError naming the line otherwise."""
    names = list(names)
    d = len(names)
    lower, upper = [None] * d, [None] * d
    lines = [ln for ln in text.splitlines() if ln.strip()]
    label = ""
    for i, line in enumerate(lines):
        parts = [p for p in re.split(r"[,;\t ]+", line.strip()) if p]
        try:
            lo, hi = float(parts[-2]), float(parts[-1])
        except (IndexError, ValueError):
            raise ValueError(
                f"line {i + 1} ({line.strip()[:40]!r}): expected two numbers, lower and upper"
            ) from None
        label = " ".join(parts[:-2])
        j = names.index(label) if label in names else i
        if j >= d:
            raise ValueError(f"line {i + 1}: the data have {d} columns")
        lower[j], upper[j] = lo, hi
    if len(lines) == 1 and not label:  # one unnamed line: one box for every column
        return [lo] * d, [hi] * d
    missing = [names[j] for j in range(d) if lower[j] is None]
    if missing:
        raise ValueError(
            f"no box for column(s) {', '.join(missing[:5])}: paste one line per column ({d} lines)"
        )
    return lower, upper


class DataPanel(View):
    """Dataset choice: presets with sliders, registry sets, upload with preview."""

    def __init__(self, **params):
        super().__init__(**params)
        data = self.lab.data
        self.source = pn.widgets.RadioButtonGroup.from_param(
            data.param.source,
            options={"Preset": "preset", "Registry": "registry", "Upload": "upload"},
            sizing_mode="stretch_width",
        )
        self.preset = pn.widgets.Select.from_param(
            data.param.preset,
            options={label: key for key, (label, _) in PRESETS.items()},
            label="preset",
        )
        self.sliders = pn.Param(
            data,
            parameters=["n_samples", "n_features", "n_clusters", "subspace_dim", "noise", "seed"],
            show_name=False,
            sizing_mode="stretch_width",
        )
        self.registry = pn.widgets.Select.from_param(data.param.registry_name)
        mb = max_upload_bytes() / 2**20
        self.dropper = self._new_dropper()
        self.error = pn.pane.Alert(
            "",
            alert_type="danger",
            visible=False,
            css_classes=["pc-upload-error"],
            sizing_mode="stretch_width",
        )
        self.lab.data.param.watch(self._error, "error")
        self._error()
        self.upload_help = md(
            f"CSV/TSV (numeric columns, optional header), NPY/NPZ (no pickle) "
            f"or Matrix Market MTX, at most {mb:g} MB. Uploaded data is "
            "private: it never leaves this session.",
            css_classes=["pc-help"],
        )
        self.no_registry = md("No registry datasets found (set PRIVCLUST_DATA_DIR).")
        # this browser's earlier uploads (listed to this browser only: state/browsers.py)
        self.my_uploads = pn.widgets.Select(
            label="your uploads (this browser only, until the server restarts)",
            sizing_mode="stretch_width",
            css_classes=["pc-my-uploads"],
        )
        self.my_uploads.param.watch(self._pick_upload, "value")
        data.param.watch(self._sync_uploads, ["upload_id", "dataset"])
        self._sync_uploads()
        self.groups = {
            "preset": pn.Column(self.preset, self.sliders, sizing_mode="stretch_width"),
            "registry": pn.Column(self.registry, self.no_registry, sizing_mode="stretch_width"),
            "upload": pn.Column(
                self.dropper, self.my_uploads, self.upload_help, sizing_mode="stretch_width"
            ),
        }
        data.param.watch(self._choice, "source")
        self._choice()

    def _sync_uploads(self, *events):
        data = self.lab.data
        options = data.upload_names()
        self.my_uploads.param.update(
            options=options,
            visible=bool(options),
            value=data.upload_id if data.upload_id in options.values() else None,
        )

    def _pick_upload(self, event):
        if event.new is not None and event.new != self.lab.data.upload_id:
            self.lab.data.upload_id = event.new

    def _new_dropper(self):
        return upload_dropper(
            self.lab.data.upload, self._on_reject, UPLOAD_EXTENSIONS, "pc-dropper"
        )

    def _reset_dropper(self):
        """A rejected file must not stay listed as "Upload complete": the drop zone is
        replaced by a fresh, empty one (the error stays shown beside it)."""
        self.dropper = self._new_dropper()
        self.groups["upload"][0] = self.dropper

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
        self.error.param.update(
            object=f"**Could not use this data.** {escape(err)}" if err else "", visible=bool(err)
        )
        if err and events and self.lab.data.source == "upload":
            pn.state.execute(self._reset_dropper)  # after the dropper's own event is handled

    @param.depends("lab.data.dataset", "lab.settings.owner_view")
    def _summary(self):
        ds = self.lab.data.dataset
        if ds is None:
            return md("No dataset loaded.")
        kind = "public demo data" if ds.public else "private data"
        sparse = ", sparse" if ds.is_sparse else ""
        return md(
            f"**{escape(ds.name)}**: {size_text(self.lab, ds)}{sparse} ({kind}).",
            css_classes=["pc-data-summary"],
        )

    def __panel__(self):
        return pn.Column(
            "### Data",
            self.source,
            *self.groups.values(),
            self.error,
            self._summary,
            sizing_mode="stretch_width",
        )


def epsilon_index(value):
    """The index of the grid value nearest ``value`` on the log scale."""
    return int(np.argmin(np.abs(np.log(EPSILON_GRID) - np.log(value))))


def epsilon_slider(value):
    """The ε slider: one slider over the indexes of :data:`EPSILON_GRID`, whose title shows the
    grid value of the handle's index, formatted in the browser. Panel's ``DiscreteSlider`` is
    three models (a slider of indexes, a text pane for its title and a link between them), and
    its title is set both by the link in the browser and by the server; here the title is a
    function of the handle alone, so the two can never disagree."""
    labels = json.dumps([f"{g:g}" for g in EPSILON_GRID])
    return pn.widgets.IntSlider(
        label="ε (epsilon, log scale)",
        start=0,
        end=len(EPSILON_GRID) - 1,
        value=epsilon_index(value),
        format=CustomJSTickFormatter(code=f"return {labels}[tick] ?? String(tick);"),
        tooltips=False,
        sizing_mode="stretch_width",
        css_classes=["pc-epsilon"],
    )


class SettingsPanel(View):
    """Task, algorithm (with its privacy kind), epsilon/delta, parameters, Release."""

    def __init__(self, **params):
        super().__init__(**params)
        s = self.lab.settings
        self.task = pn.widgets.Select.from_param(
            s.param.task,
            options={v: k for k, v in catalogue.TASKS.items()},
            label="task",
            css_classes=["pc-task"],
        )
        self.algorithm = pn.widgets.Select(
            label="algorithm", sizing_mode="stretch_width", css_classes=["pc-algorithm"]
        )
        self.algorithm.param.watch(self._pick, "value")
        s.param.watch(self._sync_algorithms, ["task", "algorithm"])
        self._sync_algorithms()
        self.epsilon = epsilon_slider(s.epsilon)
        # "value", not "value_throttled": a keyboard step changes only "value" (the page's
        # sliders are throttled, so a drag still sends one value on release)
        self.epsilon.param.watch(lambda e: setattr(s, "epsilon", EPSILON_GRID[e.new]), "value")
        s.param.watch(lambda e: setattr(self.epsilon, "value", epsilon_index(e.new)), "epsilon")
        self.delta = pn.widgets.FloatInput.from_param(s.param.delta, step=1e-6, format="0.000000")
        self.seed = pn.widgets.IntInput.from_param(s.param.seed, css_classes=["pc-seed"])
        self.seed_note = md(
            "Private data: every release draws fresh randomness; the seed "
            "applies to demo data only.",
            css_classes=["pc-seed-note"],
        )
        self.owner = pn.widgets.Checkbox.from_param(s.param.owner_view, css_classes=["pc-owner"])
        self.release = pn.widgets.Button(
            label="Release",
            color="primary",
            sizing_mode="stretch_width",
            css_classes=["pc-release"],
        )
        self.release.on_click(lambda e: self.lab.param.trigger("release"))
        self.demo_note = md("Demo data: results follow the sliders (no Release needed).")
        self.stale_note = md("Settings changed since the last release.")
        self.lab.param.watch(self._actions, ["mode", "running", "stale"])
        s.param.watch(self._show_privacy_inputs, ["algorithm"])
        self.box = self._box_panel()
        self._actions()
        self._show_privacy_inputs()

    def _sync_algorithms(self, *events):
        s = self.lab.settings
        options = {s.title(catalogue.by_key(k, s.specs)): k for k in s.param.algorithm.objects}
        self.algorithm.param.update(options=options, value=s.algorithm)

    def _pick(self, event):
        if event.new is not None and event.new != self.lab.settings.algorithm:
            self.lab.settings.algorithm = event.new

    @param.depends("lab.settings.algorithm", "lab.settings.algo", "lab.stale", "lab.result")
    def _kind(self):
        s = self.lab.settings
        spec = s.spec
        if spec is None:
            return md("No algorithm of this task is available yet.")
        try:
            kind = self.lab.kind(spec)
        except ValueError as exc:  # public settings only: safe to show in full
            return md(
                f"**{spec.label}**: these settings are not valid for this data: "
                f"{escape(exc)}. Nothing can run until they are changed.",
                css_classes=["pc-kind", "pc-kind-invalid"],
            )
        label = {"cell": "cell-level", "none": "NOT private"}.get(kind, kind)
        extra = ""
        if kind == "none" and self.lab.mode == "private":
            extra = (
                " On private data it runs only in the data owner view, marked NOT "
                "PRIVATE; it is never released or downloaded."
                if s.owner_view
                else " Release refuses it on private data."
            )
        return md(
            f"**{spec.label}** — *{label}*: {catalogue.KIND_TEXT[kind]}{extra}",
            css_classes=["pc-kind"],
        )

    @param.depends(
        "lab.settings.task",
        "lab.settings.n_clusters",
        "lab.settings.epsilon",
        "lab.data.dataset",
        "lab.ledger.active",
    )
    def _kmeans_advice(self):
        """Which private k-means the real-data benchmark recommends for these public facts."""
        s = self.lab.settings
        shape = public_shape(self.lab) if s.task == "kmeans" else None
        if shape is None:
            return md("")
        n, d, unit = shape
        return md(
            kmeans_advice(n, d, s.n_clusters, s.epsilon, unit), css_classes=["pc-kmeans-advice"]
        )

    @param.depends("lab.mode", "lab.settings_changed", "lab.ledger.spent", "lab.result")
    def _cost(self):
        """What Release would charge with the current settings, before it is pressed."""
        note = self.lab.cost_note()
        return md(escape(note), css_classes=["pc-cost"]) if note else md("")

    def _show_privacy_inputs(self, *events):
        spec = self.lab.settings.spec
        self.epsilon.visible = spec is not None and spec.uses_epsilon
        self.delta.visible = spec is not None and spec.uses_delta

    @param.depends("lab.settings.algo")
    def _params(self):
        """Parameter widgets generated from the spec (fresh objects on every render). Rendered
        only when ``algo`` is replaced, which a new algorithm always does, so the widgets are
        sent once: a second render would replace a slider the user is moving by one showing
        (and using) the default."""
        s = self.lab.settings
        spec = s.spec
        if spec is None:
            return pn.Column()
        items = []
        if spec.task_params:
            items.append(
                pn.Param(
                    s,
                    parameters=list(spec.task_params),
                    show_name=False,
                    sizing_mode="stretch_width",
                )
            )
        if spec.uses_box:
            items.append(self.box)
        if s.algo is not None and spec.params:
            # a slider cannot hold "not set": optional numbers (e.g. DP-tauCC's row cap, the
            # 1-cluster grid step) get a number box that may stay empty
            optional = {
                name: (
                    pn.widgets.IntInput if isinstance(p, param.Integer) else pn.widgets.FloatInput
                )
                for name, p in s.algo.param.objects().items()
                if isinstance(p, param.Number) and p.allow_None
            }
            items.append(
                pn.Param(s.algo, show_name=False, sizing_mode="stretch_width", widgets=optional)
            )
        return pn.Column(*items, sizing_mode="stretch_width")

    def _box_panel(self):
        """The public box, one value for all columns or one pair per column (a table typed in
        or pasted), with what it is and why it must not come from the data; on private data
        the "Suggest bounds" action (a small, charged release, forecast before it is asked
        for) and, in the data owner view, the share of records outside the box."""
        s = self.lab.settings
        self.suggest = pn.widgets.Button(
            label="Suggest bounds (spends ε)",
            color="warning",
            css_classes=["pc-suggest-bounds"],
            sizing_mode="stretch_width",
        )
        self.suggest.on_click(lambda e: self.lab.worker(self.lab.suggest_bounds))
        # the table shows the box per column; it is edited as text (typed or pasted lines),
        # which needs no table editor in the browser (and so nothing beyond Bokeh's own code)
        self._syncing = False
        # a plain HTML table: Panel's DataFrame pane would fetch its stylesheet from a CDN
        self.box_table = pn.pane.HTML(
            self._box_html(),
            sizing_mode="stretch_width",
            max_height=220,
            styles={"overflow": "auto"},
            css_classes=["pc-box-table"],
        )
        self.box_paste = pn.widgets.TextAreaInput(
            label="box per column: edit or paste one line per column",
            value=self._box_lines(),
            rows=4,
            sizing_mode="stretch_width",
            placeholder="name, lower, upper (or lower, upper in column order; commas, tabs or "
            "spaces; one line alone applies to every column)",
            css_classes=["pc-box-paste"],
        )
        self.box_paste.param.watch(self._on_box_paste, "value")
        self.box_error = pn.pane.Alert(
            "",
            alert_type="danger",
            visible=False,
            css_classes=["pc-box-error"],
            sizing_mode="stretch_width",
        )
        s.param.watch(self._sync_box_table, ["feature_box", "feature_names", "lower", "upper"])
        private = pn.Column(
            md(
                "**Suggest bounds** spends ε on a noisy histogram of each column over "
                "power-of-two buckets (±2^j), searched up to the largest magnitude you know to be "
                "possible; the result is a box per column and a release like any other "
                "(charged, listed in the ledger). The forecast below uses public facts only and "
                "costs nothing."
            ),
            pn.Param(
                s,
                parameters=["bounds_epsilon", "bounds_largest", "bounds_smallest"],
                show_name=False,
                sizing_mode="stretch_width",
            ),
            pn.widgets.Checkbox.from_param(s.param.bounds_anyway, css_classes=["pc-bounds-anyway"]),
            self._forecast,
            self.suggest,
            self._outside,
            sizing_mode="stretch_width",
            visible=self.lab.param.mode.rx() == "private",
        )
        return pn.Column(
            pn.Param(
                s, parameters=["lower", "upper"], show_name=False, sizing_mode="stretch_width"
            ),
            md("Or one box per column:", css_classes=["pc-help"]),
            self.box_table,
            self.box_paste,
            self.box_error,
            md(
                "The **public box** clips every record to [lower, upper] in each feature and sets "
                "the noise scale. It must come from what is known about the data's domain (units, "
                "a sensor's range), never from the records: bounds computed from the data would "
                "leak them. Too small a box clips the data (centres pile up on its edge); too "
                "large a box drowns the result in noise.",
                css_classes=["pc-help", "pc-box-help"],
            ),
            private,
            sizing_mode="stretch_width",
        )

    def _box_frame(self):
        s = self.lab.settings
        d = len(s.feature_names)
        lo, hi = s.box_arrays(d)
        return pd.DataFrame(
            {
                "column": list(s.feature_names),
                "lower": [f"{v:g}" for v in lo],
                "upper": [f"{v:g}" for v in hi],
            }
        )

    def _box_html(self):
        """The box per column as an HTML table (names and numbers escaped)."""
        return self._box_frame().to_html(index=False, escape=True, border=0)

    def _box_lines(self):
        return "\n".join(", ".join(row) for row in self._box_frame().astype(str).values)

    def _sync_box_table(self, *events):
        self._syncing = True
        try:
            self.box_table.object = self._box_html()
            self.box_paste.value = self._box_lines()
        finally:
            self._syncing = False

    def _on_box_paste(self, event):
        text = (event.new or "").strip()
        if self._syncing or not text:
            return
        try:
            lower, upper = parse_box_lines(text, self.lab.settings.feature_names)
            self.lab.settings.set_feature_box(lower, upper)
        except ValueError as exc:
            self.box_error.param.update(object=escape(str(exc)), visible=True)
            return
        self.box_error.visible = False
        self._sync_box_table()

    @param.depends(
        "lab.settings.bounds_epsilon",
        "lab.settings.bounds_largest",
        "lab.settings.bounds_smallest",
        "lab.data.dataset",
        "lab.ledger.unit",
    )
    def _forecast(self):
        try:
            forecast = self.lab.bounds_forecast()
        except ValueError as exc:
            return md(f"Forecast: {escape(exc)}", css_classes=["pc-bounds-forecast"])
        if forecast is None:
            return md("")
        return md(
            f"**Forecast (free):** {escape(forecast.message())}", css_classes=["pc-bounds-forecast"]
        )

    @param.depends(
        "lab.settings.lower",
        "lab.settings.upper",
        "lab.settings.feature_box",
        "lab.settings.owner_view",
        "lab.data.dataset",
    )
    def _outside(self):
        share = self.lab.outside_share()
        if share is None:
            return md("")
        return md(
            f"NOT PRIVATE (data owner view): **{100 * share:.1f} %** of the records lie "
            "outside this box.",
            css_classes=["pc-outside-share"],
        )

    def _actions(self, *events):
        lab = self.lab
        private = lab.mode == "private"
        self.demo_note.visible = not private
        self.seed.visible, self.seed_note.visible = not private, private
        self.owner.visible = private and self.lab.settings.owner_allowed
        self.release.visible = private
        self.release.disabled = lab.running
        self.stale_note.visible = private and lab.stale

    def __panel__(self):
        return pn.Column(
            "### Task and algorithm",
            self.task,
            self.algorithm,
            # updated in place (a changed text travels, not a new pane): they re-run on
            # every slider step of every session
            pn.param.ParamMethod(self._kind, inplace=True),
            pn.param.ParamMethod(self._kmeans_advice, inplace=True),
            self.epsilon,
            self.delta,
            self._params,
            self.seed,
            self.seed_note,
            self.demo_note,
            self.owner,
            pn.param.ParamMethod(self._cost, inplace=True),
            self.release,
            LargeDataProgress(lab=self.lab),
            self.stale_note,
            sizing_mode="stretch_width",
        )


class LedgerPanel(View):
    """Total / spent / remaining, every charge (its relation and converted cost) and the stored
    releases of the current private dataset; a stored release can be re-opened (no charge)."""

    def __init__(self, **params):
        super().__init__(**params)
        self.picker = pn.widgets.Select(
            label="stored releases",
            options={},
            sizing_mode="stretch_width",
            css_classes=["pc-release-picker"],
        )
        self.reopen = pn.widgets.Button(
            label="Re-open release",
            color="light",
            css_classes=["pc-reopen"],
            sizing_mode="stretch_width",
        )
        self.reopen.on_click(lambda e: self._reopen())
        self.lab.ledger.param.watch(self._sync_picker, ["releases", "active"])
        self._sync_picker()

    def _sync_picker(self, *events):
        lg = self.lab.ledger
        options = {
            f"#{r['id']} {r['time']:%Y-%m-%d %H:%M} UTC · {r['estimator']} · ε {r['epsilon']:g}": r[
                "id"
            ]
            for r in lg.releases[::-1]
        }
        # the browser shows the first option as chosen: the server must hold the same choice
        # (Panel keeps a Select's value None when only its options change, and a Re-open
        # pressed before the browser sent its choice back did nothing)
        value = self.picker.value
        if value not in options.values():
            value = next(iter(options.values()), None)
        self.picker.param.update(options=options, value=value)
        visible = lg.active and bool(options)
        self.picker.visible = self.reopen.visible = visible

    def _reopen(self):
        if self.picker.value is not None:
            self.lab.open_release(self.picker.value)

    @param.depends(
        "lab.ledger.total",
        "lab.ledger.spent",
        "lab.ledger.active",
        "lab.ledger.history",
        "lab.ledger.releases",
    )
    def _ledger(self):
        lg = self.lab.ledger
        if not lg.active:
            text = (
                "Demo data: no budget is used."
                if self.lab.mode == "demo"
                else f"No budget ledger: {escape(lg.error)}"
            )
            return md(text, css_classes=["pc-ledger"])
        (te, td), (se, sd), (re_, rd) = lg.total, lg.spent, lg.remaining
        unit = "replace-one record" if lg.unit == "replace" else "add/remove one record"
        head = md(
            f"Total ε **{te:g}** (δ {td:g}) · spent ε **{se:g}** (δ {sd:g}) · "
            f"remaining ε **{re_:g}** (δ {rd:g}). Counted per {unit}; reloading, "
            "reordering the records or a view of the same source shares this budget.",
            css_classes=["pc-ledger"],
        )
        bar = pn.indicators.Progress(
            value=int(round(100 * se / te)) if te else 0,
            max=100,
            sizing_mode="stretch_width",
            bar_color="danger",
        )
        items = [head, bar]
        if not lg.history:
            items.append(md("No charges yet."))
        else:
            rows = []
            for h in lg.history[::-1]:
                note = relation_note(h["relation"], h["requested_epsilon"], h["epsilon"], lg.unit)
                what = str(h.get("what", "")).split("(")[0]
                result = {
                    "failed": " — failed: nothing released",
                    "pending": " — release pending",
                }.get(h.get("result"), "")
                rows.append(
                    {
                        "UTC": f"{h['when']:%H:%M}" if h.get("when") else "",
                        "ε": f"{h['epsilon']:.4g}",
                        "δ": f"{h['delta']:.2g}",
                        "what": what[:40] + (f" ({note})" if note else "") + result,
                    }
                )
            # the sidebar is narrow: few columns, the rest scrolls inside the table's box
            items.append(
                pn.pane.DataFrame(
                    pd.DataFrame(rows),
                    escape=True,
                    index=False,
                    sizing_mode="stretch_width",
                    max_height=220,
                    styles={"overflow": "auto"},
                    css_classes=["pc-history"],
                )
            )
        if lg.releases:
            df = pd.DataFrame(
                [
                    {
                        "#": r["id"],
                        "UTC": f"{r['time']:%m-%d %H:%M}",
                        "algorithm": r["estimator"],
                        "ε": f"{r['epsilon']:.4g}",
                    }
                    for r in lg.releases[::-1]
                ]
            )
            items += [
                md("**Stored releases** (public once made; re-opening one charges nothing):"),
                pn.pane.DataFrame(
                    df,
                    escape=True,
                    index=False,
                    sizing_mode="stretch_width",
                    max_height=220,
                    styles={"overflow": "auto"},
                    css_classes=["pc-releases"],
                ),
            ]
        return pn.Column(*items, sizing_mode="stretch_width")

    def __panel__(self):
        return pn.Column(
            "### Budget ledger", self._ledger, self.picker, self.reopen, sizing_mode="stretch_width"
        )
