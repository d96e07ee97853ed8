"""The Curator and the persistent budget ledger of the session's private dataset, as the page
shows them."""

import dataclasses
import logging
import os
import threading

import param

from .. import config, large_data

log = logging.getLogger(__name__)


class LedgerModel(param.Parameterized):
    """The Curator and persistent budget ledger of the current private dataset, for display.

    The ledger is keyed by the dataset's budget key (order-invariant, shared by views derived
    from one source), so reloading, reordering or deriving a view never gives a fresh budget.
    """

    total = param.Tuple(default=(0.0, 0.0), length=2)
    spent = param.Tuple(default=(0.0, 0.0), length=2)
    remaining = param.Tuple(default=(0.0, 0.0), length=2)
    history = param.List(default=[])
    releases = param.List(default=[], doc="stored releases of this source, oldest first")
    unit = param.String(default="replace")
    active = param.Boolean(False)
    error = param.String(default="", doc="why no release is possible on this dataset")

    def __init__(self, path=None, **params):
        super().__init__(**params)
        self._path = path
        self.ledger = None
        self.curator = None
        self.dataset = None

    def open(self, dataset, trusted=()):
        """Open (or create) the ledger and the Curator of ``dataset``; demo data gets none.
        ``trusted``: the private estimator classes of the page's algorithm catalogue (server
        code), which the Curator may run besides privclust.core's own."""
        self.ledger = self.curator = None
        self.dataset = dataset
        if dataset is None or getattr(dataset, "public", True):
            self.param.update(active=False, history=[], releases=[], error="")
            return
        from privclust.core import Curator
        from privclust.core.privacy import Ledger

        eps, delta = config.budget()
        path = self._path or os.path.join(config.state_dir(), "ledger.sqlite")
        try:
            ledger = Ledger(eps, delta, path=path, dataset=dataset)
            self.curator = Curator(
                dataset, ledger, trusted=trusted, **large_data.curator_options(dataset)
            )
        except (ValueError, TypeError) as exc:
            self.param.update(
                active=False,
                history=[],
                releases=[],
                error=f"no release is possible on this dataset: {exc}",
            )
            return
        self.ledger = ledger
        if ledger.pending():
            # paid requests whose run was lost (a crash, a killed server): completed at no new
            # charge, off the caller's thread
            threading.Thread(
                target=self._recover, args=(self.curator,), daemon=True, name="privclust-recover"
            ).start()
        self.refresh(force=True)
        self.param.update(active=True, unit=ledger.unit, error="")

    def _recover(self, curator):
        try:
            curator.recover()
        except Exception:  # noqa: BLE001 -- logged for the operator; the page goes on
            log.warning("completing paid releases failed", exc_info=True)

    def refresh(self, force=False):
        """Re-read the ledger file (other sessions and servers spend from it too). Without
        ``force`` nothing is updated when nothing was charged or stored since the last read, so
        a periodic refresh redraws nothing."""
        if self.ledger is None:
            return
        lg = self.ledger
        spent = lg.spent
        if (
            not force
            and spent == tuple(self.spent)
            and len(self.history) == len(lg.history)
            and len(self.releases) == len(self.curator.releases())
        ):
            return
        failed = set(lg.failed_charges())
        pending = {p["charge_id"] for p in lg.pending()}
        self.param.update(
            total=lg.total,
            spent=spent,
            remaining=lg.remaining,
            history=[charge_row(h, lg.unit, failed, pending) for h in lg.history],
            releases=[release_row(r) for r in self.curator.releases()],
        )

    def public_facts(self):
        """What may be shown about the private data without a release (Curator.public_facts:
        the number of records only under the replace-one unit); {} on demo data."""
        return {} if self.curator is None else self.curator.public_facts()


def budget_key(dataset):
    """The key of ``dataset``'s budget: its order-invariant budget key (a derived view shares
    its source's), or its fingerprint for a Dataset without one."""
    return getattr(dataset, "budget_key", None) or dataset.fingerprint


def release_row(release):
    """A stored release as a plain dict for the ledger panel."""
    eps, delta = release.cost
    return {
        "id": release.id,
        "time": release.time,
        "estimator": release.estimator,
        "guarantee": release.guarantee.summary(),
        "epsilon": float(eps),
        "delta": float(delta),
        "unit": release.unit,
    }


def charge_row(charge, unit, failed=(), pending=()):
    """A ledger charge as a plain dict: when, what, relation, the requested and charged
    (converted to the ledger's ``unit``) epsilon and delta, and ``result``: "failed" when its
    release failed after the charge (nothing was released), "pending" while its release is
    still to be stored (running, or to be completed at no new charge), else "" ."""
    row = dataclasses.asdict(charge)
    row["result"] = "failed" if charge.id in failed else "pending" if charge.id in pending else ""
    row["relation"] = charge.relation or unit
    # a charge recorded before relations were stored was requested in the ledger's unit
    requested = charge.requested or (charge.epsilon, charge.delta)
    row["requested_epsilon"], row["requested_delta"] = (float(x) for x in requested)
    return row


def relation_note(relation, requested_eps, charged_eps, unit):
    """Plain words for a converted charge, e.g. an add/remove release on a replace-one
    ledger (group privacy: one replacement is a removal and an addition)."""
    if relation == unit or requested_eps == charged_eps:
        return ""
    if relation == "add_remove" and unit == "replace":
        return (
            f"an add/remove release of ε {requested_eps:g} costs 2 x ε = {charged_eps:g} on "
            "this replace-one ledger"
        )
    if relation == "cell":
        return (
            f"a cell-level release of ε {requested_eps:g} costs ε {charged_eps:g} for one "
            "record (its row sum is capped)"
        )
    return f"a {relation} release of ε {requested_eps:g} costs ε {charged_eps:g} in {unit} units"
