"""Utility targets: ``"relative_sse <= 1.2"``, ``"nmi >= 0.8 x baseline"``."""

import re
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Target:
    """A utility target: ``metric`` ``op`` (``"<="`` or ``">="``) ``value``; with
    ``relative=True`` the value multiplies the non-private baseline on the twin."""

    metric: str
    op: str
    value: float
    relative: bool = False

    def threshold(self, baseline):
        if not self.relative:
            return float(self.value)
        if self.metric not in baseline:
            raise ValueError(f"no baseline value for metric {self.metric!r}")
        return float(self.value) * float(baseline[self.metric])

    def met(self, values, baseline):
        thr = self.threshold(baseline)
        values = np.asarray(values, dtype=np.float64)
        return values <= thr if self.op == "<=" else values >= thr

    def __str__(self):
        return f"{self.metric} {self.op} {self.value:g}" + (" x baseline" if self.relative else "")


def parse_target(text):
    """``"relative_sse <= 1.2"``, ``"nmi >= 0.8 x baseline"`` -> :class:`Target`.

    Parameters
    ----------
    text : str or Target

    Returns
    -------
    Target
    """
    if isinstance(text, Target):
        return text
    m = re.fullmatch(
        r"\s*([A-Za-z_][\w/]*)\s*(<=|>=)\s*([0-9.eE+-]+)\s*((x|\*)\s*baseline)?\s*", str(text)
    )
    if not m:
        raise ValueError(
            f"cannot read the target {text!r}; write e.g. 'relative_sse <= 1.2' or "
            "'nmi >= 0.8 x baseline'"
        )
    return Target(m.group(1), m.group(2), float(m.group(3)), bool(m.group(4)))
