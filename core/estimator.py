"""The base of every private estimator: plan before data, charge before reading.

A private estimator states, from its parameters alone, the :class:`Guarantee` it will have after
``fit`` (its *plan*) and the names of the fitted attributes it releases. :meth:`fit` is a thin
caller of the one release pipeline
(:class:`~privclust.core.release.prepared.PreparedRelease`):

    validate parameters -> plan -> charge the ledger -> read the data -> compute

so nothing that can fail on parameters runs after the charge, and nothing reads the data before
it. The number of records is passed to the plan only when the estimator's neighbouring relation
treats it as public (replace-one and cell-level relations fix the shape; add/remove does not),
so a default derived from n (e.g. delta = 1/(n ln n)) is refused under add/remove.

Subclasses implement ``_plan(n_samples, n_features)`` (validate every parameter, return the
Guarantee) and ``_fit(X, rng)`` (compute; set the fitted attributes and ``privacy_``), and list
their released attributes in ``_released``; a stepping estimator (the Gibbs sampler) also
implements ``_steps(X, rng, **kwargs)``, a generator.
"""

import math
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from .constraints import EPSILON, LEDGER, RANDOM_STATES
from .privacy._validation import check_delta, check_epsilon
from .privacy.accounting.guarantee import Guarantee
from .privacy.rng import as_generator
from .release.prepared import PreparedRelease


class DataAccessError(RuntimeError):
    """Raised by test doubles that stand for data which must not be read yet."""


def public_shape(X):
    """(n_samples, n_features) of ``X`` without reading its values (``.shape`` when present)."""
    shape = getattr(X, "shape", None)
    if shape is None:
        shape = np.shape(X)
    if len(shape) != 2:
        raise ValueError(
            f"X must be 2-dimensional (n_samples, n_features), got shape {tuple(shape)}"
        )
    n, d = (int(s) for s in shape)
    # scikit-learn's wording (check_array), which its estimator checks look for
    if n < 1:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={(n, d)}) while a minimum of 1 is required."
        )
    if d < 1:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={(n, d)}) while a minimum of 1 is required."
        )
    return n, d


