"""The Releases tab: the stored releases of the current private source side by side -- when,
which algorithm, its public parameters, what it cost and what it says about its own utility.

Everything shown is public: a stored release is public once made (its parameters, guarantee,
cost and released values), and the utility column is computed from the released values alone
(a released radius, the balance of a released table, centres on the box's faces), never from
the records. Re-opening a release (the sidebar) charges nothing.
"""

import numpy as np
import pandas as pd
import panel as pn
import param

from .. import catalogue
from ..state import box_faces, evaluation
from .common import View, md, teach

TEACH = """**Releases of this data.** Every release ever made from the loaded private source
(by any session: they are stored beside the ledger charge that paid for them), side by side:
what was asked (algorithm and parameters), what it cost, and what the release says about its
own quality. Utility that needs the records (an error, a cost on the data) is not shown: it is
not private. Re-open one in the sidebar's ledger to see its plots; that charges nothing."""

# parameters every release has, shown in their own columns (or not at all)
_SKIP = {"epsilon", "delta", "random_state", "ledger", "bounds"}


def public_utility(release, task):
    """Plain words for the quality a release states about itself, from its released values
    only (no record is read): a 1-cluster radius and success, a co-clustering table's
    balance, centres on the public box's faces, the guarantee's warnings."""
    parts = []
    attributes = release.attributes
    if task == "onecluster":
        balls = evaluation.balls_of(release)
        if balls is not None:
            parts.append(f"radius {float(np.max(balls[1])):.3g}")
        success = attributes.get("success_")
        if success is not None:
            ok = np.atleast_1d(np.asarray(success, dtype=bool))
            parts.append(f"{int(ok.sum())}/{ok.size} found")
    if task == "cocluster" and attributes.get("table_") is not None:
        from privclust.core import metrics

        try:
            parts.append(f"τ(R|C) {metrics.tau_rows(attributes['table_']):.3g}")
        except (ValueError, TypeError):
            pass
    bounds = release.params.get("bounds")
    centres = box_faces.released_centres(release)
    if bounds is not None and centres is not None and np.all(np.isfinite(centres)):
        try:
            faces = box_faces.on_faces(centres, *bounds)
            if faces.any():
                parts.append(f"{int(faces.sum())} centre coordinates on the box's faces")
        except ValueError:
            pass
    if release.guarantee.warnings:
        n = len(release.guarantee.warnings)
        parts.append(f"{n} warning{'s' * (n != 1)}")
    return "; ".join(parts) or "—"


def _value(v):
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (list, tuple)) and len(v) > 4:
        return f"({len(v)} values)"
    return str(v)


def table(releases, specs=None):
    """One row per release (newest first), one column per public parameter."""
    rows = []
    for r in sorted(releases, key=lambda r: r.id or 0, reverse=True):
        spec = catalogue.for_estimator(r.estimator, specs)
        eps, delta = r.cost
        row = {
            "#": r.id,
            "UTC": f"{r.time:%Y-%m-%d %H:%M}",
            "algorithm": spec.label if spec is not None else r.estimator,
            "ε asked": f"{float(r.guarantee.epsilon):g}",
            "ε charged": f"{float(eps):g}",
            "δ charged": f"{float(delta):.2g}",
            "guarantee": r.guarantee.summary(),
            "utility (from the release)": public_utility(r, spec.task if spec else None),
        }
        bounds = r.params.get("bounds")
        if bounds is not None:
            lo, hi = (np.atleast_1d(np.asarray(b, dtype=float)) for b in bounds)
            row["box"] = (
                f"[{lo[0]:g}, {hi[0]:g}]"
                if lo.size == 1 and hi.size == 1
                else f"per column ({lo.size})"
            )
        row.update(
            {
                k: _value(v)
                for k, v in sorted(r.params.items())
                if k not in _SKIP and not isinstance(v, dict)
            }
        )
        rows.append(row)
    return pd.DataFrame(rows).fillna("")


class ReleasesView(View):
    """The stored releases of the loaded private source, side by side."""

    @param.depends("lab.ledger.releases", "lab.ledger.active", "lab.data.dataset")
    def _table(self):
        lab = self.lab
        if lab.mode != "private":
            return md(
                "Demo data: nothing is released or stored; results follow the sliders. "
                "Load private data (upload or registry) to see its releases here.",
                css_classes=["pc-releases-view"],
            )
        curator = lab.ledger.curator
        if curator is None:
            return md(
                f"No budget ledger: {lab.ledger.error or 'no releases'}.",
                css_classes=["pc-releases-view"],
            )
        releases = curator.releases()
        if not releases:
            return md("No release of this data yet.", css_classes=["pc-releases-view"])
        df = table(releases, lab.settings.specs)
        return pn.Column(
            md(
                f"**{len(df)} release{'s' * (len(df) != 1)}** of this source (newest first).",
                css_classes=["pc-releases-view"],
            ),
            pn.pane.DataFrame(
                df,
                escape=True,
                index=False,
                sizing_mode="stretch_width",
                css_classes=["pc-releases-table"],
            ),
            sizing_mode="stretch_width",
        )

    def __panel__(self):
        return pn.Column(teach(TEACH), self._table, sizing_mode="stretch_width")
