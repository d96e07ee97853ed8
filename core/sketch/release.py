"""Private release of a merged sketch (Schellekens et al., SPARS 2019, Sec. II, Eq. (3) and
Theorem 1; the add/remove variant with a noisy count of Schellekens et al., "Differentially
private compressive k-means", ICASSP 2019; a Gaussian variant).

Noise is added once, to the merged sum, so a sketch computed on partitions or streamed from files
is released exactly like a one-pass sketch.

* ``replace`` (n public), Laplace: s = Sum/(alpha_r n) + Lap per real/imaginary part with scale
  c_f sqrt(m)/(n eps) (Theorem 1: sigma_xi = 2 c_f sqrt(r m)/(sqrt(n) eps) on the
  unnormalised noise xi / sqrt(alpha_r m n), so the ratio sensitivity/scale is exactly eps).
* ``add_remove`` (n private), noisy count: s = (Sum/alpha_r + eta)/max(n + zeta, 1), eta
  Laplace with scale c_f sqrt(m)/(2 eps_1) per part, zeta ~ Lap(1/eps_2), eps_1 = eps 2m/(2m+1)
  by default.
* ``mechanism="gaussian"``: analytic Gaussian (Balle & Wang, ICML 2018) on the real and
  imaginary parts with the l2 sensitivity 2 |f|max sqrt(m)/(sqrt(r) n) (replace) or
  |f|max sqrt(m/r) on Sum/alpha_r (add_remove, count still Laplace with eps_2).
"""

import numpy as np

from ..privacy import as_generator, complex_laplace, gaussian, laplace
from ..privacy._validation import check_delta, check_epsilon

NEIGHBOURING = ("replace", "add_remove")
MECHANISMS = ("laplace", "gaussian")


def l1_sensitivity(operator, measurements_per_record, n, neighbouring):
    """L1 sensitivity (real + imaginary parts) of the released numerator (Schellekens et al.,
    SPARS 2019, proof of Theorem 1).

    ``replace``: of Sum/(alpha_r n): r entries change by at most c_f/sqrt(m) each, i.e.
    r c_f/sqrt(m)/(alpha_r n) = c_f sqrt(m)/n.  ``add_remove``: of Sum/alpha_r: c_f sqrt(m)/2.
    Multiplied by ``operator.rounding_slack`` (1 + 2^-20 for float32 trigonometry, else 1).

    References
    ----------
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019, Sec. II,
        Theorem 1 and its proof.
    """
    m, c_f = operator.sketch_size, operator.c_f * operator.rounding_slack
    if neighbouring == "replace":
        return c_f * np.sqrt(m) / n
    return c_f * np.sqrt(m) / 2.0


def l2_sensitivity(operator, measurements_per_record, n, neighbouring):
    """L2 sensitivity of the same numerators: 2 |f| sqrt(m/r)/n (replace), |f| sqrt(m/r)
    (add/remove).

    References
    ----------
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019, Sec. II.
    Balle, B. and Wang, Y.-X. (2018). Improving the Gaussian mechanism for differential privacy:
        analytical calibration and optimal denoising. ICML 2018.
    """
    m, r = operator.sketch_size, measurements_per_record
    base = operator.modulus * operator.rounding_slack * np.sqrt(m / r)
    return 2.0 * base / n if neighbouring == "replace" else base


def _gaussian_complex(value, sensitivity, epsilon, delta, rng, size):
    stacked = np.stack([value.real, value.imag], axis=-1)
    noisy = gaussian(stacked, sensitivity, epsilon, delta, rng, size=size)
    return noisy[..., 0] + 1j * noisy[..., 1]


def release_sketch(
    sketch,
    epsilon,
    neighbouring="replace",
    mechanism="laplace",
    delta=0.0,
    random_state=None,
    size=None,
    accountant=None,
    numerator_share=None,
):
    """Release ``sketch`` privately; returns complex (m,) (or (size, m), the batched form for audits).

    ``accountant`` (a :class:`privclust.core.privacy.BudgetAccountant`) records every mechanism
    before its noise is drawn.

    References
    ----------
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019, Sec. II,
        Eq. (3) and Theorem 1.
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Differentially private compressive k-means. ICASSP 2019.
    Balle, B. and Wang, Y.-X. (2018). Improving the Gaussian mechanism for differential privacy:
        analytical calibration and optimal denoising. ICML 2018.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if neighbouring not in NEIGHBOURING:
        raise NotImplementedError(
            f"neighbouring must be one of {NEIGHBOURING}, got {neighbouring!r}"
        )
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")
    if mechanism == "gaussian" and delta == 0.0:
        raise ValueError("mechanism='gaussian' needs delta > 0")
    if mechanism == "laplace" and delta != 0.0:
        raise ValueError("mechanism='laplace' is pure: use delta=0 (or mechanism='gaussian')")
    if sketch.count < 1:
        raise ValueError("cannot release an empty sketch")
    rng = as_generator(random_state)
    op, r, n, m = sketch.operator, sketch.measurements_per_record, sketch.count, sketch.sketch_size
    spend = accountant.spend if accountant is not None else (lambda *a, **k: None)

    if neighbouring == "replace":
        if numerator_share is not None:
            raise ValueError("numerator_share applies to neighbouring='add_remove' only")
        value = sketch.mean
        if mechanism == "laplace":
            sens = l1_sensitivity(op, r, n, neighbouring)
            spend("sketch Laplace (SCH19 Thm 1)", epsilon, 0.0, sens)
            return complex_laplace(value, sens, epsilon, rng, size=size)
        sens = l2_sensitivity(op, r, n, neighbouring)
        spend("sketch Gaussian", epsilon, delta, sens)
        return _gaussian_complex(value, sens, epsilon, delta, rng, size)

    share = 2.0 * m / (2.0 * m + 1.0) if numerator_share is None else float(numerator_share)
    if not 0.0 < share < 1.0:
        raise ValueError(f"numerator_share must be in (0, 1), got {numerator_share!r}")
    eps_num, eps_den = share * epsilon, (1.0 - share) * epsilon
    numerator = sketch.sum / sketch.alpha
    if mechanism == "laplace":
        sens = l1_sensitivity(op, r, n, neighbouring)
        spend("sketch numerator Laplace", eps_num, 0.0, sens)
        spend("sketch count Laplace", eps_den, 0.0, 1.0)
        num = complex_laplace(numerator, sens, eps_num, rng, size=size)
    else:
        sens = l2_sensitivity(op, r, n, neighbouring)
        spend("sketch numerator Gaussian", eps_num, delta, sens)
        spend("sketch count Laplace", eps_den, 0.0, 1.0)
        num = _gaussian_complex(numerator, sens, eps_num, delta, rng, size)
    count = laplace(float(n), 1.0, eps_den, rng, size=size)
    count = np.maximum(np.asarray(count, dtype=float), 1.0)
    return num / (count[..., None] if size is not None else count)
