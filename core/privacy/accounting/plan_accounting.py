"""Tight accounting of a fixed plan of releases (privacy loss distributions, Renyi DP).

A *plan* is a list of private releases chosen before any of them runs. Because nothing in it
depends on an earlier output, the whole plan is one mechanism, and its cost can be computed by
a tight composition theorem instead of summing the releases' (epsilon, delta):

* **basic** composition: the releases' costs, each converted to the ledger's unit exactly as
  :meth:`Ledger.cost` does, add up (Dwork & Roth, *The Algorithmic Foundations of Differential
  Privacy*, 2014, Thm 3.16). This is what charging the releases one by one would cost.
* **PLD**: the privacy loss distributions of the plan's mechanisms are composed numerically
  (Koskela, Jalko & Honkela, AISTATS 2020; Doroshenko, Ghazi, Kamath, Kumar & Manurangsi,
  PETS 2022), with Google's ``dp_accounting`` library (``dp_accounting.pld``; pessimistic
  discretisation, so the result is an upper bound).
* **RDP** (cross-check): Renyi DP of order alpha adds up (Mironov, CSF 2017), converted to
  (epsilon, delta) by ``dp_accounting.rdp``. Usually a little looser than PLD; unavailable
  when a step is an approximate (epsilon, delta > 0) black box.

Events
------
Every release's :class:`~privclust.core.privacy.accounting.guarantee.Guarantee` lists its mechanisms as
:class:`~privclust.core.privacy.accounting.guarantee.Spend` (name, epsilon, delta, sensitivity). Each is
mapped to one event, in the release's own neighbouring relation:

=====================  ======================================================  ===============
event                  when                                                    parameters
=====================  ======================================================  ===============
``laplace``            a Laplace mechanism (delta = 0)                          noise multiplier
                                                                               b/Delta_1 = 1/eps
``gaussian``           a plain Gaussian mechanism (delta > 0)                   noise multiplier
                                                                               sigma/Delta_2 =
                                                                               analytic sigma
                                                                               at (eps, delta)
``epsilon_delta``      anything else: exponential mechanism, AboveThreshold,    (eps, delta)
                       stable histograms, NoisyAVG, smooth-sensitivity noise,
                       a Gibbs sample of the exponential mechanism
=====================  ======================================================  ===============

Why this is sound: a Laplace mechanism that is eps-DP has b/Delta_1 >= 1/eps, and a Gaussian
mechanism that is (eps, delta)-DP has sigma/Delta_2 >= the analytic sigma of Balle & Wang
(ICML 2018) at (eps, delta), which is exact; a smaller noise multiplier only makes the modelled
mechanism less private. An ``epsilon_delta`` step is modelled by the worst (eps, delta)-DP pair
(Kairouz, Oh & Viswanath, ICML 2015), whose PLD is ``from_privacy_parameters``; dp-accounting
0.6 has no EpsilonDeltaDpEvent, so :meth:`PlanEvent.to_dp_event` names a pure step's event
``RandomizedResponseDpEvent(2 / (1 + e^eps), 2)`` (binary randomised response, the same worst
pair) and an approximate one ``UnsupportedDpEvent``.

Which steps are which, per algorithm (matched on the Spend names, in this order):

* a step whose name contains "share", or a release whose warnings say its steps are "not
  separate guarantees" (SuLQ composed by zCDP): the whole release is ONE ``epsilon_delta``
  event of its total (eps, delta) -- its steps are not individually (eps_i, delta_i)-DP;
* "smooth", "noisyavg", "histogram", "abovethreshold", "exponential", "gibbs", "goodcenter",
  "goodradius" (the 1-cluster and subspace sub-steps, whole or composite): ``epsilon_delta``,
  except the GoodRadius zero-radius test, named "(Laplace on L(0))": ``laplace``;
* DPTauCoClustering "table ..." (ComputeT, Laplace on the contingency table, Battaglia & Pensa,
  SDM 2025, Alg. 2): ``laplace``; "assign ..." (the range exponential mechanism): ``epsilon_delta``;
* otherwise "laplace" in the name (DPLloyd's count/sum noise, the sketch of Schellekens et al.,
  SPARS 2019, Thm 1, the sketch's noisy count): ``laplace`` when delta = 0;
  "gaussian" (the sketch's Gaussian variant, SuLQ scatter matrices): ``gaussian`` when delta > 0;
* anything else: ``epsilon_delta``.

A step that matches no rule is never made tighter than its own (eps, delta).

Converting to the ledger's unit (the same group-privacy rules as
:mod:`privclust.core.privacy.accounting.relations`): an add/remove release on a replace-one ledger has
twice the sensitivity (replace = remove + add), so Laplace and Gaussian noise multipliers are
halved and an ``epsilon_delta`` step costs (2 eps, (1 + e^eps) delta); a cell-level release with
a public row cap L has 2 floor(L) ceil(1/c) times the sensitivity (the ledger's factor,
:func:`~privclust.core.privacy.accounting.relations.cell_steps`) (pure steps only); a replace-one release
cannot be counted on an add/remove ledger (refused).
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, cast

from .._validation import check_delta
from ..mechanisms.gaussian import analytic_gaussian_sigma
from .guarantee import Guarantee
from .relations import RelationError, cell_steps, check_unit, convert

__all__ = [
    "PlanEvent",
    "PlanAccounting",
    "events_for_guarantee",
    "convert_events",
    "compose_pld",
    "compose_rdp",
    "account_plan",
    "account_guarantees",
    "gaussian_epsilon",
]

KINDS = ("laplace", "gaussian", "epsilon_delta")
ACCOUNTINGS = ("pld", "rdp", "basic")

_BLACK_BOX = (
    "smooth",
    "noisyavg",
    "histogram",
    "abovethreshold",
    "exponential",
    "gibbs",
    "goodcenter",
    "goodradius",
    "unused",
)


@dataclass(frozen=True)
class PlanEvent:
    """One mechanism of a plan: ``kind`` ("laplace", "gaussian", "epsilon_delta"), ``name``,
    the (``epsilon``, ``delta``) the step claims, its ``noise_multiplier`` (noise scale over
    sensitivity, Laplace and Gaussian only), the index of its ``release`` in the plan and the
    ``relation`` it is expressed in."""

    kind: str
    name: str
    epsilon: float
    delta: float = 0.0
    noise_multiplier: float | None = None
    release: int = 0
    relation: str = "replace"

    def to_dp_event(self) -> Any:
        """The ``dp_accounting.DpEvent`` of this step (see the module docstring)."""
        import dp_accounting

        if self.kind == "laplace":
            return dp_accounting.LaplaceDpEvent(self.noise_multiplier)
        if self.kind == "gaussian":
            return dp_accounting.GaussianDpEvent(self.noise_multiplier)
        if self.delta == 0:
            # 2 / (1 + e^eps), written with e^-eps so that a large epsilon does not overflow
            tail = math.exp(-self.epsilon)
            return dp_accounting.RandomizedResponseDpEvent(2.0 * tail / (1.0 + tail), 2)
        return dp_accounting.UnsupportedDpEvent()

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "noise_multiplier": self.noise_multiplier,
            "release": self.release,
            "relation": self.relation,
        }


def _classify(name: str, delta: float, estimator: str | None) -> str:
    low = name.lower().replace("-", "").replace(" ", "")
    if "laplaceonl(0)" in low:
        return "laplace" if delta == 0 else "epsilon_delta"
    if any(word in low for word in _BLACK_BOX):
        return "epsilon_delta"
    if estimator == "DPTauCoClustering":
        if low.startswith("table") and delta == 0:
            return "laplace"
        return "epsilon_delta"
    if "laplace" in low and delta == 0:
        return "laplace"
    if "gaussian" in low and delta > 0:
        return "gaussian"
    return "epsilon_delta"


def events_for_guarantee(
    guarantee: Guarantee, estimator: str | None = None, release: int = 0
) -> list[PlanEvent]:
    """The events of one release (a :class:`Guarantee` with its mechanisms), in its own relation.

    ``estimator`` is the estimator's class name (used for the rules that are per algorithm).
    A release whose mechanisms do not add up to its (epsilon, delta), or that lists none, is
    one ``epsilon_delta`` event of its total.
    """
    if not isinstance(guarantee, Guarantee):
        raise TypeError(f"guarantee must be a Guarantee, got {type(guarantee).__name__}")
    if not guarantee.is_private:
        raise ValueError(
            "a release without a privacy guarantee (kind 'none') has no events: it "
            "cannot be part of a private plan"
        )
    rel = cast(str, guarantee.neighbouring)  # a private guarantee names its relation
    whole = [
        PlanEvent(
            "epsilon_delta",
            f"{estimator or 'release'} (whole)",
            guarantee.epsilon,
            guarantee.delta,
            None,
            release,
            rel,
        )
    ]
    mechs = [m for m in guarantee.mechanisms if m.epsilon > 0 or m.delta > 0]
    if not mechs:
        return whole
    eps_sum = math.fsum(m.epsilon for m in mechs)
    delta_sum = math.fsum(m.delta for m in mechs)
    if (
        eps_sum > guarantee.epsilon * (1 + 1e-9)
        or delta_sum > guarantee.delta * (1 + 1e-9) + 1e-300
    ):
        return whole
    if any("share" in m.name.lower() for m in mechs) or any(
        "not separate guarantees" in w for w in guarantee.warnings
    ):
        return whole
    events = []
    for m in mechs:
        kind = _classify(m.name, m.delta, estimator)
        if kind == "laplace":
            events.append(PlanEvent(kind, m.name, m.epsilon, 0.0, 1.0 / m.epsilon, release, rel))
        elif kind == "gaussian":
            events.append(
                PlanEvent(
                    kind,
                    m.name,
                    m.epsilon,
                    m.delta,
                    analytic_gaussian_sigma(m.epsilon, m.delta, 1.0),
                    release,
                    rel,
                )
            )
        else:
            events.append(PlanEvent(kind, m.name, m.epsilon, m.delta, None, release, rel))
    return events


def convert_events(
    events: Iterable[PlanEvent],
    unit: str = "replace",
    row_cap: float | None = None,
    cell_bound: float = 1.0,
) -> list[PlanEvent]:
    """The events re-expressed in the ledger's ``unit`` (see the module docstring); raises
    :class:`~privclust.core.privacy.accounting.relations.RelationError` when they cannot be counted."""
    check_unit(unit)
    out = []
    for ev in events:
        rel = ev.relation
        if rel == unit:
            out.append(ev)
            continue
        if unit == "add_remove":
            raise RelationError(f"a {rel!r} release cannot be charged to an add/remove ledger")
        if rel == "add_remove":
            factor = 2
        elif rel == "cell":
            if row_cap is None:
                raise RelationError(
                    "a cell-level release needs a public row cap (row_cap) to be "
                    "counted on a record-level ledger"
                )
            if ev.delta != 0:
                raise RelationError("cell-level releases are converted for pure steps only")
            factor = cell_steps(row_cap, cell_bound)  # the ledger's own factor
        else:
            raise RelationError(f"unknown neighbouring relation {rel!r}")
        if ev.kind in ("laplace", "gaussian"):
            if rel == "add_remove" and ev.kind == "gaussian":
                eps, delta = (float(x) for x in convert(ev.epsilon, ev.delta, rel, unit))
            else:
                eps, delta = factor * ev.epsilon, factor * ev.delta
            out.append(
                PlanEvent(
                    ev.kind,
                    ev.name,
                    eps,
                    delta,
                    cast(float, ev.noise_multiplier) / factor,
                    ev.release,
                    unit,
                )
            )
        else:
            eps, delta = (
                float(x)
                for x in convert(
                    ev.epsilon, ev.delta, rel, unit, row_cap=row_cap, cell_bound=cell_bound
                )
            )
            out.append(PlanEvent(ev.kind, ev.name, eps, delta, None, ev.release, unit))
    return out


def _grouped(events: Iterable[PlanEvent]) -> dict[tuple[Any, ...], int]:
    groups: dict[tuple[Any, ...], int] = {}
    for ev in events:
        key = (
            ev.kind,
            ev.noise_multiplier if ev.kind != "epsilon_delta" else None,
            ev.epsilon if ev.kind == "epsilon_delta" else None,
            ev.delta if ev.kind == "epsilon_delta" else None,
        )
        groups[key] = groups.get(key, 0) + 1
    return groups


def compose_pld(
    events: Iterable[PlanEvent], delta: float, value_discretization_interval: float = 1e-4
) -> float:
    """Epsilon at ``delta`` of the composition of ``events`` by privacy loss distributions
    (``dp_accounting.pld``, pessimistic). Identical events are self-composed once.

    Parameters
    ----------
    events : sequence of PlanEvent
        In one neighbouring relation (see :func:`convert_events`).
    delta : float
        Target delta in [0, 1).
    value_discretization_interval : float
        The PLD's discretisation step (pessimistic rounding: an upper bound).

    Returns
    -------
    float
        0.0 for an empty plan; ``math.inf`` when a step's epsilon is too large for a PLD in
        floating point (e^epsilon overflows, epsilon > ~709): no tight bound is computed and
        the caller falls back to the basic sum.

    References
    ----------
    Koskela, A., Jalko, J. & Honkela, A. (2020). Computing tight differential privacy
    guarantees using FFT. AISTATS, Sec. 3. Doroshenko, V., Ghazi, B., Kamath, P., Kumar, R. &
    Manurangsi, P. (2022). Connect the dots: tighter discrete approximations of privacy loss
    distributions. PETS, Sec. 3.
    """
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    delta = check_delta(delta, "delta")
    step = value_discretization_interval
    total = None
    try:
        for (kind, nm, eps, dlt), count in _grouped(events).items():
            if kind == "laplace":
                one = pld.from_laplace_mechanism(nm, value_discretization_interval=step)
            elif kind == "gaussian":
                one = pld.from_gaussian_mechanism(nm, value_discretization_interval=step)
            else:
                one = pld.from_privacy_parameters(
                    common.DifferentialPrivacyParameters(eps, dlt),
                    value_discretization_interval=step,
                )
            part = one.self_compose(count) if count > 1 else one
            total = part if total is None else total.compose(part)
    except OverflowError:
        return math.inf
    if total is None:
        return 0.0
    return float(total.get_epsilon_for_delta(delta))


def compose_rdp(events: Sequence[PlanEvent], delta: float) -> float | None:
    """Epsilon at ``delta`` of the composition of ``events`` by Renyi DP (``dp_accounting.rdp``).

    Parameters
    ----------
    events : sequence of PlanEvent
    delta : float
        Target delta in [0, 1).

    Returns
    -------
    float or None
        None when an event is an approximate black box (RDP cannot express (eps, delta > 0)).

    References
    ----------
    Mironov, I. (2017). Renyi differential privacy. CSF, Prop. 1 and 3.
    """
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    if any(ev.kind == "epsilon_delta" and ev.delta > 0 for ev in events):
        return None
    acc = RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    for ev in events:
        acc.compose(ev.to_dp_event())
    if delta == 0:
        return (
            float(math.fsum(ev.epsilon for ev in events))
            if all(ev.kind != "gaussian" for ev in events)
            else math.inf
        )
    return float(acc.get_epsilon(delta))


def gaussian_epsilon(noise_multiplier: float, delta: float) -> float:
    """Exact epsilon of ONE Gaussian mechanism with sigma/Delta = ``noise_multiplier`` at
    ``delta``, by bisection: the closed form the PLD result is tested against (k Gaussians of
    multiplier s compose to one of multiplier s / sqrt(k)).

    Parameters
    ----------
    noise_multiplier : float
        sigma / Delta_2 > 0.
    delta : float
        In (0, 1).

    Returns
    -------
    float

    References
    ----------
    Balle, B. & Wang, Y.-X. (2018). Improving the Gaussian mechanism for differential privacy:
    analytical calibration and optimal denoising. ICML, Thm 8.
    """
    from scipy.optimize import brentq
    from scipy.special import log_ndtr, ndtr

    s = float(noise_multiplier)

    def excess(eps: float) -> float:
        return ndtr(0.5 / s - eps * s) - math.exp(eps + log_ndtr(-0.5 / s - eps * s)) - delta

    if excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
    return float(brentq(excess, 0.0, hi, xtol=1e-12))


@dataclass
class PlanAccounting:
    """The cost of a fixed plan in one ledger unit.

    ``releases``: per release, a dict (estimator, relation, epsilon, delta of its own guarantee,
    ``cost`` = its separate cost in the unit, ``events`` in the unit). ``basic`` = the sum of
    the separate costs; ``pld_epsilon`` / ``rdp_epsilon`` the tight epsilons at ``delta``
    (``rdp_epsilon`` None when RDP cannot express a step); ``charge`` = the (epsilon, delta) a
    committed plan is charged under ``accounting`` (the smaller of the tight value and the basic
    sum when the basic delta fits within ``delta``).
    """

    unit: str
    delta: float
    releases: list
    basic: tuple
    pld_epsilon: float
    rdp_epsilon: float | None
    accounting: str
    charge: tuple
    notes: list = field(default_factory=list)

    @property
    def events(self) -> list[PlanEvent]:
        return [ev for r in self.releases for ev in r["events"]]

    def event_table(self) -> list[dict[str, Any]]:
        """One dict per event (for a table in a UI or notebook)."""
        return [
            {
                "release": ev.release,
                "estimator": self.releases[ev.release]["estimator"],
                **ev.to_dict(),
            }
            for ev in self.events
        ]

    def summary(self) -> str:
        e_b, d_b = self.basic
        rdp = "n/a" if self.rdp_epsilon is None else f"{self.rdp_epsilon:.4g}"
        return (
            f"{len(self.releases)} releases, {self.unit} unit: basic composition "
            f"({e_b:.4g}, {d_b:.3g}); tight at delta={self.delta:.3g}: PLD {self.pld_epsilon:.4g}, "
            f"RDP {rdp}; charged ({self.charge[0]:.6g}, {self.charge[1]:.3g}) by "
            f"{self.accounting}"
        )


def account_guarantees(
    items: Iterable[tuple[str, Guarantee, dict[str, Any] | None]],
    unit: str = "replace",
    delta: float | None = None,
    accounting: str = "pld",
    value_discretization_interval: float = 1e-4,
) -> "PlanAccounting":
    """Account a plan given as ``items`` = [(estimator name, Guarantee, ledger options dict)].

    Parameters
    ----------
    items : sequence of (str, Guarantee, dict)
        Per release: the estimator's name, its planned guarantee and its ledger options
        (``row_cap``, ``cell_bound`` for a cell-level release).
    unit : {"replace", "add_remove"}
        The ledger's unit; every release's events are converted to it.
    delta : float, optional
        The target delta of the tight totals (default: the basic total's delta, so both totals
        are compared at the same delta; for a pure plan that is 0, where tight composition
        cannot beat the sum).
    accounting : {"pld", "rdp", "basic"}
        What the ``charge`` uses.
    value_discretization_interval : float
        The PLD's discretisation step.

    Returns
    -------
    PlanAccounting
        See :func:`account_plan`.

    References
    ----------
    Dwork, C. & Roth, A. (2014). The Algorithmic Foundations of Differential Privacy,
    Thm 3.16 (basic composition). Koskela, A., Jalko, J. & Honkela, A. (2020). AISTATS
    (privacy loss distributions). Mironov, I. (2017). Renyi differential privacy. CSF.
    """
    check_unit(unit)
    if accounting not in ACCOUNTINGS:
        raise ValueError(f"accounting must be one of {ACCOUNTINGS}, got {accounting!r}")
    items = list(items)
    if not items:
        raise ValueError("a plan needs at least one release")
    releases: list[dict[str, Any]] = []
    eps_b, delta_b = Decimal(0), Decimal(0)
    for i, (name, guarantee, options) in enumerate(items):
        options = dict(options or {})
        if not guarantee.is_private:
            raise ValueError(
                f"release {i} ({name}) is not private (kind 'none'): a plan holds "
                "private releases only"
            )
        cost = convert(
            guarantee.epsilon,
            guarantee.delta,
            cast(str, guarantee.neighbouring),
            unit,
            row_cap=options.get("row_cap"),
            cell_bound=options.get("cell_bound", 1.0),
        )
        events = convert_events(
            events_for_guarantee(guarantee, name, i),
            unit,
            row_cap=options.get("row_cap"),
            cell_bound=options.get("cell_bound", 1.0),
        )
        eps_b += cost[0]
        delta_b += cost[1]
        releases.append(
            {
                "estimator": name,
                "relation": guarantee.neighbouring,
                "kind": guarantee.kind,
                "epsilon": guarantee.epsilon,
                "delta": guarantee.delta,
                "cost": (float(cost[0]), float(cost[1])),
                "events": events,
            }
        )
    basic = (float(eps_b), float(delta_b))
    target = basic[1] if delta is None else check_delta(delta, "delta")
    if target >= 1:
        raise ValueError(f"the plan's delta {target!r} is >= 1: it protects nothing")
    all_events = [ev for r in releases for ev in r["events"]]
    pld_eps = compose_pld(all_events, target, value_discretization_interval)
    try:
        rdp_eps = compose_rdp(all_events, target)
    except ValueError:
        rdp_eps = None
    basic_ok = basic[1] <= target
    notes = []
    if accounting == "basic":
        if not basic_ok:
            raise ValueError(f"basic composition needs delta >= {basic[1]!r}, got {target!r}")
        charge_eps = basic[0]
    else:
        tight = pld_eps if accounting == "pld" else rdp_eps
        if tight is None:
            raise ValueError(
                "RDP cannot account this plan (an approximate black-box step); use accounting='pld'"
            )
        charge_eps = min(tight, basic[0]) if basic_ok else tight
        if pld_eps == math.inf and accounting == "pld":
            notes.append(
                "a step's epsilon is too large for a privacy loss distribution in "
                "floating point: no tight total, the basic sum is charged"
            )
        if basic_ok and basic[0] <= tight and math.isfinite(tight):
            notes.append(
                "the basic sum is not larger than the tight total at this delta "
                "(e.g. a pure plan at delta = 0): the plan is charged the sum"
            )
    if not math.isfinite(charge_eps) or charge_eps <= 0:
        raise ValueError(
            f"the plan has no finite epsilon at delta={target!r} (the steps' own "
            "deltas exceed it): raise delta"
        )
    if any(r["kind"] == "asymptotic" for r in releases):
        notes.append(
            "a Gibbs sampler (asymptotic) is counted as an exact sample of its "
            "exponential mechanism; a finite chain has no formal guarantee"
        )
    return PlanAccounting(
        unit,
        float(target),
        releases,
        basic,
        pld_eps,
        rdp_eps,
        accounting,
        (float(charge_eps), float(target)),
        notes,
    )


def account_plan(
    estimators: Iterable[Any],
    shape: Sequence[int],
    unit: str = "replace",
    delta: float | None = None,
    accounting: str = "pld",
    value_discretization_interval: float = 1e-4,
) -> "PlanAccounting":
    """Account a fixed plan of private estimators run on data of public ``shape`` (n, d).

    Every estimator is planned (:meth:`PrivateEstimator.public_plan`: parameters validated, no
    data read); its mechanisms become events (module docstring), converted to ``unit``.

    Parameters
    ----------
    estimators : sequence of PrivateEstimator
        The plan, in order (unfitted).
    shape : tuple of int
        The data's public shape (n, d).
    unit, delta, accounting, value_discretization_interval
        As in :func:`account_guarantees`.

    Returns
    -------
    PlanAccounting
        The basic, PLD and RDP totals, the events per release and ``charge``, the (epsilon,
        delta) a committed plan is charged.

    References
    ----------
    Dwork, C. & Roth, A. (2014). The Algorithmic Foundations of Differential Privacy,
    Thm 3.16 (basic composition). Koskela, A., Jalko, J. & Honkela, A. (2020). AISTATS
    (privacy loss distributions). Mironov, I. (2017). Renyi differential privacy. CSF.
    """
    # imported here: privacy is the base layer, and the estimator base is built on it
    from ...estimator import PrivateEstimator

    items = []
    for i, est in enumerate(estimators):
        if not isinstance(est, PrivateEstimator):
            raise TypeError(f"plan entry {i} ({type(est).__name__}) is not a PrivateEstimator")
        items.append((type(est).__name__, est.public_plan(tuple(shape)), est.ledger_options()))
    return account_guarantees(items, unit, delta, accounting, value_discretization_interval)
