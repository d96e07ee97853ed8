"""The Curator: the only door through which a computation on non-public data leaves.

``Curator(dataset, ledger).release(estimator)``:

1. refuses anything that is not a :class:`~privclust.core.privacy.estimator.PrivateEstimator`
   or whose plan has kind "none" (non-private baselines, a Gibbs chain started from a
   non-private solution): those run only through :meth:`Curator.owner_fit`, marked NOT PRIVATE;
2. works on a clone whose ``random_state`` is None (fresh OS entropy: a seed is public, and
   noise drawn from a public seed is no noise) and whose ``ledger`` is None (the curator pays);
3. plans from the parameters and the public shape, converts the plan into the ledger's unit
   and refuses before anything runs when it cannot be counted or does not fit;
4. answers an identical earlier request (same estimator, parameters, data and unit) from the
   release store, at no charge;
5. charges the ledger in one transaction, then reads the data and fits;
6. returns a frozen :class:`Release` holding copies of the released attributes only, and
   stores it beside the ledger entry that paid for it.

A failure after the charge is reported as :class:`ReleaseFailed`, whose message names only the
type of the error (its text may describe the records); the data owner reads ``detail``.
"""
from dataclasses import dataclass
from datetime import datetime, timezone
from types import MappingProxyType

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from ..data import Dataset
from ..privacy.estimator import PrivateEstimator
from .codec import decode, describe_params, encode
from .record import Release
from .store import ReleaseStore

_RTOL = 1e-9


class PrivacyRefused(ValueError):
    """A request the curator refuses before anything is charged or run."""


class ReleaseFailed(RuntimeError):
    """A release that failed after its charge. ``str()`` names only the error's type; the
    original message (which may describe the data) is in ``detail``, for the data owner."""

    def __init__(self, kind, detail):
        super().__init__(f"the release failed after it was charged ({kind}); its message may "
                         "describe the private data and is withheld")
        self.kind = kind
        self.detail = detail


@dataclass(frozen=True)
class NotPrivateResult:
    """What the data owner path returns: computed on the raw records, NOT PRIVATE.

    Never stored as a release and never exported as one; ``value`` is the fitted estimator
    (or the value of an evaluation).
    """

    value: object
    what: str
    label: str = "NOT PRIVATE: computed on the raw data (data owner view only)"


def core_private_classes():
    """The private estimator classes exported by ``privclust.core`` (exact classes)."""
    import privclust.core as core
    out = set()
    for name in core.__all__:
        obj = getattr(core, name, None)
        if isinstance(obj, type) and issubclass(obj, PrivateEstimator) \
                and obj is not PrivateEstimator:
            out.add(obj)
    return frozenset(out)


def core_parameter_classes():
    """Exact privclust classes accepted as parameter objects: the non-private solvers (run on
    blocks inside sample-and-aggregate) and the 1-cluster aggregator."""
    from ..onecluster import OneClusterAggregator
    from ..subspace.solvers import SOLVERS
    return frozenset(SOLVERS.values()) | {OneClusterAggregator}


def _plain(value):
    """Data-like parameter values (numbers, strings, arrays, tuples of them): no code."""
    if value is None or isinstance(value, (bool, int, float, str, np.ndarray, np.generic)):
        return True
    if isinstance(value, (tuple, list)):
        return all(_plain(v) for v in value)
    return False


def _check_dataset(dataset):
    if not isinstance(dataset, Dataset):
        dataset = Dataset(dataset, public=False)
    X = dataset.X
    values = X.data if sp.issparse(X) else X
    if not np.all(np.isfinite(values)):
        raise ValueError("the dataset contains NaN or infinite values: a curator holds only "
                         "finite data (every release must be able to run on it)")
    return dataset


