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

from . import audit
from .accounting import (
    KINDS,
    NEIGHBOURINGS,
    BudgetAccountant,
    ChargeRecord,
    Guarantee,
    Ledger,
    RelationError,
    Spend,
    advanced_composition,
    basic_composition,
    convert,
)
from .errors import BudgetExceeded, DuplicateRequest, PrivacyWarning
from .mechanisms import (
    above_threshold,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    complex_laplace,
    exponential_mechanism,
    exponential_probabilities,
    exponential_quantile_probabilities,
    exponential_quantiles,
    gaussian,
    gumbel_max,
    gumbel_perturbed,
    haar_orthogonal,
    haar_stiefel,
    jl_matrix,
    laplace,
    smooth_sensitivity_gaussian,
    smooth_sensitivity_parameters,
    stable_histogram,
    stable_histogram_threshold,
)
from .rng import as_generator

__all__ = [
    "as_generator",
    "PrivacyWarning",
    "BudgetExceeded",
    "DuplicateRequest",
    "laplace",
    "complex_laplace",
    "gaussian",
    "analytic_gaussian_sigma",
    "classic_gaussian_sigma",
    "exponential_mechanism",
    "exponential_probabilities",
    "gumbel_max",
    "gumbel_perturbed",
    "above_threshold",
    "exponential_quantiles",
    "exponential_quantile_probabilities",
    "stable_histogram",
    "stable_histogram_threshold",
    "basic_composition",
    "advanced_composition",
    "haar_orthogonal",
    "haar_stiefel",
    "jl_matrix",
    "smooth_sensitivity_parameters",
    "smooth_sensitivity_gaussian",
    "Spend",
    "Guarantee",
    "KINDS",
    "NEIGHBOURINGS",
    "BudgetAccountant",
    "Ledger",
    "ChargeRecord",
    "audit",
    "RelationError",
    "convert",
]
