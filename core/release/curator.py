"""The Curator: the only door through which a computation on non-public data leaves.

``Curator(dataset, ledger).release(estimator)`` is a thin caller of the one release pipeline
(:class:`~privclust.core.release.prepared.PreparedRelease`):

1. refuses anything that is not a private estimator of a trusted class (the algorithm
   registry's private estimators, plus the operator's ``trusted``) or whose plan has kind
   "none" (non-private baselines, a Gibbs chain started from a non-private solution): those run
   only through :meth:`Curator.owner_fit`, marked NOT PRIVATE;
2. rebuilds the estimator from parameters it can vouch for (exact built-in values, numeric
   arrays, privclust's parameter classes), with fresh OS entropy and no ledger of its own;
3. plans from the parameters and the public shape, converts the plan into the ledger's unit
   and refuses before anything runs when it cannot be counted or does not fit;
4. answers an identical earlier request (same estimator, parameters, data and unit) from the
   release store, at no charge;
5. charges the ledger and records the request as pending in one transaction, then reads the
   data and fits; warnings and errors raised from then on are withheld;
6. returns a frozen :class:`Release` holding copies of the released attributes only, stored
   in the transaction that marks its request done. A request whose run was lost (a crash) is
   completed at no new charge by :meth:`recover` or by the next identical request.

A failure after the charge is reported as :class:`ReleaseFailed`, whose message names only the
type of the error (its text may describe the records); the data owner reads ``detail``.
"""

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from ..algorithms import parameter_classes, private_classes
from ..data import Dataset
from ..data.dask_dataset import DaskDataset, dask_client
from ..estimator import PrivateEstimator
from ..privacy.accounting.ledger import Ledger
from .codec import decode
from .live import LiveRelease
from .prepared import PreparedRelease, ReleaseFailed, charge, request_record
from .record import Release
from .store import ReleaseStore
from .vouch import PrivacyRefused


@dataclass(frozen=True)
class NotPrivateResult:
    """What the data owner path returns: computed on the raw records, NOT PRIVATE.

    Never stored as a release and never exported as one; ``value`` is the fitted estimator
    (or the value of an evaluation).
    """

    value: object
    what: str
    label: str = "NOT PRIVATE: computed on the raw data (data owner view only)"


def core_private_classes() -> frozenset[type]:
    """The private estimator classes the door trusts: the algorithm registry's
    (:func:`privclust.core.algorithms.private_classes`)."""
    return private_classes()


def core_parameter_classes() -> frozenset[type]:
    """Exact privclust classes accepted as parameter objects: the registry's parameter classes
    (the non-private solvers run on blocks inside sample-and-aggregate, the 1-cluster
    aggregator)."""
    return parameter_classes()


#: Why the private estimators without a Dask mode (``_fit_partitioned``) cannot run on a data
#: set that lives on Dask; the Curator refuses them before the charge, naming the estimator.
NO_DASK_MODE = {
    "BalcanKMeans": "its local search scores every candidate swap with a truncated cost over all "
    "records in each round (a sum per round, not yet computed from partitions)",
    "GeometricBounds": "its per-column power-of-two histograms are not yet computed from "
    "partitions (use PrivateBounds)",
    "GibbsSubspaceClustering": "a stepping Markov chain that reassigns every record at every "
    "sweep, reading all records in one process",
    "SampleAggregateSubspaceClustering": "its non-private solver runs on random subsets of the "
    "records gathered in one process (O(subset^2) "
    "affinities)",
    "SuLQSubspaceClustering": "its per-iteration noisy moments are not yet computed from "
    "partitions",
    "OneCluster": "its radius and centre search counts the records near every record (pairwise "
    "distances): not a sum over partitions",
    "PrivateKBalls": "it repeats OneCluster (pairwise distances) and removes covered records "
    "between rounds",
    "DPNMF": "its plan is not private",
}


