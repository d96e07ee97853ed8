"""The scores of the current result (evaluation-only ones only where raw data may be shown)."""

import panel as pn

from ..state import evaluation
from .common import View, md


class MetricsTable(View):
    """Scores of the current result; evaluation-only ones only when raw data may be shown."""

    def __panel__(self):
        lab, result = self.lab, self.lab.result
        if result is None:
            return pn.Column()
        base = lab.baseline(result) if lab.show_raw else None
        rows = [(n, v, e) for n, v, e in evaluation.metrics(result, base) if lab.show_raw or not e]
        if not rows:
            return md("No released metric for this result.")
        lines = [
            f"- {n}: **{v:.4g}**"
            + (
                " *(evaluation only, not private)*"
                if e and lab.mode == "private"
                else (" *(evaluation only)*" if e else "")
            )
            for n, v, e in rows
        ]
        return md("\n".join(lines), css_classes=["pc-metrics"])
