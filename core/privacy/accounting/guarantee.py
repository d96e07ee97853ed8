"""Privacy guarantees attached to every private estimator: the kind (pure, approximate,
asymptotic, none), epsilon, delta, the neighbouring relation and the mechanisms spent."""

import math
from dataclasses import dataclass, field
from typing import Any

KINDS = ("pure", "approx", "asymptotic", "none")
NEIGHBOURINGS = ("replace", "add_remove", "cell")

_KIND_TEXT = {
    "pure": "pure",
    "approx": "approximate",
    "asymptotic": "asymptotic only (exact sampling would be private; no guarantee for a finite run)",
}
_NEIGHBOUR_TEXT = {
    "replace": "replace-one neighbours",
    "add_remove": "add/remove-one neighbours",
    "cell": "one-cell unit-change neighbours (much weaker than record privacy)",
}


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {value!r}") from None


def _fmt(x: float) -> str:
    return repr(float(x))


@dataclass(frozen=True)
class Spend:
    """One mechanism run: its name, (epsilon, delta) and sensitivity (None if not applicable)."""

    name: str
    epsilon: float
    delta: float = 0.0
    sensitivity: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "epsilon": float(self.epsilon),
            "delta": float(self.delta),
            "sensitivity": None if self.sensitivity is None else float(self.sensitivity),
        }


@dataclass
class Guarantee:
    """What a release promises: (epsilon, delta), kind, neighbouring relation, mechanisms, warnings.

    Parameters
    ----------
    epsilon : float
        Total epsilon (may be inf with kind "none").
    delta : float
        Total delta.
    kind : {"pure", "approx", "asymptotic", "none"}
        "pure" (delta = 0), "approx", "asymptotic" (an MCMC sampler whose exact target would be
        epsilon-DP) or "none" (no DP guarantee).
    neighbouring : {"replace", "add_remove", "cell"} or None
        The relation the guarantee is about; None only with kind "none".
    mechanisms : list of Spend, default=[]
        The mechanisms run, in order.
    warnings : list of str, default=[]
        Caveats computed from public values (e.g. delta > 1/n).

    References
    ----------
    Wang, Y., Wang, Y.-X. and Singh, A. (2015). Differentially private subspace clustering.
        NIPS 2015, Sec. 4 (a sampler whose exact target is DP: the kind "asymptotic").
    See docs/algorithms.md, section 1 (relations and kinds).
    """

    epsilon: float
    delta: float
    kind: str
    neighbouring: str | None
    mechanisms: list[Any] = field(default_factory=list)
    warnings: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.neighbouring not in NEIGHBOURINGS and not (
            self.kind == "none" and self.neighbouring is None
        ):
            raise ValueError(
                f"neighbouring must be one of {NEIGHBOURINGS}, got {self.neighbouring!r}"
            )
        self.epsilon = _number(self.epsilon, "epsilon")
        self.delta = _number(self.delta, "delta")
        if self.kind == "none":
            if math.isnan(self.epsilon) or self.epsilon < 0 or not 0.0 <= self.delta <= 1.0:
                raise ValueError(f"invalid (epsilon, delta) = ({self.epsilon}, {self.delta})")
        else:
            if not (math.isfinite(self.epsilon) and self.epsilon >= 0):
                raise ValueError(f"epsilon must be finite and >= 0, got {self.epsilon}")
            if not 0.0 <= self.delta < 1.0:
                raise ValueError(f"delta must satisfy 0 <= delta < 1, got {self.delta}")
            if self.kind in ("pure", "asymptotic") and self.delta != 0.0:
                raise ValueError(f"kind {self.kind!r} requires delta = 0, got {self.delta}")
        mechs = []
        for m in self.mechanisms:
            if isinstance(m, Spend):
                mechs.append(m)
            elif isinstance(m, dict):
                mechs.append(Spend(**m))
            else:
                mechs.append(Spend(*m))
        self.mechanisms = mechs
        self.warnings = [str(w) for w in self.warnings]

    @property
    def is_private(self) -> bool:
        """True unless kind is "none"."""
        return self.kind != "none"

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly dict (non-finite numbers become the strings "inf"/"nan")."""

        def num(x: float) -> float | str:
            return x if math.isfinite(x) else str(x)

        return {
            "epsilon": num(self.epsilon),
            "delta": num(self.delta),
            "kind": self.kind,
            "neighbouring": self.neighbouring,
            "mechanisms": [m.to_dict() for m in self.mechanisms],
            "warnings": list(self.warnings),
        }

    def summary(self) -> str:
        """One plain-language line, e.g. "(1.0, 1e-06)-DP, approximate, replace-one neighbours"."""
        if self.kind == "none":
            text = "not differentially private (no guarantee)"
        else:
            head = (
                f"{_fmt(self.epsilon)}-DP"
                if self.delta == 0
                else f"({_fmt(self.epsilon)}, {_fmt(self.delta)})-DP"
            )
            text = f"{head}, {_KIND_TEXT[self.kind]}, {_NEIGHBOUR_TEXT[str(self.neighbouring)]}"
        if self.warnings:
            n = len(self.warnings)
            text += f"; {n} warning{'s' if n > 1 else ''}"
        return text

    def __str__(self) -> str:
        return self.summary()