def check_positive_int(value, name, minimum=1):
    """``value`` as an int if it is an integer >= ``minimum``; ValueError naming ``name`` otherwise."""
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, numbers.Integral)
        or value < minimum
    ):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_choice(value, name, allowed):
    """``value`` if it is one of ``allowed``; ValueError naming ``name`` otherwise."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {tuple(allowed)}, got {value!r}")
    return value


def check_finite_data(X, name="X"):
    """X as a 2-D float64 array with finite entries (ValueError otherwise)."""
    if np.iscomplexobj(X):  # np.asarray(..., float64) would drop the imaginary parts silently
        raise ValueError(f"Complex data not supported: {name} has a complex dtype")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(
            f"{name} must be a non-empty 2-D array (n_samples, n_features), got shape {X.shape}"
        )
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return X


class PrivateEstimator(BaseEstimator):
    """Base class of privclust's private estimators (see the module docstring).

    Subclasses implement ``_plan`` and ``_fit`` and list their released attributes in
    ``_released``; :meth:`fit` plans from the parameters and the public shape, charges ``ledger``
    the plan's cost (converted to the ledger's unit), then reads the records.

    Parameters
    ----------
    epsilon : float
        Every subclass takes it: the privacy parameter of the fit.
    ledger : Ledger or None
        Optional budget ledger, charged before any record is read.
    random_state : None, int or numpy.random.Generator
        Seeds the fit's randomness (the :class:`~privclust.core.release.Curator` replaces it by
        fresh OS entropy).

    Attributes
    ----------
    privacy_ : Guarantee
        The guarantee of the fit, within the plan.

    References
    ----------
    See docs/algorithms.md, section 1 (the order of a fit).
    """

    #: scikit-learn's parameter constraints, checked first by :meth:`plan` (subclasses extend it)
    _parameter_constraints: dict = {
        "epsilon": [EPSILON],
        "ledger": [None, LEDGER],
        "random_state": RANDOM_STATES,
    }
    #: names of the fitted attributes a release carries; nothing else of a fit is released
    _released = ()
    #: whether :meth:`_check_data` reads scipy.sparse matrices. Whether the data are sparse is
    #: public (like the shape), so an estimator that cannot read them refuses before the charge
    _accepts_sparse = False

    # ---- declared before any data -----------------------------------------------------------
    def released_attributes(self):
        """Names of the fitted attributes a release of this configuration carries."""
        return tuple(self._released)

    def neighbouring_relation(self):
        """The neighbouring relation of this configuration ("replace", "add_remove", "cell")."""
        return getattr(self, "neighbouring", "replace")

    def plan(self, n_samples=None, n_features=None):
        """The :class:`Guarantee` a fit with these parameters will have, from the parameters
        alone (and the public shape, when given). Validates every parameter; raises
        ValueError/TypeError naming the problem. ``n_samples`` must be None unless the number of
        records is public under this configuration's relation."""
        self._validate_params()  # types and ranges (_parameter_constraints), with their names
        as_generator(getattr(self, "random_state", None))
        if n_samples is not None and self.neighbouring_relation() == "add_remove":
            raise ValueError(
                "under add/remove neighbours the number of records is private: "
                "plan without n_samples"
            )
        plan = self._plan(n_samples, n_features)
        if not isinstance(plan, Guarantee):
            raise TypeError(f"{type(self).__name__}._plan must return a Guarantee")
        return plan

    def public_plan(self, shape):
        """:meth:`plan` for data of ``shape``, passing n only when the relation makes it public."""
        n, d = shape
        return self.plan(None if self.neighbouring_relation() == "add_remove" else n, d)

    def check_data_kind(self, sparse):
        """ValueError, before any charge, when the data are sparse (a public fact) and this
        estimator cannot read sparse input (it would fail after the charge on every such
        dataset, spending the budget for nothing)."""
        if sparse and not self._accepts_sparse:
            raise ValueError(
                f"{type(self).__name__} does not read sparse data (scipy.sparse): "
                "convert the dataset to a dense array first"
            )

    def ledger_options(self):
        """Extra arguments the ledger needs to convert this release's cost (e.g. a row cap)."""
        return {}

    def describe(self):
        """The ledger's 'what' text: the class and its public parameters."""
        params = {
            k: v
            for k, v in self.get_params(deep=False).items()
            if k not in ("ledger", "random_state")
        }
        text = ", ".join(f"{k}={_short(v)}" for k, v in sorted(params.items()))
        return f"{type(self).__name__}({text})"

    # ---- the one fit ------------------------------------------------------------------------
    def fit(self, X, y=None):
        """Plan, charge ``ledger``, then read ``X`` and compute; returns self (``y`` is ignored)."""
        return self.prepared(X).run(X)

    def prepared(self, X):
        """This estimator's request on ``X`` as a
        :class:`~privclust.core.release.prepared.PreparedRelease`, from the public shape only
        (nothing of ``X`` is read)."""
        return PreparedRelease.for_fit(self, public_shape(X), sp.issparse(X))

    def _steps(self, X, rng, **kwargs):
        """The run as a generator (after the charge, on checked data): by default the whole
        :meth:`_fit`, yielding nothing; stepping estimators yield their progress."""
        self._fit(X, rng)
        yield from ()

    def _before_charge(self, shape, rng):
        """Public, data-independent preparation that may still fail on the parameters (e.g.
        drawing a public operator and checking it against the public bounds); runs before the
        charge. No-op by default."""

    def _check_data(self, X):
        """Read the data (after the charge): a finite 2-D float64 array by default."""
        return check_finite_data(X)

    def _plan(self, n_samples, n_features):
        raise NotImplementedError

    def _fit(self, X, rng):
        raise NotImplementedError


class CenterPredictorMixin:
    """``predict``: the index of the nearest released centre (post-processing of a release)."""

    def predict(self, X):
        check_is_fitted(self, "cluster_centers_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        C = self.cluster_centers_
        d2 = (X * X).sum(1)[:, None] - 2.0 * X @ C.T + (C * C).sum(1)[None, :]
        return np.argmin(d2, axis=1)


def epsilon_param(epsilon, allow_none=False):
    """Validated epsilon (finite > 0; None allowed when ``allow_none``)."""
    if epsilon is None and allow_none:
        return None
    return check_epsilon(epsilon)


def delta_param(delta, positive=False):
    """Validated delta (0 <= delta < 1, or 0 < delta < 1 when ``positive``)."""
    return check_delta(delta, positive=positive)


def default_delta(delta, n_samples, name="delta"):
    """``delta``, or 1/(n ln n) when it is None and n is public; ValueError when it is not."""
    if delta is not None:
        return check_delta(delta, name, positive=True)
    if n_samples is None:
        raise ValueError(
            f"{name}=None defaults to 1/(n ln n), which needs the number of records "
            f"n; it is private under add/remove neighbours, so pass an explicit {name}"
        )
    if n_samples < 2:
        raise ValueError(f"{name}=None defaults to 1/(n ln n), undefined for n={n_samples}")
    return 1.0 / (n_samples * math.log(n_samples))


def _short(value):
    if isinstance(value, np.ndarray):
        return f"array{value.shape}"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, BaseEstimator):
        return type(value).__name__
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
