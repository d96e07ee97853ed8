"""The page's one release service: every private release of the page goes through here.

:func:`release` (a fit), :func:`start_live` / :func:`live_outcome` (the Gibbs sampler) and
:func:`commit_plan` (the Plan tab) call the dataset's :class:`~privclust.core.Curator` and return
one :class:`Outcome` (released, from store, refused, failed); :func:`describe` is the one place
that turns an outcome into the page's words. A refusal happens before anything runs or is
charged; a failure after the charge keeps its message (which may describe the records) for the
data owner view only.
"""

import logging
from dataclasses import dataclass, field

from privclust.core.data.dask_dataset import ReleaseCancelled
from privclust.core.privacy import BudgetExceeded
from privclust.core.release import NotPrivate, PrivacyRefused, ReleaseFailed

from .ledger import relation_note

log = logging.getLogger(__name__)

RELEASED, FROM_STORE, REFUSED, FAILED = "released", "from store", "refused", "failed"


@dataclass(frozen=True)
class Outcome:
    """What became of one request. ``release`` (released / from store) is the stored Release;
    ``reason`` (refused) is public text; ``kind``/``detail`` (failed) are the error's type and
    its withheld message (data owner only); ``not_private`` marks a refusal because the plan is
    not private; ``budget`` = (cost, plan) for a refusal on the budget; ``releases`` and
    ``accounting`` for a committed plan."""

    status: str
    release: object = None
    reason: str = ""
    kind: str = ""
    detail: str = ""
    not_private: bool = False
    budget: tuple | None = None
    releases: list = field(default_factory=list)
    accounting: object = None

    @property
    def ok(self):
        return self.status in (RELEASED, FROM_STORE)


def _refused(exc):
    return Outcome(REFUSED, reason=f"{exc}", not_private=isinstance(exc, NotPrivate))


def _failed(exc):
    log.warning("release failed after its charge: %s", exc.detail)
    return Outcome(
        FAILED, kind=exc.kind, detail=exc.detail, releases=list(getattr(exc, "releases", []))
    )


def prepare(curator, estimator):
    """The Curator's prepared request, or a refused :class:`Outcome` (nothing ran)."""
    try:
        return curator.prepare(estimator)
    except (PrivacyRefused, ValueError, TypeError) as exc:  # parameters, before any charge
        return _refused(exc)


def budget_check(curator, prepared):
    """None when ``prepared`` fits the remaining budget now (or is free: stored or already
    paid), else a refused :class:`Outcome` naming its cost."""
    cost = curator.cost(prepared)
    if cost == (0.0, 0.0):
        return None
    plan = prepared.plan
    fits = curator.ledger.can_charge(
        plan.epsilon, plan.delta, relation=plan.neighbouring, **prepared.estimator.ledger_options()
    )
    return None if fits else Outcome(REFUSED, budget=(cost, plan))


def release(curator, estimator):
    """One release of ``estimator`` (or of a prepared request) through ``curator``."""
    prepared = estimator if not _is_estimator(estimator) else prepare(curator, estimator)
    if isinstance(prepared, Outcome):
        return prepared
    refused = budget_check(curator, prepared)
    if refused is not None:
        return refused
    try:
        done = curator.release(prepared)
    except ReleaseCancelled as exc:  # a large data set's release, stopped before its charge
        return Outcome(REFUSED, reason=str(exc))
    except BudgetExceeded:  # another session spent the budget meanwhile
        return Outcome(REFUSED, budget=(prepared.cost, prepared.plan))
    except ReleaseFailed as exc:
        return _failed(exc)
    except (PrivacyRefused, ValueError, TypeError) as exc:
        return _refused(exc)
    return Outcome(FROM_STORE if done.from_store else RELEASED, release=done)