class Curator:
    """The one door to a non-public data set: plans, refuses, charges, fits and stores releases.

    See the module docstring for what :meth:`release` does, step by step.

    Parameters
    ----------
    dataset : Dataset or array-like
        The non-public records (a :class:`~privclust.core.data.Dataset` or an array).
    ledger : Ledger
        Its budget (:class:`~privclust.core.privacy.Ledger`, persistent or in memory); required.
    trusted : iterable of PrivateEstimator subclasses, default=()
        Estimator classes accepted besides the private estimators exported by
        ``privclust.core``.

    References
    ----------
    Gaboardi, M., Hay, M. and Vadhan, S. (2020). A programming framework for OpenDP.
        Manuscript, OpenDP project (measurements and queryables: mediated access).
    Berghel, S. et al. (2022). Tumult Analytics: a robust, easy-to-use, scalable, and expressive
        framework for differential privacy. arXiv:2212.04133 (sessions).
    See docs/algorithms.md, section 1 (the order of a fit).
    """

    def __init__(self, dataset, ledger, trusted=()):
        if ledger is None or not callable(getattr(ledger, "charge", None)):
            raise TypeError("Curator needs a privclust.core.privacy.Ledger (the budget of this "
                            "dataset)")
        self._dataset = _check_dataset(dataset)
        key = getattr(self._dataset, "budget_key", None) or self._dataset.fingerprint
        if ledger.dataset is not None and ledger.dataset != key:
            raise ValueError("this ledger belongs to another dataset (its key differs from the "
                             "dataset's budget key)")
        self._ledger = ledger
        self._store = ReleaseStore(key, ledger.path)
        self._trusted = frozenset(trusted)
        for cls in self._trusted:
            if not (isinstance(cls, type) and issubclass(cls, PrivateEstimator)):
                raise TypeError(f"trusted must hold PrivateEstimator classes, got {cls!r}")

    # ---- public facts -----------------------------------------------------------------------
    @property
    def unit(self):
        """The ledger's neighbouring relation: what one protected person is."""
        return self._ledger.unit

    @property
    def ledger(self):
        return self._ledger

    def public_facts(self):
        """What may be shown about the data without a release: name, number of features,
        column names, and the number of records only when it is public (replace-one unit)."""
        ds = self._dataset
        facts = {"name": ds.name, "n_features": int(ds.n_features),
                 "feature_names": None if ds.feature_names is None else list(ds.feature_names),
                 "sparse": bool(ds.is_sparse), "unit": self.unit}
        if self.unit == "replace":
            facts["n_samples"] = int(ds.n_samples)
        return facts

    # ---- releases ---------------------------------------------------------------------------
    def prepare(self, estimator):
        """Check a request without running or charging it: returns (clone, plan, cost, key).

        Raises :class:`PrivacyRefused` for anything that is not private, ValueError/TypeError
        for invalid parameters and for a relation the ledger cannot count.
        """
        return self._prepare_request(estimator)[:4]

    def _prepare_request(self, estimator):
        """:meth:`prepare`, plus the request's public parameters as stored values, captured
        now, before any record is read: a parameter object (an aggregator, a solver) may keep
        state from the fit in its attributes, and that state is not a released value."""
        if not isinstance(estimator, PrivateEstimator):
            raise PrivacyRefused(
                f"{type(estimator).__name__} is not a private estimator: non-private baselines "
                "run only in the data owner view (Curator.owner_fit), marked NOT PRIVATE")
        self._check_trusted(estimator)
        est = clone(estimator)
        params = describe_params({k: v for k, v in est.get_params(deep=False).items()
                                  if k not in ("random_state", "ledger")})
        est.set_params(random_state=None, ledger=None)
        plan = est.public_plan(self._dataset.shape)
        est.check_data_kind(self._dataset.is_sparse)   # sparse or dense is public, like the shape
        if not plan.is_private:
            raise PrivacyRefused(f"{type(est).__name__} with these parameters is not private "
                                 f"({plan.summary()}; {'; '.join(plan.warnings)}): it runs only "
                                 "in the data owner view")
        cost = self._ledger.cost(plan.epsilon, plan.delta, plan.neighbouring,
                                 **est.ledger_options())
        # keyed by the store's secret: a plain hash of the records would identify them
        key = self._store.request_key(type(est).__name__, params, self._dataset.fingerprint,
                                      self.unit)
        return est, plan, (float(cost[0]), float(cost[1])), key, decode(encode(params))

    def _check_trusted(self, estimator):
        """The curator limits what may run; it cannot contain code it runs. Only the exact
        private estimator classes of ``privclust.core`` (and the classes the operator listed in
        ``trusted``) are accepted, and their object parameters only when they are exact
        privclust classes (a named solver, ``OneClusterAggregator``): a subclass or a callable
        could read the records and release them, or state a plan it does not keep."""
        cls = type(estimator)
        if cls not in self._trusted and cls not in core_private_classes():
            raise PrivacyRefused(
                f"{cls.__module__}.{cls.__qualname__} is not one of privclust.core's private "
                "estimators: the curator runs only code the operator trusts (Curator(..., "
                "trusted=(YourClass,)) adds a class)")
        for name, value in estimator.get_params(deep=False).items():
            if name in ("ledger", "random_state") or _plain(value):
                continue
            if type(value) not in core_parameter_classes():
                raise PrivacyRefused(
                    f"parameter {name}={type(value).__name__} is code the curator would run on "
                    "the records: pass a solver by name or an exact privclust class")

    def cost(self, estimator):
        """(epsilon, delta) a release of ``estimator`` would cost in the ledger's unit (0 when
        an identical release is stored)."""
        _, _, cost, key = self.prepare(estimator)
        return (0.0, 0.0) if self._store.find(key) is not None else cost

    def release(self, estimator, runner=None):
        """Release ``estimator`` fitted on the data; returns a :class:`Release`.

        ``runner(estimator, X)`` (optional) computes the fit elsewhere (e.g. a worker process
        streaming diagnostics to the data owner) and leaves the fitted attributes on
        ``estimator``; by default the prepared clone (fresh entropy, no ledger) reads the data
        and computes. ``runner`` receives that clone after the charge.
        """
        est, plan, cost, key, params = self._prepare_request(estimator)
        stored = self._store.find(key)
        if stored is not None:
            return stored
        # the estimator's public preparation (e.g. drawing a public operator and checking it
        # against the bounds) may still refuse the parameters: it runs before the charge
        plan, rng = est._prepare(self._dataset.shape)
        record = self._ledger.charge(plan.epsilon, plan.delta, what=est.describe(),
                                     relation=plan.neighbouring, **est.ledger_options())
        try:
            return self._run_and_store(est, plan, rng, key, params, record.id, cost, runner)
        except Exception as exc:  # noqa: BLE001 -- the message may describe the records
            # "from None": the message may describe the records, so it must not ride along in
            # the exception chain (tracebacks, logs); the data owner reads ``detail``
            raise ReleaseFailed(type(exc).__name__, f"{type(exc).__name__}: {exc}") from None

    def _run_and_store(self, est, plan, rng, key, params, charge_id, cost, runner, notes=()):
        """After the charge: fit (or ``runner``), check the spend against the plan, keep copies
        of the released attributes only, store and return the :class:`Release` (with the
        ``params`` captured before the fit)."""
        if runner is None:
            est._compute(self._dataset.X, rng, plan)
        else:
            runner(est, self._dataset.X)
        got = est.privacy_
        if got.kind != plan.kind or got.neighbouring != plan.neighbouring or \
                got.epsilon > plan.epsilon * (1 + _RTOL) or got.delta > plan.delta * (1 + _RTOL):
            raise RuntimeError(f"spent {got.summary()} against the plan {plan.summary()}")
        attrs = {name: getattr(est, name) for name in est.released_attributes()
                 if hasattr(est, name)}
        return self._store.add(Release(
            estimator=type(est).__name__, params=params,
            attributes=MappingProxyType(decode(encode(attrs))), guarantee=got,
            cost=(float(cost[0]), float(cost[1])), unit=self.unit, charge_id=charge_id,
            time=datetime.now(timezone.utc), key=key, notes=tuple(notes)))

    def release_plan(self, estimators, accounting="pld", delta=None, runner=None):
        """Commit a fixed plan: charge it ONCE at its tight total, then run every release.

        A plan chosen before any of its releases runs is one mechanism, so its cost is the
        composition of all its steps (:mod:`privclust.core.privacy.plan_accounting`: privacy
        loss distributions by default, ``accounting="rdp"`` or ``"basic"``), at ``delta``
        (default: the sum of the releases' deltas in the ledger's unit). Steps:

        1. every estimator is prepared (:meth:`prepare`: parameters, privacy, relation) and the
           plan is accounted -- any refusal happens here, before anything is charged; a request
           listed twice, or already answered by a stored release, is refused (run it alone);
        2. the plan's (epsilon, delta) is charged in ONE ledger entry, in the ledger's unit
           (every release's events are converted to that unit first; one that cannot be is
           refused); a plan that does not fit charges nothing and runs nothing;
        3. the releases run in order (fresh entropy, no ledger) and are stored, each linked to
           the one charge id; their ``cost`` is the plan's total and ``notes`` say so.

        Returns the list of :class:`Release`. Adaptive releases made later are charged on top
        by :meth:`release` (basic composition). If a release fails after the charge, the others
        still run; :class:`ReleaseFailed` is raised at the end with ``releases`` (those that
        succeeded) and ``failures`` (index, error type) attached.
        """
        from ..privacy.plan_accounting import account_guarantees

        estimators = list(estimators)
        if not estimators:
            raise PrivacyRefused("a plan needs at least one release")
        requests = [self._prepare_request(est) for est in estimators]
        prepared = [request[:4] for request in requests]
        keys = [key for _, _, _, key in prepared]
        if len(set(keys)) != len(keys):
            raise PrivacyRefused("the plan lists the same request twice (same estimator, "
                                 "parameters and data): list it once")
        if any(self._store.find(key) is not None for key in keys):
            raise PrivacyRefused("a request of the plan was already released and is stored: "
                                 "release it alone (it costs nothing) and plan the others")
        accounted = account_guarantees(
            [(type(est).__name__, plan, est.ledger_options()) for est, plan, _, _ in prepared],
            unit=self.unit, delta=delta, accounting=accounting)
        # every public preparation (which may still refuse parameters) before the one charge
        generators = [est._prepare(self._dataset.shape)[1] for est, _, _, _ in prepared]
        eps, dlt = accounted.charge
        names = ", ".join(type(est).__name__ for est, _, _, _ in prepared)
        record = self._ledger.charge(
            eps, dlt, relation=self.unit,
            what=f"plan of {len(prepared)} releases ({names}) composed by {accounting}; basic "
                 f"sum ({accounted.basic[0]!r}, {accounted.basic[1]!r})")
        note = (f"one of {len(prepared)} releases of a plan charged once (charge {record.id}) at "
                f"its {accounting} total ({eps!r}, {dlt!r}); cost is that shared total")
        done, failures = [], []
        for i, ((est, plan, _, key, params), rng) in enumerate(zip(requests, generators)):
            try:
                done.append(self._run_and_store(est, plan, rng, key, params, record.id,
                                                (eps, dlt), runner, notes=(note,)))
            except Exception as exc:  # noqa: BLE001 -- the message may describe the records
                failures.append((i, type(exc).__name__, f"{type(exc).__name__}: {exc}"))
        if failures:
            err = ReleaseFailed(failures[0][1], "; ".join(f"release {i}: {d}"
                                                          for i, _, d in failures))
            err.releases = done
            err.failures = [(i, kind) for i, kind, _ in failures]
            raise err
        return done

    def releases(self):
        """Every release made from this source so far (all sessions), oldest first."""
        return self._store.list()

    def get_release(self, release_id):
        """One stored release by id."""
        return self._store.get(release_id)

    # ---- the data owner path ----------------------------------------------------------------
    def owner_fit(self, estimator, **fit_params):
        """Fit any estimator (a baseline, or a private one for comparison) on the raw data, for
        the data owner only: returns a :class:`NotPrivateResult`; nothing is charged, stored or
        released."""
        est = clone(estimator)
        if "ledger" in est.get_params(deep=False):
            est.set_params(ledger=None)
        est.fit(self._dataset.X, **fit_params)
        return NotPrivateResult(est, f"{type(est).__name__} on the raw data")

    def owner_evaluate(self, function):
        """``function(dataset)`` on the raw data, for the data owner only (NOT PRIVATE)."""
        return NotPrivateResult(function(self._dataset),
                                getattr(function, "__name__", "evaluation"))

