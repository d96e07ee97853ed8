"""Haar-random orthonormal matrices and Johnson-Lindenstrauss maps (Haar via QR with the
sign fix of Mezzadri 2007; JL maps with N(0, 1/k) entries)."""

import numbers

import numpy as np

from .._validation import check_rng, check_size


def _check_dim(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _qr_sign_fixed(g):
    """Q of the QR decomposition of (stacks of) g with the sign fix Q <- Q diag(sign(diag R))."""
    q, r = np.linalg.qr(g)
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    signs[signs == 0] = 1.0
    return q * signs[..., None, :]


def haar_orthogonal(d, rng, size=None):
    """Haar-distributed Q in O(d): QR of a standard Gaussian matrix with the mandatory sign fix.

    ``size=N`` returns (N, d, d).

    References
    ----------
    Mezzadri, F. (2007). How to generate random matrices from the classical compact groups.
        Notices Amer. Math. Soc. 54(5), 592-604.
    """
    d = _check_dim(d, "d")
    rng = check_rng(rng)
    return _qr_sign_fixed(rng.standard_normal(check_size(size) + (d, d)))


def haar_stiefel(d, q, rng, size=None):
    """Haar-distributed orthonormal d x q basis (the first q columns of a Haar Q in O(d)).

    Computed from the reduced QR of a d x q Gaussian matrix, which gives the same columns.
    ``size=N`` returns (N, d, q).

    References
    ----------
    Mezzadri, F. (2007). How to generate random matrices from the classical compact groups.
        Notices Amer. Math. Soc. 54(5), 592-604.
    """
    d = _check_dim(d, "d")
    q = _check_dim(q, "q")
    if q > d:
        raise ValueError(f"q must be <= d, got q={q}, d={d}")
    rng = check_rng(rng)
    return _qr_sign_fixed(rng.standard_normal(check_size(size) + (d, q)))


def jl_matrix(k, d, rng):
    """JL map M in R^{k x d} with M_ij ~ N(0, 1/k) i.i.d. (NSV16 Lemma 4.10): f(x) = M x.

    References
    ----------
    Johnson, W. B. and Lindenstrauss, J. (1984). Extensions of Lipschitz mappings into a
        Hilbert space. Contemp. Math. 26, 189-206.
    Nissim, K., Stemmer, U. and Vadhan, S. (2016). Locating a small cluster privately.
        PODS 2016, Lemma 4.10.
    """
    k = _check_dim(k, "k")
    d = _check_dim(d, "d")
    rng = check_rng(rng)
    return rng.normal(0.0, 1.0 / np.sqrt(k), size=(k, d))