def start_live(curator, estimator, reference=None, diagnostics=False, process=True, nice=0):
    """Start a stepping release (the Gibbs sampler): the running
    :class:`~privclust.core.release.LiveRelease`, or an :class:`Outcome` when it was refused
    or answered from the store (nothing runs then)."""
    prepared = prepare(curator, estimator)
    if isinstance(prepared, Outcome):
        return prepared
    refused = budget_check(curator, prepared)
    if refused is not None:
        return refused
    try:
        live = curator.live(
            prepared, reference=reference, diagnostics=diagnostics, process=process, nice=nice
        ).start()
    except BudgetExceeded:
        return Outcome(REFUSED, budget=(prepared.cost, prepared.plan))
    except (PrivacyRefused, ValueError, TypeError) as exc:
        return _refused(exc)
    if live.status == "from store":
        return Outcome(FROM_STORE, release=live.release)
    return live


def live_outcome(live):
    """The :class:`Outcome` of a stepping release that has ended."""
    if live.release is not None:
        return Outcome(FROM_STORE if live.release.from_store else RELEASED, release=live.release)
    if isinstance(live.error, ReleaseFailed):
        return _failed(live.error)
    return Outcome(FAILED, kind=type(live.error).__name__, detail=str(live.error))


def commit_plan(curator, result, releases, delta):
    """Commit a planned set of releases (charged once at its tight total): an
    :class:`Outcome` with the releases made and the accounting charged (a refusal's
    ``reason`` is a whole sentence)."""
    try:
        accounting, made = result.commit(curator, releases, delta=delta)
    except BudgetExceeded as exc:  # the planner's words say that nothing was charged
        return Outcome(REFUSED, reason=str(exc).rstrip(".") + ".")
    except ReleaseFailed as exc:
        out = _failed(exc)
        return Outcome(
            FAILED,
            kind=out.kind,
            detail=out.detail,
            releases=out.releases,
            accounting=result.account(releases, delta=delta),
        )
    except (PrivacyRefused, ValueError, TypeError) as exc:
        return Outcome(REFUSED, reason=f"{exc}. Nothing was charged or run.")
    return Outcome(RELEASED, releases=list(made), accounting=accounting)


def budget_text(ledger_model, cost, plan):
    """Why a release of ``cost`` (its plan ``plan``) is refused: its cost and what remains,
    read from the ledger now (another session may have spent meanwhile)."""
    ledger_model.refresh()
    left = ledger_model.remaining
    eps, delta = cost
    note = relation_note(plan.neighbouring, plan.epsilon, eps, ledger_model.unit)
    return (
        f"Refused: this release costs ε = {eps:g}"
        + (f", δ = {delta:g}" if delta else "")
        + (f" ({note})" if note else "")
        + f" but only ε = {left[0]:g}, δ = {left[1]:g} remain for this dataset. "
        "Nothing was run or charged."
    )


def describe(outcome, label, ledger_model, owner_view=False, what="release"):
    """The page's words for ``outcome`` of ``label``: (text, alert kind). ``what`` names the
    thing released in the sentences ("release", "sampler's release")."""
    if outcome.status == REFUSED:
        if outcome.budget is not None:
            return budget_text(ledger_model, *outcome.budget), "danger"
        return (
            f"Refused before anything ran: {outcome.reason}. Nothing was run or charged.",
            "danger",
        )
    if outcome.status == FAILED:
        if owner_view:
            return (
                f"The {what} failed: {outcome.detail}. The budget charged for it stays "
                "spent. (data owner view: not private)"
            ), "danger"
        return (
            f"The {what} failed ({outcome.kind}) after it was charged; its message may "
            "describe the private data: the data owner view (not private) shows it. The "
            "budget charged for it stays spent."
        ), "danger"
    release = outcome.release
    if outcome.status == FROM_STORE:
        return ("Identical request: answered from the release store. Nothing was charged.", "info")
    eps, delta = release.cost
    note = relation_note(
        release.guarantee.neighbouring, release.guarantee.epsilon, eps, release.unit
    )
    warnings = release.guarantee.warnings
    text = (
        f"Released {label}: charged ε = {eps:g}"
        + (f", δ = {delta:g}" if delta else "")
        + (f" ({note})" if note else "")
        + " to the ledger before it ran; fresh randomness, the seed was ignored."
        + "".join(f" Warning: {w}" for w in warnings)
    )
    return text, "warning" if warnings else "success"


def _is_estimator(obj):
    return callable(getattr(obj, "get_params", None))
