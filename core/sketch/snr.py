"""Signal-to-noise ratio of a private sketch (Schellekens et al., SPARS 2019, Sec. III, Eq. (4)).

SNR = ||z||^2 / sum_j Var((s_X)_j), z the true sketch E_{x~P}[z_x].  Closed form for the complex
exponential: SNR_e = alpha_r n ||z||^2 / (1 - alpha_r ||z||^2 + sigma_xi^2).  For the quantised
signature use :func:`empirical_snr` (variances over repeated draws).
"""

import numpy as np

# c_f of the complex exponential signature (Schellekens et al., Sec. III)
C_F_COMPLEX_EXP = 2.0 * np.sqrt(2.0)


def sigma_xi(epsilon, n, sketch_size, measurements_per_record, c_f=C_F_COMPLEX_EXP):
    """Noise level of Schellekens et al. (SPARS 2019), Theorem 1:
    sigma_xi = 2 c_f sqrt(r m) / (sqrt(n) eps).

    References
    ----------
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019, Sec. II,
        Theorem 1.
    """
    return 2.0 * c_f * np.sqrt(measurements_per_record * sketch_size) / (np.sqrt(n) * epsilon)


def snr_complex_exp(true_sketch, n, sketch_size, measurements_per_record, noise_std):
    """SNR_e of Eq. (4); ``noise_std`` is sigma_xi (0 for a noiseless sketch).

    References
    ----------
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019, Sec. III,
        Eq. (4).
    """
    z2 = float(np.vdot(true_sketch, true_sketch).real)
    alpha = measurements_per_record / sketch_size
    return alpha * n * z2 / (1.0 - alpha * z2 + noise_std**2)


def noise_std_for_snr(snr, true_sketch, n, sketch_size, measurements_per_record):
    """Invert SNR_e for sigma_xi (Fig. 3 right: the SNR is set through the noise level);
    raises ValueError when the target exceeds the noiseless SNR.

    References
    ----------
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019, Sec. III,
        Eq. (4) and Fig. 3.
    """
    z2 = float(np.vdot(true_sketch, true_sketch).real)
    alpha = measurements_per_record / sketch_size
    var = alpha * n * z2 / snr - 1.0 + alpha * z2
    if var < 0:
        raise ValueError(f"SNR {snr:g} is above the noiseless SNR of this configuration")
    return float(np.sqrt(var))


def gmm_true_sketch(operator, means, weights=None):
    """Exact complex-exponential sketch of a unit-covariance Gaussian mixture:
    z_j = e^{i xi_j}/sqrt(m) sum_k pi_k exp(i omega_j^T mu_k - ||omega_j||^2 / 2).

    References
    ----------
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019, Sec. III
        (the mixture of Fig. 1).
    """
    means = np.atleast_2d(means)
    w = np.full(means.shape[0], 1.0 / means.shape[0]) if weights is None else np.asarray(weights)
    omega = operator.frequencies
    decay = np.exp(-0.5 * np.sum(omega**2, axis=0))
    return (
        (w @ np.exp(1j * (means @ omega)))
        * decay
        * np.exp(1j * operator.dither)
        / np.sqrt(operator.sketch_size)
    )


def empirical_snr(true_sketch, releases):
    """||z||^2 / sum_j Var((s_X)_j) from repeated releases (rows of ``releases``, complex).

    References
    ----------
    Schellekens, V., Chatalic, A., Houssiau, F., de Montjoye, Y.-A., Jacques, L. and
        Gribonval, R. (2019). Compressive k-means with differential privacy. SPARS 2019, Sec. III,
        Eq. (4).
    """
    releases = np.asarray(releases)
    var = np.var(releases.real, axis=0).sum() + np.var(releases.imag, axis=0).sum()
    return float(np.vdot(true_sketch, true_sketch).real / var)
