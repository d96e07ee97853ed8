"""Noise mechanisms: each takes an explicit ``numpy.random.Generator`` and a ``size=`` batched
form (N independent releases in one vectorised call, used by the statistical audits).

Laplace (Dwork, McSherry, Nissim & Smith 2006), Gaussian (classic, Dwork & Roth 2014; analytic,
Balle & Wang 2018), exponential (McSherry & Talwar 2007; range-based, Dong, Durfee & Rogers
2020), quantiles by the exponential mechanism (Smith 2011), AboveThreshold (Dwork & Roth 2014,
Alg. 1), stable histogram (Vadhan 2016), Haar/JL random matrices and smooth-sensitivity noise
(Nissim, Raskhodnikova & Smith 2007).
"""

from .exponential import (
    exponential_mechanism,
    exponential_probabilities,
    gumbel_max,
    gumbel_perturbed,
)
from .gaussian import analytic_gaussian_sigma, classic_gaussian_sigma, gaussian
from .histogram import stable_histogram, stable_histogram_threshold
from .laplace import complex_laplace, laplace
from .quantile import exponential_quantile_probabilities, exponential_quantiles
from .random_matrices import haar_orthogonal, haar_stiefel, jl_matrix
from .smooth import smooth_sensitivity_gaussian, smooth_sensitivity_parameters
from .sparse_vector import above_threshold

__all__ = [
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
    "haar_orthogonal",
    "haar_stiefel",
    "jl_matrix",
    "smooth_sensitivity_parameters",
    "smooth_sensitivity_gaussian",
]
