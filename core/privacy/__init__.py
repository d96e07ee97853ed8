"""privclust.core.privacy: DP primitives, guarantees, per-fit accounting and the budget ledger.

Two subpackages: :mod:`~privclust.core.privacy.mechanisms` (the noise: Laplace, Gaussian with
analytic calibration, exponential, quantiles, AboveThreshold, stable histogram, random matrices,
smooth sensitivity) and :mod:`~privclust.core.privacy.accounting` (guarantees, neighbouring
relations, composition, the budget ledger, plan accounting). Beside them: the shared errors,
:func:`as_generator`, and two modules that interpret a guarantee, :mod:`~privclust.core.privacy.audit`
(statistical audits of a mechanism on neighbouring data sets) and
:mod:`~privclust.core.privacy.risk` (what an epsilon means for one person). The public names of
both subpackages are importable from here.

Known limitation: noise is sampled in floating point with numpy, which is open to precision
attacks (Mironov 2012); see :mod:`privclust.core.privacy.mechanisms.laplace`.
"""

# the two subpackages' public names, re-exported here (each lists them once, in its __all__)
from . import accounting, audit, mechanisms
from .accounting import *  # noqa: F403
from .errors import BudgetExceeded, DuplicateRequest, PrivacyWarning
from .mechanisms import *  # noqa: F403
from .rng import as_generator

__all__ = [
    "as_generator",
    "PrivacyWarning",
    "BudgetExceeded",
    "DuplicateRequest",
    "audit",
    *accounting.__all__,
    *mechanisms.__all__,
]
