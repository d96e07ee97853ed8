"""privclust.core.privacy: DP primitives, guarantees, per-fit accounting and the budget ledger.

Primitives: Laplace (Dwork, McSherry, Nissim & Smith 2006), Gaussian (classic, Dwork & Roth 2014;
analytic, Balle & Wang 2018), exponential (McSherry & Talwar 2007; range-based, Dong, Durfee &
Rogers 2020), quantiles by the exponential mechanism (Smith 2011), AboveThreshold (Dwork & Roth
2014, Alg. 1), stable histogram (Vadhan 2016), composition, Haar/JL random matrices and smooth-sensitivity noise (Nissim, Raskhodnikova & Smith
2007). Each takes an explicit
``numpy.random.Generator`` and a ``size=`` batched form (N independent releases in one vectorised
call) used by the statistical audits in :mod:`privclust.core.privacy.audit`.

Known limitation: noise is sampled in floating point with numpy, which is open to precision
attacks (Mironov 2012); see :mod:`privclust.core.privacy.laplace`.
"""

from . import audit
from .accountant import BudgetAccountant
from .composition import advanced_composition, basic_composition
from .errors import BudgetExceeded, DuplicateRequest, PrivacyWarning
from .exponential import (
    exponential_mechanism,
    exponential_probabilities,
    gumbel_max,
    gumbel_perturbed,
)
from .gaussian import analytic_gaussian_sigma, classic_gaussian_sigma, gaussian
from .guarantee import KINDS, NEIGHBOURINGS, Guarantee, Spend
from .histogram import stable_histogram, stable_histogram_threshold
from .laplace import complex_laplace, laplace
from .ledger import ChargeRecord, Ledger
from .quantile import exponential_quantile_probabilities, exponential_quantiles
from .random_matrices import haar_orthogonal, haar_stiefel, jl_matrix
from .relations import RelationError, convert
from .rng import as_generator
from .smooth import smooth_sensitivity_gaussian, smooth_sensitivity_parameters
from .sparse_vector import above_threshold

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
