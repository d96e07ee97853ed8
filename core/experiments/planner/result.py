"""What a plan returns (:class:`PlanResult`): predictions, recommendations for a target, and
a fixed plan of releases accounted and committed on the private data."""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...privacy import BudgetExceeded
from ...privacy.accounting.plan_accounting import account_guarantees, account_plan
from ...privacy.accounting.relations import RelationError
from .facts import PublicFacts
from .scoring import PRIMARY, makers
from .targets import parse_target
from .twins import PRIOR_CITATIONS

# the interval of a prediction: the 10 % and 90 % quantiles over twins and trials
QUANTILES = (0.1, 0.9)
CAVEATS = {
    "all": (
        "predicted on a synthetic twin built from public facts: real data with other "
        "structure (cluster shapes, spread, imbalance, outliers) can do better or worse; the "
        "interval is the spread of trials on the twin, not a confidence bound on real data"
    ),
    "prior": (
        "predicted on an ensemble of synthetic twins whose difficulty is drawn from the "
        "papers' experimental ranges ({}); the interval spans twins and trials, so it is "
        "wide when the public facts say little; real data outside these ranges (e.g. "
        "non-Gaussian clusters, curved or affine subspaces, heavy-tailed counts) can "
        "still fall outside it, and the recommendation uses its pessimistic end"
    ),
    "sample": (
        "predicted on bootstrap twins of the public sample (plain and smoothed): they "
        "are as representative as the sample is; a small or unrepresentative sample "
        "(e.g. few documents, so few distinct words) can make the twins easier or harder "
        "than the private data; the interval is the envelope of both bootstraps' 10-90 % "
        "intervals, not a confidence bound, and the recommendation uses its pessimistic "
        "end"
    ),
    "grid": "the recommended epsilon is the smallest on the grid; a finer grid may find less",
    "gibbs": (
        "Gibbs: the guarantee is asymptotic (an exact sample of the exponential mechanism "
        "is epsilon-DP; a finite chain has no formal guarantee), and the twin ran short "
        "chains"
    ),
    "dp_taucc": (
        "DP-tauCC protects one unit of one cell, not a row: on a record-level ledger "
        "it costs 2 floor(row_cap) ceil(1 / cell_bound) x epsilon, and the twin's block signal "
        "is a declaration"
    ),
    "sample_aggregate": (
        "sample-and-aggregate: the NRS07 calibration is proven for small "
        "epsilon; its utility depends on the blocks' agreement, which the twin "
        "may overstate"
    ),
    "onecluster": "1-cluster: useful for small dimension only (GoodCenter needs very large n)",
}


