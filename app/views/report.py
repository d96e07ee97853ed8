"""The Report tab: guarantee, mechanisms, metrics and the downloads of the current result."""

import json

import numpy as np
import pandas as pd
import panel as pn
import param

from .. import catalogue, export
from ..safety import escape
from . import teaching
from .clusters import ClustersView
from .common import View, md, teach
from .metrics import MetricsTable


def box_text(result, shown=8):
    """The public box the estimator was given (a release: as the Curator recorded it), per
    column with the column names; "" for estimators without a box."""
    release = result.release
    if release is not None:
        bounds = release.params.get("bounds")
    elif "lower" in (result.settings or {}):
        bounds = (result.settings["lower"], result.settings["upper"])
    else:
        bounds = None
    if bounds is None:
        return ""
    lo, hi = (np.atleast_1d(np.asarray(b, dtype=float)) for b in bounds)
    if lo.size == 1 and hi.size == 1:
        return f"[{lo[0]:g}, {hi[0]:g}] in every column"
    names = getattr(result.dataset, "feature_names", None) or [
        f"feature {j}" for j in range(lo.size)
    ]
    parts = [f"{names[j]} [{lo[j]:g}, {hi[j]:g}]" for j in range(min(lo.size, shown))]
    return ", ".join(parts) + (f", ... ({lo.size} columns)" if lo.size > shown else "")


class ReportView(View):
    """Guarantee, mechanisms, metrics and downloads of the current result."""

    @param.depends("lab.result", "lab.settings.owner_view")
    def _report(self):
        lab, result = self.lab, self.lab.result
        if result is None:
            return md("No result yet.")
        g = result.guarantee
        spec = result.spec
        release = result.release
        if result.owner_only:
            return pn.Column(
                md(
                    f"### NOT PRIVATE · {escape(spec.label)}\n\nComputed on the raw "
                    "data in the data owner view: not a release, never stored, "
                    "listed or downloaded.",
                    css_classes=["pc-report"],
                ),
                MetricsTable(lab=lab),
                sizing_mode="stretch_width",
            )
        lines = [
            f"### {spec.title(result.kind)}",
            f"**Privacy kind:** {catalogue.KIND_TEXT[result.kind]}",
            f"**Guarantee:** {escape(g.summary()) if g is not None else 'none (baseline)'}",
        ]
        if release is not None:
            eps, delta = release.cost
            lines.append(
                f"**Release #{release.id}** made {release.time:%Y-%m-%d %H:%M:%S} UTC; "
                f"charged ε {eps:g}"
                + (f", δ {delta:g}" if delta else "")
                + f" ({'replace-one' if release.unit == 'replace' else release.unit} "
                f"ledger). Randomness: {escape(release.randomness)}."
            )
        box = box_text(result)
        if box:
            lines.append(f"**Public box:** {escape(box)}")
        if result.from_cache:
            lines.append("*Answered from the release store: not charged again.*")
        if g is not None and g.warnings:
            lines.append("**Warnings:**\n" + "\n".join(f"- {escape(w)}" for w in g.warnings))
        items = [md("\n\n".join(lines), css_classes=["pc-report"])]
        if g is not None and g.mechanisms:
            df = pd.DataFrame([m if isinstance(m, dict) else m.to_dict() for m in g.mechanisms])
            items.append(
                pn.pane.DataFrame(df, escape=True, index=False, sizing_mode="stretch_width")
            )
        items.append(MetricsTable(lab=lab))
        payload = export.report_payload(result)
        items.append(
            pn.Row(
                pn.widgets.FileDownload(
                    callback=lambda: export.as_file(json.dumps(payload, indent=2)),
                    filename="privclust_result.json",
                    color="success",
                    label="Download results (JSON)",
                ),
                pn.widgets.FileDownload(
                    callback=lambda: export.as_file(export.report_csv(result)),
                    filename="privclust_result.csv",
                    color="success",
                    label="Download released outputs (CSV)",
                ),
                *(
                    [
                        pn.widgets.FileDownload(
                            callback=lambda: export.as_file(export.release_script(result)),
                            filename="privclust_release.py",
                            color="success",
                            label="Download a script to rerun it (Python)",
                        )
                    ]
                    if result.release is not None
                    else []
                ),
                pn.widgets.FileDownload(
                    callback=lambda: export.plot_html(ClustersView(lab=lab).figure(analyst=True)),
                    filename="privclust_clusters.html",
                    color="light",
                    label="Download plot (HTML)",
                ),
            )
        )
        return pn.Column(*items, sizing_mode="stretch_width")

    def __panel__(self):
        return pn.Column(teach(teaching.REPORT), self._report, sizing_mode="stretch_width")
