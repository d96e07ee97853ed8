"""The vocabulary of scikit-learn parameter constraints shared by privclust's estimators.

Each estimator declares ``_parameter_constraints`` (scikit-learn's convention, checked by
``BaseEstimator._validate_params``); a private estimator's :meth:`plan` checks them first, so a
parameter of the wrong type or range is refused, with its name, before any charge. Checks that
need the public shape or several parameters together stay in the estimators.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

__all__ = [
    "BOUNDS",
    "DELTA",
    "EPSILON",
    "LEDGER",
    "NONNEGATIVE_INT",
    "POSITIVE_DELTA",
    "POSITIVE_INT",
    "RANDOM_STATES",
    "RELATION",
    "SHARE",
    "HasMethods",
    "Integral",
    "Interval",
    "Real",
    "StrOptions",
]

POSITIVE_INT = Interval(Integral, 1, None, closed="left")
NONNEGATIVE_INT = Interval(Integral, 0, None, closed="left")
EPSILON = Interval(Real, 0, None, closed="neither")
DELTA = Interval(Real, 0, 1, closed="left")
POSITIVE_DELTA = Interval(Real, 0, 1, closed="neither")
SHARE = Interval(Real, 0, 1, closed="neither")
#: a public box (lower, upper): scalars or one value per feature
BOUNDS = "array-like"
#: every neighbouring relation privclust knows; an estimator refuses those it does not support
#: itself (NotImplementedError, with the reason)
RELATION = StrOptions({"replace", "add_remove", "cell"})
#: the constraint list of ``random_state``: what scikit-learn accepts, and a numpy Generator
RANDOM_STATES = ["random_state", np.random.Generator]
LEDGER = HasMethods(["charge"])
