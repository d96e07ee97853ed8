"""The one release pipeline: a request prepared once, then charged, read and computed in order.

A :class:`PreparedRelease` is made once from an estimator and the public facts of a data set
(its shape and whether it is sparse), before any record is read. It holds the estimator to run,
the plan (the :class:`~privclust.core.privacy.Guarantee` from the parameters and the public
shape), the generator, the cost in the ledger's unit and, at the Curator's door, the request key
and the request's public parameters. Running it does, in this order:

    public preparation -> charge the ledger -> read the data -> compute -> check the spend

``PrivateEstimator.fit``, the stepping runs (``iter_fit``), ``Curator.release``,
``Curator.release_plan`` and ``Curator.live`` are thin callers of it, and :func:`charge` is the
only place in ``privclust.core`` that charges a ledger.

At the door (:meth:`PreparedRelease.at_door`) the estimator is a clone rebuilt from vouched
parameters (:mod:`.vouch`) with fresh OS entropy and no ledger of its own; the charge writes the
request as pending in its own transaction, and the release is stored in the transaction that
marks it done, so a paid request whose run was lost (a crash, a killed process) is completed
later with fresh randomness at no new charge, and at most one output per paid request is ever
stored. Warnings and exception texts raised after the charge may describe the records: they are
withheld (:class:`ReleaseFailed` ``detail``; :attr:`PreparedRelease.withheld`).

References
----------
Gaboardi, M., Hay, M. and Vadhan, S. (2020). A programming framework for OpenDP. Manuscript,
    OpenDP project (measurements: the privacy map is known before the data are read).
See docs/algorithms.md, section 1 (the order of a fit).
"""

import contextlib
import json
import warnings
from collections.abc import Collection, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, cast

import numpy as np

from ..privacy.accounting.guarantee import Guarantee
from ..privacy.errors import DuplicateRequest
from ..privacy.rng import as_generator
from .codec import decode, describe_params, encode
from .record import Release
from .store import ReleaseStore
from .vouch import NotPrivate, PrivacyRefused, vouched_clone

_RTOL = 1e-9


class ReleaseFailed(RuntimeError):
    """A release that failed after its charge. ``str()`` names only the error's type; the
    original message (which may describe the data) is in ``detail``, for the data owner."""

    releases: list[Release]  # set by Curator.release_plan: the plan's releases made
    failures: list[tuple[int, str]]  # and the (index, kind) of those that failed

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(
            f"the release failed after it was charged ({kind}); its message may "
            "describe the private data and is withheld"
        )
        self.kind = kind
        self.detail = detail


def charge(
    ledger: Any,
    epsilon: float,
    delta: float,
    relation: str | None,
    what: str,
    options: dict[str, Any] | None = None,
    pending: Sequence[Any] = (),
) -> Any:
    """Charge ``ledger`` (epsilon, delta) of a release under ``relation``: the only call of
    :meth:`~privclust.core.privacy.Ledger.charge` in ``privclust.core``. Returns the
    ChargeRecord (None without a ledger)."""
    if ledger is None:
        return None
    return ledger.charge(
        epsilon, delta, what=what, relation=relation, pending=pending, **(options or {})
    )


def check_spend(estimator: Any, plan: Guarantee) -> None:
    """RuntimeError when what ``estimator`` spent (``privacy_``) is not within ``plan``."""
    got = estimator.privacy_
    if (
        got.kind != plan.kind
        or got.neighbouring != plan.neighbouring
        or (
            plan.is_private
            and (got.epsilon > plan.epsilon * (1 + _RTOL) or got.delta > plan.delta * (1 + _RTOL))
        )
    ):
        raise RuntimeError(
            f"{type(estimator).__name__} spent {got.summary()} against its plan {plan.summary()}"
        )


@contextlib.contextmanager
def withheld(sink: list[str]) -> Iterator[None]:
    """Collect the warnings raised inside the block into ``sink`` (a list of texts) instead of
    showing them; numpy's floating-point warnings are silenced. Python's warning filters are
    process-wide: a warning raised by another thread meanwhile is collected too (never shown
    less privately than it would be)."""
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        try:
            yield
        finally:
            sink.extend(f"{w.category.__name__}: {w.message}" for w in caught)


def request_record(
    key: str | None, estimator_name: str, params: dict[str, Any] | None
) -> tuple[str | None, str, str]:
    return (key, estimator_name, json.dumps(encode(params), separators=(",", ":")))