def _check_dataset(dataset: Any, client: Any = None) -> Dataset | DaskDataset:
    if isinstance(dataset, DaskDataset):
        # facts first (named when missing), then the operator's validating pass if not done yet
        dataset.check_facts()
        return dataset if dataset.registered else dataset.register(client)
    if not isinstance(dataset, Dataset):
        dataset = Dataset(dataset, public=False)
    X = dataset.X
    values = X.data if sp.issparse(X) else X
    if not np.all(np.isfinite(values)):
        raise ValueError(
            "the dataset contains NaN or infinite values: a curator holds only "
            "finite data (every release must be able to run on it)"
        )
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
    client : dask.distributed.Client or None, default=None
        For a :class:`~privclust.core.data.dask_dataset.DaskDataset`: the scheduler its
        partitions run on (None: the one named by ``PRIVCLUST_DASK_SCHEDULER``, else dask's
        default). Releases whose estimator has no Dask mode (``_fit_partitioned``) are refused
        before the charge.

    References
    ----------
    Gaboardi, M., Hay, M. and Vadhan, S. (2020). A programming framework for OpenDP.
        Manuscript, OpenDP project (measurements and queryables: mediated access).
    Berghel, S. et al. (2022). Tumult Analytics: a robust, easy-to-use, scalable, and expressive
        framework for differential privacy. arXiv:2212.04133 (sessions).
    See docs/algorithms.md, section 1 (the order of a fit).

    Examples
    --------
    >>> from privclust.core import Curator, DPLloyd, Ledger
    >>> from privclust.core.data import make_gaussian_mixture
    >>> data = make_gaussian_mixture(n_samples=2000, n_features=2, n_clusters=3, random_state=0)
    >>> curator = Curator(data.X, Ledger(epsilon=2.0))
    >>> release = curator.release(DPLloyd(n_clusters=3, epsilon=0.5, bounds=(-10, 10)))
    >>> release.cluster_centers_.shape
    (3, 2)
    >>> release.cost
    (1.0, 0.0)
    >>> curator.ledger.remaining
    (1.0, 0.0)
    """

    def __init__(
        self, dataset: Any, ledger: Ledger, trusted: Iterable[type] = (), client: Any = None
    ) -> None:
        if ledger is None or not callable(getattr(ledger, "charge", None)):
            raise TypeError(
                "Curator needs a privclust.core.privacy.Ledger (the budget of this dataset)"
            )
        if isinstance(dataset, DaskDataset):
            client = dask_client(client)  # resolved once: registration and releases
        self._dataset = _check_dataset(dataset, client)
        if isinstance(self._dataset, DaskDataset):
            if ledger.unit == "replace" and not self._dataset.n_public:
                raise ValueError(
                    "under replace-one neighbours (this ledger's unit) the number "
                    "of records is public: declare n_public=True and n_samples "
                    "for this Dask data set"
                )
            self._records = self._dataset.partitions(client)  # read only after a charge
        else:
            self._records = self._dataset.X
        key = getattr(self._dataset, "budget_key", None) or self._dataset.fingerprint
        if ledger.dataset is not None and ledger.dataset != key:
            raise ValueError(
                "this ledger belongs to another dataset (its key differs from the "
                "dataset's budget key)"
            )
        self._ledger = ledger
        self._store = ReleaseStore(key, ledger)
        self._trusted = frozenset(trusted)
        # release id -> warnings raised after its charge (data owner only)
        self._withheld: dict[int | None, tuple[str, ...]] = {}
        for cls in self._trusted:
            if not (isinstance(cls, type) and issubclass(cls, PrivateEstimator)):
                raise TypeError(f"trusted must hold PrivateEstimator classes, got {cls!r}")

    # ---- public facts -----------------------------------------------------------------------
    @property
    def unit(self) -> str:
        """The ledger's neighbouring relation: what one protected person is."""
        return self._ledger.unit

    @property
    def ledger(self) -> Ledger:
        return self._ledger

    def public_facts(self) -> dict[str, Any]:
        """What may be shown about the data without a release: name, number of features,
        column names, and the number of records only when it is public (replace-one unit)."""
        ds = self._dataset
        facts = {
            "name": ds.name,
            "n_features": int(ds.n_features),
            "feature_names": None if ds.feature_names is None else list(ds.feature_names),
            "sparse": bool(ds.is_sparse),
            "unit": self.unit,
        }
        if self.unit == "replace":
            facts["n_samples"] = int(ds.n_samples)
        return facts

    # ---- releases ---------------------------------------------------------------------------
    def prepare(self, estimator: Any) -> PreparedRelease:
        """The request ``estimator`` as a :class:`PreparedRelease` (a vouched clone with fresh
        entropy, its plan, its cost in the ledger's unit, its request key), made once and
        without reading any record; :meth:`release` and :meth:`live` take it as it is.

        Raises :class:`PrivacyRefused` for anything that is not private or not trusted,
        ValueError/TypeError for invalid parameters and for a relation the ledger cannot count.
        """
        if isinstance(estimator, PreparedRelease):
            if estimator.ledger is not self._ledger or estimator.key is None:
                raise PrivacyRefused("this request was prepared by another curator")
            return estimator
        prepared = PreparedRelease.at_door(
            estimator,
            self._dataset.shape,
            self._dataset.is_sparse,
            self._ledger,
            self._store,
            self._dataset.fingerprint,
            self._trusted | core_private_classes(),
            core_parameter_classes(),
        )
        if getattr(self._records, "partitioned", False) and not hasattr(
            prepared.estimator, "_fit_partitioned"
        ):
            name = type(prepared.estimator).__name__
            why = NO_DASK_MODE.get(name, "it reads all records in one process")
            raise PrivacyRefused(
                f"{name} has no Dask mode: it cannot run on a data set that lives on Dask ({why})"
            )
        return prepared

    def progress(self) -> dict[str, Any] | None:
        """On a Dask data set: what the running (or last) release has done, as public counts
        ({"phase", "passes", "done", "total"}: partitions done of the current pass); None for
        a data set in memory."""
        if not getattr(self._records, "partitioned", False):
            return None
        return self._records.progress.snapshot()

    def cancel(self) -> None:
        """On a Dask data set: stop the release that is checking the partitions, before its
        charge (it raises :class:`~privclust.core.data.dask_dataset.ReleaseCancelled`, nothing
        is charged). A release already charged always completes."""
        if getattr(self._records, "partitioned", False):
            self._records.cancel()

    def cost(self, request: Any) -> tuple[float, float]:
        """(epsilon, delta) a release of ``request`` (an estimator or a prepared request) would
        cost in the ledger's unit now: 0 when an identical release is stored or already paid
        for."""
        prepared = self.prepare(request)
        if self._store.find(prepared.key) is not None or self._ledger.pending(prepared.key):
            return (0.0, 0.0)
        return cast(tuple[float, float], prepared.cost)  # at the door it has a ledger

    def release(self, request: Any) -> Release:
        """Release ``request`` (an estimator or a request from :meth:`prepare`) fitted on the
        data; returns a :class:`Release` (see the module docstring, step by step)."""
        prepared = self.prepare(request)
        done = prepared.release(self._records, self._store, self.unit)
        if prepared.withheld:
            self._withheld[done.id] = tuple(prepared.withheld)
        return done

    def live(
        self,
        request: Any,
        reference: Any = None,
        diagnostics: bool = False,
        process: bool = True,
        nice: int = 0,
    ) -> LiveRelease:
        """A stepping release (the Gibbs sampler) as a :class:`~.live.LiveRelease`: charged
        when it starts, it yields only progress (with ``diagnostics``: the evaluation-only
        traces, NOT PRIVATE, for the data owner), and is stored however it ends -- finished,
        stopped or abandoned. ``process``: sample in a child process (else a thread)."""
        prepared = self.prepare(request)
        if not hasattr(prepared.estimator, "iter_fit"):
            raise PrivacyRefused(
                f"{type(prepared.estimator).__name__} has no stepping run: use release()"
            )
        if getattr(self._records, "partitioned", False):
            raise PrivacyRefused("stepping releases do not run on a Dask data set")
        return LiveRelease(
            prepared,
            self._records,
            self._store,
            self.unit,
            reference=reference,
            diagnostics=diagnostics,
            process=process,
            nice=nice,
        )

    def recover(self) -> list[Release]:
        """Complete every request of this source that was paid for but never stored (its run
        was lost to a crash or a killed process), with fresh randomness at no new charge;
        returns the releases made. A request whose estimator is no longer trusted stays
        pending."""
        done = []
        for row in self._ledger.pending():
            if row["running"]:  # its own process may still store it
                continue
            try:
                estimator = self._rebuild(row["estimator"], decode(json.loads(row["params"])))
                prepared = self.prepare(estimator)
            except (PrivacyRefused, ValueError, TypeError):
                continue
            if prepared.key == row["key"]:
                done.append(prepared.complete(self._records, self._store, self.unit))
        return done

    def _rebuild(self, name: str, params: dict[str, Any]) -> Any:
        """An estimator of the trusted class ``name`` from stored parameters (parameter objects
        stored as {"class", "params"} by the codec are rebuilt from privclust's classes)."""
        classes = {cls.__name__: cls for cls in self._trusted | core_private_classes()}
        objects = {cls.__qualname__: cls for cls in core_parameter_classes()}

        def value(v: Any) -> Any:
            if isinstance(v, dict) and set(v) == {"class", "params"} and v["class"] in objects:
                return objects[v["class"]](**{k: value(x) for k, x in v["params"].items()})
            return v

        if name not in classes:
            raise PrivacyRefused(f"{name} is not a trusted estimator")
        return classes[name](**{k: value(v) for k, v in params.items()})

    def release_plan(
        self, estimators: Sequence[Any], accounting: str = "pld", delta: float | None = None
    ) -> Any:
        """Commit a fixed plan: charge it ONCE at its tight total, then run every release.

        A plan chosen before any of its releases runs is one mechanism, so its cost is the
        composition of all its steps (:mod:`privclust.core.privacy.accounting.plan_accounting`: privacy
        loss distributions by default, ``accounting="rdp"`` or ``"basic"``), at ``delta``
        (default: the sum of the releases' deltas in the ledger's unit). Steps:

        1. every estimator is prepared (:meth:`prepare`: parameters, privacy, relation) and the
           plan is accounted -- any refusal happens here, before anything is charged; a request
           listed twice, or already answered by a stored release, is refused (run it alone);
        2. every public preparation runs, then the plan's (epsilon, delta) is charged in ONE
           ledger entry, in the ledger's unit, with every request recorded as pending; a plan
           that does not fit charges nothing and runs nothing;
        3. the releases run in order (fresh entropy, no ledger) and are stored, each linked to
           the one charge id; their ``cost`` is the plan's total and ``notes`` say so.

        Returns the list of :class:`Release`. Adaptive releases made later are charged on top
        by :meth:`release` (basic composition). If a release fails after the charge, the others
        still run; :class:`ReleaseFailed` is raised at the end with ``releases`` (those that
        succeeded) and ``failures`` (index, error type) attached.
        """
        from ..privacy.accounting.plan_accounting import account_guarantees

        estimators = list(estimators)
        if not estimators:
            raise PrivacyRefused("a plan needs at least one release")
        prepared = [self.prepare(est) for est in estimators]
        keys = [p.key for p in prepared]
        if len(set(keys)) != len(keys):
            raise PrivacyRefused(
                "the plan lists the same request twice (same estimator, "
                "parameters and data): list it once"
            )
        if any(self._store.find(key) is not None or self._ledger.pending(key) for key in keys):
            raise PrivacyRefused(
                "a request of the plan was already released and is stored: "
                "release it alone (it costs nothing) and plan the others"
            )
        accounted = account_guarantees(
            [(type(p.estimator).__name__, p.plan, p.estimator.ledger_options()) for p in prepared],
            unit=self.unit,
            delta=delta,
            accounting=accounting,
        )
        for p in prepared:  # public preparations (which may still refuse) before the charge
            p._public_preparation()
        eps, dlt = accounted.charge
        names = ", ".join(type(p.estimator).__name__ for p in prepared)
        record = charge(
            self._ledger,
            eps,
            dlt,
            self.unit,
            f"plan of {len(prepared)} releases ({names}) composed by {accounting}; basic "
            f"sum ({accounted.basic[0]!r}, {accounted.basic[1]!r})",
            pending=[request_record(p.key, type(p.estimator).__name__, p.params) for p in prepared],
        )
        note = (
            f"one of {len(prepared)} releases of a plan charged once (charge {record.id}) at "
            f"its {accounting} total ({eps!r}, {dlt!r}); cost is that shared total"
        )
        done, failures = [], []
        for i, p in enumerate(prepared):
            try:
                done.append(
                    p.compute_and_store(
                        self._records, self._store, self.unit, record.id, (note,), cost=(eps, dlt)
                    )
                )
            except ReleaseFailed as exc:
                failures.append((i, exc.kind, f"release {i}: {exc.detail}"))
        if failures:
            err = ReleaseFailed(failures[0][1], "; ".join(d for _, _, d in failures))
            err.releases = done
            err.failures = [(i, kind) for i, kind, _ in failures]
            raise err
        return done

    def releases(self) -> list[Release]:
        """Every release made from this source so far (all sessions), oldest first."""
        return self._store.list()

    def get_release(self, release_id: int) -> Release:
        """One stored release by id."""
        return self._store.get(release_id)

    # ---- the data owner path ----------------------------------------------------------------
    def owner_fit(self, estimator: Any, **fit_params: Any) -> "NotPrivateResult":
        """Fit any estimator (a baseline, or a private one for comparison) on the raw data, for
        the data owner only: returns a :class:`NotPrivateResult`; nothing is charged, stored or
        released."""
        if isinstance(self._dataset, DaskDataset):
            raise PrivacyRefused(
                "the data owner path reads records in memory: not for a data set that lives on Dask"
            )
        est = clone(estimator)
        if "ledger" in est.get_params(deep=False):
            est.set_params(ledger=None)
        est.fit(self._dataset.X, **fit_params)
        return NotPrivateResult(est, f"{type(est).__name__} on the raw data")

    def owner_warnings(self, release_id: int) -> "NotPrivateResult":
        """The warnings a release of this curator raised after its charge, withheld from the
        release because they may describe the records (data owner only, NOT PRIVATE)."""
        return NotPrivateResult(
            self._withheld.get(release_id, ()), f"warnings withheld from release #{release_id}"
        )

    def owner_evaluate(self, function: Callable[[Any], Any]) -> "NotPrivateResult":
        """``function(dataset)`` on the raw data, for the data owner only (NOT PRIVATE)."""
        return NotPrivateResult(
            function(self._dataset), getattr(function, "__name__", "evaluation")
        )