@dataclass
class PlanResult:
    """What :func:`plan_utility` returns.

    ``trials``: one row per trial (algorithm, twin, epsilon, trial, seed, seconds, metrics);
    ``summary``: per (algorithm, epsilon, metric) the median, q10, q90, n; ``baseline``: the
    non-private reference per metric (median over twins); ``analytic``: (algorithm, epsilon,
    name, value) rows; ``facts``; ``stopped``; ``seconds``; ``prior`` (the structural prior's
    name, or None for one fixed twin setting); ``twins``: one row per twin with its drawn
    settings (the k-means ``fill`` averaged over features) and its baselines.
    """

    facts: PublicFacts
    trials: pd.DataFrame
    summary: pd.DataFrame
    baseline: dict
    analytic: pd.DataFrame
    epsilons: tuple
    settings: dict
    stopped: bool = False
    seconds: float = 0.0
    prior: str | None = None
    twins: pd.DataFrame = field(default_factory=pd.DataFrame)

    def predicted(self, algorithm, epsilon, metric=None):
        """(median, q10, q90) of ``metric`` (default: the family's primary) for one cell."""
        metric = metric or PRIMARY[self.facts.family][0]
        s = self.summary
        row = s[(s.algorithm == algorithm) & np.isclose(s.epsilon, epsilon) & (s.metric == metric)]
        if row.empty:
            raise KeyError(f"no prediction for {algorithm!r} at epsilon={epsilon} ({metric})")
        r = row.iloc[0]
        return float(r["median"]), float(r["q10"]), float(r["q90"])

    def cost(self, algorithm, epsilon):
        """(epsilon, delta) of one release of ``algorithm`` at ``epsilon`` in the ledger's unit
        (group-privacy conversion; a cell-level release needs ``row_cap`` in its settings)."""

        make = makers(self.facts.family)[algorithm]
        est = make(self.facts, float(epsilon), None, **self.settings.get(algorithm, {}))
        plan = getattr(est, "public_plan", None)
        if plan is None:  # an estimator not yet on the release protocol
            return float(epsilon), float(getattr(est, "delta", 0.0) or 0.0)

        try:
            return account_plan([est], self.facts.shape, self.facts.unit).basic
        except RelationError:
            return None  # cannot be counted in this unit (e.g. no row cap)
        except ValueError:
            # an (epsilon, delta) add/remove release converted to a replace-one unit by group
            # privacy: at a large epsilon its delta reaches 1, it protects nothing in this unit
            return None

    def _relative_summary(self, target):
        """Summary rows of metric / (the same twin's baseline) x the median baseline: with an
        ensemble of twins, a relative target is judged twin by twin (a run on an easy twin is
        compared with that twin's baseline), then expressed on the median baseline's scale so
        that ``target.threshold(self.baseline)`` still applies."""
        col = f"baseline_{target.metric}"
        t = self.trials
        if t.empty or col not in t.columns or target.metric not in t.columns:
            return None
        base = t[col].to_numpy(dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = t[target.metric].to_numpy(dtype=np.float64) / base
        ratio = np.where(base > 0, ratio, np.nan) * float(self.baseline[target.metric])
        g = pd.Series(ratio, index=t.index).groupby([t.algorithm, t.epsilon], sort=False)
        out = pd.DataFrame(
            {"median": g.median(), "q10": g.quantile(QUANTILES[0]), "q90": g.quantile(QUANTILES[1])}
        ).reset_index()
        return out

    def recommend(self, target, conservative=None):
        """Smallest epsilon per algorithm predicted to reach ``target`` (a :class:`Target` or a
        string, see :func:`parse_target`) at that epsilon and every larger one of the grid;
        with ``conservative`` the pessimistic quantile (q90 for "<=", q10 for ">=") must reach
        it. ``conservative=None`` (default) is True when the plan drew its twins from a
        structural prior or bootstrapped them from a public sample: the interval then states
        what the real data may be like (it is what the calibration on real data measures, not
        its median), so a recommendation meant to hold on the real data must hold at the
        interval's pessimistic end. It is False (the median rule) for one fixed twin, whose
        interval is only the spread of trials on that twin.
        A relative target on an ensemble is judged per twin (see ``_relative_summary``).

        Parameters
        ----------
        target : Target or str
            E.g. ``"relative_sse <= 1.2"`` or ``"nmi >= 0.8 x baseline"``.
        conservative : bool, optional
            Use the pessimistic end of the interval (default: True with a prior or a public
            sample, False for one fixed twin).

        Returns
        -------
        dict
            ``target``, ``threshold``, ``statistic``, ``per_algorithm`` {name: {epsilon, cost,
            predicted}}, ``best`` (the algorithm with the smallest cost in the ledger's unit,
            or None), ``caveats`` (strings).
        """
        target = parse_target(target)
        if conservative is None:
            conservative = self.prior is not None or self.facts.public_sample is not None
        thr = target.threshold(self.baseline)
        stat = "median" if not conservative else ("q90" if target.op == "<=" else "q10")
        per = {}
        s = self.summary[self.summary.metric == target.metric]
        if s.empty:
            raise ValueError(
                f"metric {target.metric!r} was not measured; available: "
                f"{sorted(self.summary.metric.unique())}"
            )
        if target.relative and (
            self.prior is not None
            or ("twin" in self.trials.columns and self.trials["twin"].nunique() > 1)
        ):
            # several twins (a prior, or bootstrap twins of a public sample): per twin
            rel = self._relative_summary(target)
            if rel is not None:
                s = rel.assign(metric=target.metric)
        for alg, part in s.groupby("algorithm", sort=False):
            part = part.sort_values("epsilon")
            ok = target.met(part[stat].to_numpy(), self.baseline)
            # smallest epsilon from which every larger grid point meets the target
            idx = None
            for i in range(len(ok) - 1, -1, -1):
                if not ok[i]:
                    break
                idx = i
            if idx is None:
                per[alg] = {"epsilon": None, "cost": None, "predicted": None}
                continue
            eps = float(part.epsilon.iloc[idx])
            r = part.iloc[idx]
            per[alg] = {
                "epsilon": eps,
                "cost": self.cost(alg, eps),
                "predicted": (float(r["median"]), float(r["q10"]), float(r["q90"])),
            }
        reached = {
            a: v for a, v in per.items() if v["epsilon"] is not None and v["cost"] is not None
        }
        best = (
            min(reached, key=lambda a: (reached[a]["cost"][0], reached[a]["cost"][1]))
            if reached
            else None
        )
        if self.facts.public_sample is not None:
            first = CAVEATS["sample"]
        elif self.prior is not None:
            first = CAVEATS["prior"].format(PRIOR_CITATIONS[self.facts.family])
        else:
            first = CAVEATS["all"]
        caveats = [first, CAVEATS["grid"]]
        caveats += [CAVEATS[a] for a in per if a in CAVEATS]
        uncounted = [a for a, v in per.items() if v["epsilon"] is not None and v["cost"] is None]
        if uncounted:
            caveats.append(
                f"{', '.join(uncounted)}: reaches the target but cannot be charged to "
                f"a {self.facts.unit!r} ledger with these settings (a cell-level "
                "release needs row_cap); not considered for the cheapest"
            )
        if self.stopped:
            caveats.append("the plan was stopped early: fewer trials than planned")
        return {
            "target": str(target),
            "threshold": thr,
            "statistic": stat,
            "per_algorithm": per,
            "best": best,
            "caveats": caveats,
        }

    # ---- a fixed plan of releases ---------------------------------------------------------------
    @staticmethod
    def recommended_releases(recommendation, which="best"):
        """The releases of a plan built from a recommendation, as [(algorithm, epsilon)].

        Parameters
        ----------
        recommendation : dict
            What :meth:`recommend` returned.
        which : {"best", "all"}
            ``"best"``: the cheapest algorithm alone; ``"all"``: every algorithm that reaches
            the target at a cost the ledger can count, each at its recommended epsilon.

        Returns
        -------
        list of (str, float)
            Empty when nothing qualifies.
        """
        per = recommendation["per_algorithm"]
        if which == "best":
            best = recommendation["best"]
            return [] if best is None else [(best, float(per[best]["epsilon"]))]
        if which != "all":
            raise ValueError(f"which must be 'best' or 'all', got {which!r}")
        return [
            (a, float(v["epsilon"]))
            for a, v in per.items()
            if v["epsilon"] is not None and v["cost"] is not None
        ]

    def estimators(self, releases):
        """The private estimators of a fixed plan, with the settings the planner ran on the twin.

        Parameters
        ----------
        releases : sequence of (str, float)
            (algorithm, epsilon) pairs, e.g. from :meth:`recommended_releases`.

        Returns
        -------
        list of PrivateEstimator
            Unfitted, ``random_state=None`` (a release draws fresh entropy), in order.
        """
        table = makers(self.facts.family)
        out = []
        for i, (alg, eps) in enumerate(releases):
            if alg not in table:
                raise ValueError(
                    f"releases[{i}]: unknown algorithm {alg!r} for family "
                    f"{self.facts.family!r}; available: {list(table)}"
                )
            out.append(table[alg](self.facts, float(eps), None, **self.settings.get(alg, {})))
        return out

    def account(self, releases, delta=None, accounting="pld"):
        """The total cost of a fixed plan in the ledger's unit, basic and tight.

        Parameters
        ----------
        releases : sequence of (str, float)
            (algorithm, epsilon) pairs.
        delta : float, optional
            The delta at which the tight total is stated; it is raised to the basic sum of the
            releases' deltas when smaller (so a pure plan is compared at the page's delta and an
            approximate one never below its own delta). Default: that basic sum.
        accounting : {"pld", "rdp", "basic"}
            What a commit charges.

        Returns
        -------
        PlanAccounting
            Basic composition (Dwork & Roth, 2014, Thm 3.16), privacy loss distributions
            (Koskela, Jalko & Honkela, AISTATS 2020) and Renyi DP (Mironov, CSF 2017) totals,
            and ``charge``, the (epsilon, delta) a commit charges.

        References
        ----------
        Dwork, C. & Roth, A. (2014). The Algorithmic Foundations of Differential Privacy,
        Sec. 3.5.
        """

        releases = list(releases)
        if not releases:
            raise ValueError("a plan needs at least one release")
        costs = [self.cost(a, e) for a, e in releases]
        uncounted = [a for (a, _), c in zip(releases, costs, strict=True) if c is None]
        if uncounted:
            raise ValueError(
                f"{', '.join(uncounted)} cannot be charged to a {self.facts.unit!r} "
                "ledger with these settings (a cell-level release needs row_cap)"
            )
        basic_delta = float(sum(c[1] for c in costs))
        target = (
            basic_delta
            if delta is None or not 0 < float(delta) < 1
            else max(basic_delta, float(delta))
        )
        return account_plan(
            self.estimators(releases),
            self.facts.shape,
            self.facts.unit,
            delta=target,
            accounting=accounting,
        )

    def commit(self, curator, releases, delta=None, accounting="pld"):
        """Commit a fixed plan on the private data: charged ONCE at its tight total, then run.

        The plan is accounted twice before anything is charged: from the public facts
        (:meth:`account`, what the user was shown) and from the Curator's own preparation of
        the same requests on the data's public shape. Only when both charges agree exactly is
        :meth:`privclust.core.release.Curator.release_plan` called, at the same delta and
        accounting, so the ledger is charged exactly the total that was shown. A fixed,
        non-adaptive plan is one mechanism, so charging its composed cost once is sound
        (Dwork & Roth, 2014, Sec. 3.5; Koskela, Jalko & Honkela, AISTATS 2020).

        Parameters
        ----------
        curator : privclust.core.release.Curator
            The curator of the private data (its ledger is charged).
        releases : sequence of (str, float)
            (algorithm, epsilon) pairs.
        delta, accounting
            As in :meth:`account`.

        Returns
        -------
        accounting : PlanAccounting
            The total that was charged (``accounting.charge``).
        released : list of Release
            The stored releases, in order, all linked to the one charge.

        Raises
        ------
        privclust.core.privacy.BudgetExceeded
            When the plan does not fit the remaining budget: nothing is charged, nothing runs.
        ValueError
            When the Curator's accounting differs from the planned one (e.g. a declared number
            of records that the ledger's unit does not need): nothing is charged.
        privclust.core.release.PrivacyRefused, privclust.core.release.ReleaseFailed
            As :meth:`~privclust.core.release.Curator.release_plan`.
        """

        planned = self.account(releases, delta=delta, accounting=accounting)
        ests = self.estimators(releases)
        prepared = [curator.prepare(est) for est in ests]
        checked = account_guarantees(
            [(type(p.estimator).__name__, p.plan, p.estimator.ledger_options()) for p in prepared],
            unit=curator.unit,
            delta=planned.delta,
            accounting=accounting,
        )
        if checked.charge != planned.charge:
            raise ValueError(
                f"the plan costs {checked.charge} on this data but {planned.charge} "
                "was planned from the public facts: plan again"
            )
        eps, dlt = planned.charge
        if not curator.ledger.can_charge(eps, dlt):
            left = curator.ledger.remaining
            raise BudgetExceeded(
                f"the plan costs epsilon {eps:.6g}, delta {dlt:.3g} but only "
                f"epsilon {left[0]:.6g}, delta {left[1]:.3g} remain: nothing was "
                "charged or run"
            )
        released = curator.release_plan(prepared, accounting=accounting, delta=planned.delta)
        return planned, released