@dataclass
class PreparedRelease:
    """One request, prepared from an estimator and public facts; see the module docstring.

    Attributes
    ----------
    estimator : PrivateEstimator
        What runs: the estimator itself (``fit``) or, at the door, its vouched clone.
    plan : Guarantee
        The guarantee the run will have.
    cost : tuple of float or None
        (epsilon, delta) in the ledger's unit (None without a ledger).
    key : str or None
        The request key (at the door: what makes two requests identical).
    params : dict or None
        The request's public parameters as stored (at the door).
    rng : numpy.random.Generator
        The run's randomness (fresh OS entropy at the door).
    """

    estimator: Any
    plan: Guarantee
    cost: tuple[float, float] | None
    ledger: Any = None
    key: str | None = None
    params: dict[str, Any] | None = None
    shape: tuple[int, ...] | None = None
    withheld: list[str] = field(default_factory=list)
    rng: Any = None
    _prepared: bool = False

    # ---- made from public facts only --------------------------------------------------------
    @classmethod
    def for_fit(cls, estimator: Any, shape: Sequence[int], sparse: bool) -> "PreparedRelease":
        """``estimator`` itself, with its own ``random_state`` and ``ledger`` (``fit``)."""
        estimator.check_data_kind(sparse)
        plan = estimator.public_plan(shape)
        ledger = getattr(estimator, "ledger", None)
        cost = None
        if ledger is not None:
            if not plan.is_private:
                raise ValueError(
                    f"{type(estimator).__name__} with these parameters is not "
                    f"private ({plan.summary()}): a ledger cannot pay for it"
                )
            cost = _cost(ledger, plan, estimator)
        return cls(
            estimator,
            plan,
            cost,
            ledger=ledger,
            shape=tuple(shape),
            rng=as_generator(getattr(estimator, "random_state", None)),
        )

    @classmethod
    def at_door(
        cls,
        estimator: Any,
        shape: Sequence[int],
        sparse: bool,
        ledger: Any,
        store: ReleaseStore,
        fingerprint: str,
        trusted: Collection[type],
        parameter_classes: Collection[type],
    ) -> "PreparedRelease":
        """The Curator's request: a clone rebuilt from vouched parameters (fresh entropy, no
        ledger), refused (:class:`~.vouch.PrivacyRefused`; :class:`~.vouch.NotPrivate` when
        its plan is not private); ValueError/TypeError for
        invalid parameters or a relation the ledger cannot count."""
        est = vouched_clone(estimator, trusted, parameter_classes)
        params = describe_params(
            {
                k: v
                for k, v in est.get_params(deep=False).items()
                if k not in ("random_state", "ledger")
            }
        )
        plan = est.public_plan(shape)
        est.check_data_kind(sparse)  # sparse or dense is public, like the shape
        if not plan.is_private:
            raise NotPrivate(
                f"{type(est).__name__} with these parameters is not private "
                f"({plan.summary()}; {'; '.join(plan.warnings)}): it runs only "
                "in the data owner view"
            )
        cost = _cost(ledger, plan, est)
        # keyed by the store's secret: a plain hash of the records would identify them
        key = store.request_key(type(est).__name__, params, fingerprint, ledger.unit)
        return cls(
            est,
            plan,
            cost,
            ledger=ledger,
            key=key,
            params=decode(encode(params)),
            shape=tuple(shape),
            withheld=[],
            rng=as_generator(None),
        )

    # ---- charge, read, compute --------------------------------------------------------------
    def _public_preparation(self) -> None:
        """The estimator's data-independent preparation (e.g. drawing a public operator and
        checking it against the bounds): it may still refuse the parameters, so it runs
        before the charge, once."""
        if not self._prepared:
            self.estimator._before_charge(self.shape, self.rng)
            self._prepared = True

    def pay(self, what: str | None = None, pending: bool = False) -> Any:
        """Public preparation, then the charge (with the pending request at the door)."""
        self._public_preparation()
        record = (
            None
            if not pending
            else request_record(self.key, type(self.estimator).__name__, self.params)
        )
        if self.ledger is not None and not self.plan.is_private:
            raise ValueError(
                f"{type(self.estimator).__name__} with these parameters is not "
                f"private ({self.plan.summary()}): a ledger cannot pay for it"
            )
        return charge(
            self.ledger,
            self.plan.epsilon,
            self.plan.delta,
            self.plan.neighbouring,
            what or self.estimator.describe(),
            self.estimator.ledger_options(),
            () if record is None else (record,),
        )

    def compute(self, X: Any) -> Any:
        """Read ``X`` and compute (after the charge); checks the spend against the plan. ``X``
        may be the partitions of a Dask data set (the estimator's ``_fit_partitioned``: partition
        sums, noise once in the driver)."""
        est = self.estimator
        if getattr(X, "partitioned", False):
            est._fit_partitioned(X, self.rng)
        else:
            est._fit(est._check_data(X), self.rng)
        check_spend(est, self.plan)
        return est

    def steps(self, X: Any, charged: bool = False, **kwargs: Any) -> Generator[Any, None, None]:
        """Generator: charge (unless ``charged``: the caller charged with the request pending),
        read ``X``, then yield what the estimator's stepping run (``_steps``) yields; the spend
        is checked against the plan before the first item."""
        if not charged:
            self.pay()
        est = self.estimator
        first = True
        for item in est._steps(est._check_data(X), self.rng, **kwargs):
            if first:
                check_spend(est, self.plan)
                first = False
            yield item
        if first:
            check_spend(est, self.plan)

    def run(self, X: Any) -> Any:
        """``fit``: charge, read, compute; returns the estimator."""
        self.pay()
        return self.compute(X)

    # ---- at the door ------------------------------------------------------------------------
    def release(
        self, X: Any, store: ReleaseStore, unit: str, notes: tuple[str, ...] = ()
    ) -> Release:
        """The door's run: answered from ``store`` when identical; else charged with its
        pending record, computed and stored (a paid request still pending is completed at no
        new charge). Returns the :class:`Release`."""
        stored = store.find(self.key)
        if stored is not None:
            return stored
        if getattr(X, "partitioned", False):
            X.check_layout()  # before the charge: cancellable, refuses a changed source
        try:
            record = self.pay(pending=True)
        except DuplicateRequest as dup:
            if dup.done:
                return _stored(store, self.key)
            return self.complete(X, store, unit)
        return self.compute_and_store(X, store, unit, record.id, notes)

    def complete(self, X: Any, store: ReleaseStore, unit: str) -> Release:
        """A request already paid for whose output was never stored: computed now with this
        preparation's fresh randomness, at no new charge."""
        pending = self.ledger.pending(self.key)
        if not pending:
            return _stored(store, self.key)
        if pending[0]["running"]:
            raise PrivacyRefused(
                "an identical request is being computed now (paid for, not "
                "yet stored): ask again when it is done; nothing was charged"
            )
        self._public_preparation()
        note = (
            "completed after the first run of this paid request was lost; fresh "
            "randomness, no new charge"
        )
        return self.compute_and_store(X, store, unit, pending[0]["charge_id"], (note,))

    def compute_and_store(
        self,
        X: Any,
        store: ReleaseStore,
        unit: str,
        charge_id: int | None,
        notes: tuple[str, ...] = (),
        cost: tuple[float, float] | None = None,
    ) -> Release:
        """After the charge: compute with warnings and errors withheld, keep copies of the
        released attributes only, store and return the :class:`Release`. A failure abandons
        the paid request (the ledger marks it failed) and raises :class:`ReleaseFailed`."""
        try:
            with withheld(self.withheld):
                self.compute(X)
            return self.store(store, unit, charge_id, notes, cost)
        except Exception as exc:  # noqa: BLE001 -- the message may describe the records
            self.ledger.abandon(self.key)
            # "from None": the message may describe the records, so it must not ride along in
            # the exception chain (tracebacks, logs); the data owner reads ``detail``
            raise ReleaseFailed(type(exc).__name__, f"{type(exc).__name__}: {exc}") from None

    def store(
        self,
        store: ReleaseStore,
        unit: str,
        charge_id: int | None,
        notes: tuple[str, ...] = (),
        cost: tuple[float, float] | None = None,
    ) -> Release:
        """Store the estimator's released attributes as this request's :class:`Release`."""
        est = self.estimator
        check_spend(est, self.plan)
        attrs = {
            name: getattr(est, name) for name in est.released_attributes() if hasattr(est, name)
        }
        # at the door (the only caller) the request has its cost, key and parameters
        cost = cast(tuple[float, float], self.cost if cost is None else cost)
        return store.add(
            Release(
                estimator=type(est).__name__,
                params=cast(dict[str, Any], self.params),
                attributes=MappingProxyType(decode(encode(attrs))),
                guarantee=est.privacy_,
                cost=(float(cost[0]), float(cost[1])),
                unit=unit,
                charge_id=charge_id,
                time=datetime.now(UTC),
                key=cast(str, self.key),
                notes=tuple(notes),
            ),
            pending=True,
        )


def _cost(ledger: Any, plan: Guarantee, estimator: Any) -> tuple[float, float]:
    eps, dlt = ledger.cost(
        plan.epsilon, plan.delta, plan.neighbouring, **estimator.ledger_options()
    )
    return float(eps), float(dlt)


def _stored(store: ReleaseStore, key: str | None) -> Release:
    stored = store.find(key)
    if stored is None:
        raise RuntimeError("a paid request marked done has no stored release")
    return stored
