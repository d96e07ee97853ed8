"""Unit tests of the DP primitives (docs/algorithms.md, section 2)."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from privclust.core import privacy as P


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


# -- generators and validation ----------------------------------------------------------------
def test_as_generator():
    g = np.random.default_rng(1)
    assert P.as_generator(g) is g
    assert P.as_generator(7).random() == np.random.default_rng(7).random()
    assert isinstance(P.as_generator(None), np.random.Generator)
    assert isinstance(P.as_generator(np.random.SeedSequence(3)), np.random.Generator)
    for bad in (True, 1.5, "1", np.random.RandomState(0)):
        with pytest.raises(TypeError):
            P.as_generator(bad)
    with pytest.raises(ValueError):
        P.as_generator(-1)


def test_global_numpy_state_is_not_used(rng):
    np.random.seed(0)  # noqa: NPY002 -- the legacy global state must not be used
    a = P.laplace(0.0, 1.0, 1.0, np.random.default_rng(), size=3)
    np.random.seed(0)  # noqa: NPY002 -- the legacy global state must not be used
    b = P.laplace(0.0, 1.0, 1.0, np.random.default_rng(), size=3)
    assert not np.allclose(a, b)


@pytest.mark.parametrize("eps", [0, -1, math.nan, math.inf, "1", None, True])
def test_bad_epsilon_rejected(rng, eps):
    with pytest.raises((ValueError, TypeError), match="epsilon"):
        P.laplace(0.0, 1.0, eps, rng)


@pytest.mark.parametrize("delta", [0, 1, 1.5, -0.1, math.nan])
def test_bad_delta_rejected(rng, delta):
    with pytest.raises(ValueError, match="delta"):
        P.gaussian(0.0, 1.0, 0.5, delta, rng)


def test_rng_must_be_generator():
    with pytest.raises(TypeError, match="Generator"):
        P.laplace(0.0, 1.0, 1.0, 0)
    with pytest.raises(TypeError, match="Generator"):
        P.exponential_mechanism([0, 1], 1.0, 1.0, None)


def test_non_finite_values_rejected(rng):
    with pytest.raises(ValueError, match="NaN"):
        P.laplace([0.0, np.nan], 1.0, 1.0, rng)
    with pytest.raises(ValueError, match="sensitivity"):
        P.laplace(0.0, -1.0, 1.0, rng)
    with pytest.raises(ValueError, match="size"):
        P.laplace(0.0, 1.0, 1.0, rng, size=0)


# -- Laplace ----------------------------------------------------------------------------------
def test_laplace_shapes_and_scale(rng):
    assert P.laplace(np.zeros((2, 3)), 1.0, 1.0, rng).shape == (2, 3)
    out = P.laplace(np.zeros(2), 2.0, 0.5, rng, size=100_000)
    assert out.shape == (100_000, 2)
    # Lap(b) with b = 4: KS test at the right scale passes, at 0.8x it fails
    assert stats.kstest(out[:, 0], stats.laplace(scale=4.0).cdf).pvalue > 1e-6
    assert stats.kstest(out[:, 0], stats.laplace(scale=3.2).cdf).pvalue < 1e-20
    assert np.array_equal(P.laplace([1.0, 2.0], 0.0, 1.0, rng, size=3), [[1, 2]] * 3)


def test_complex_laplace(rng):
    out = P.complex_laplace(np.array([1 + 2j, 0j]), 1.0, 2.0, rng, size=100_000)
    assert out.dtype == np.complex128 and out.shape == (100_000, 2)
    re, im = out[:, 0].real - 1, out[:, 0].imag - 2
    for part in (re, im):
        assert stats.kstest(part, stats.laplace(scale=0.5).cdf).pvalue > 1e-6
    assert abs(np.corrcoef(re, im)[0, 1]) < 0.02


# -- Gaussian ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "eps, delta, analytic, classic",
    [(0.1, 1e-5, 30.75, 48.45), (1.0, 1e-5, 3.731, 4.845), (5.0, 1e-5, 0.892, None)],
)
def test_gaussian_sigma_table(eps, delta, analytic, classic):
    """Classic and analytic Gaussian sigma against reference values (sensitivity 1; Dwork &
    Roth 2014, Thm. A.1; Balle & Wang, ICML 2018)."""
    assert P.analytic_gaussian_sigma(eps, delta, 1.0) == pytest.approx(analytic, abs=0.006)
    if eps < 1:
        assert P.classic_gaussian_sigma(eps, delta, 1.0) == pytest.approx(classic, abs=0.006)
    else:  # the table's eps = 1 entry is the bare formula; the function refuses eps >= 1
        with pytest.raises(ValueError, match="epsilon < 1"):
            P.classic_gaussian_sigma(eps, delta, 1.0)
        if classic is not None:
            assert math.sqrt(2 * math.log(1.25 / delta)) / eps == pytest.approx(classic, abs=0.006)


def _analytic_delta(sigma, eps):
    a, b = 0.5 / sigma - eps * sigma, -0.5 / sigma - eps * sigma
    return stats.norm.cdf(a) - math.exp(eps) * stats.norm.cdf(b)


@pytest.mark.parametrize("eps", [1e-3, 0.1, 1.0, 10.0, 100.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 0.1])
def test_analytic_sigma_is_tight(eps, delta):
    sigma = P.analytic_gaussian_sigma(eps, delta, 1.0)
    assert _analytic_delta(sigma, eps) <= delta * (1 + 1e-9)
    assert _analytic_delta(sigma * (1 - 1e-6), eps) > delta * (1 - 1e-3)
    assert P.analytic_gaussian_sigma(eps, delta, 3.0) == pytest.approx(3 * sigma, rel=1e-12)
    if eps < 1:
        assert sigma < P.classic_gaussian_sigma(eps, delta, 1.0)


@pytest.mark.parametrize("eps", [1e-3, 0.5, 5.0, 50.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 0.1])
def test_analytic_sigma_agrees_with_dp_accounting(eps, delta):
    """Against Google's dp_accounting, an independent implementation: its privacy loss of the
    Gaussian mechanism (exact hockey-stick divergence) says our sigma is (eps, delta)-DP and 0.1%
    less is not; its own calibration (a binary search) lands at most 1e-6 above ours."""
    from dp_accounting.pld.accountant import get_smallest_gaussian_noise
    from dp_accounting.pld.common import DifferentialPrivacyParameters
    from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss

    sigma = P.analytic_gaussian_sigma(eps, delta, 1.0)
    assert GaussianPrivacyLoss(sigma).get_delta_for_epsilon(eps) <= delta * (1 + 1e-9)
    assert GaussianPrivacyLoss(sigma * (1 - 1e-3)).get_delta_for_epsilon(eps) > delta
    theirs = get_smallest_gaussian_noise(DifferentialPrivacyParameters(eps, delta))
    assert sigma * (1 - 1e-12) <= theirs <= sigma * (1 + 1e-6)


def test_gaussian_release(rng):
    out = P.gaussian(np.zeros(3), 1.0, 1.0, 1e-5, rng, size=50_000)
    assert out.shape == (50_000, 3)
    assert out.std() == pytest.approx(3.7306, rel=0.02)
    out = P.gaussian(0.0, 1.0, 0.5, 1e-5, rng, size=50_000, calibration="classic")
    assert out.std() == pytest.approx(P.classic_gaussian_sigma(0.5, 1e-5, 1.0), rel=0.02)
    with pytest.raises(ValueError, match="epsilon < 1"):
        P.gaussian(0.0, 1.0, 1.0, 1e-5, rng, calibration="classic")
    with pytest.raises(ValueError, match="calibration"):
        P.gaussian(0.0, 1.0, 1.0, 1e-5, rng, calibration="zcdp")


# -- exponential mechanism --------------------------------------------------------------------
def test_exponential_shapes(rng):
    assert P.exponential_mechanism(np.zeros((5, 3)), 1.0, 1.0, rng).shape == (5,)
    assert P.exponential_mechanism(np.zeros((5, 3)), 1.0, 1.0, rng, size=4).shape == (4, 5)
    idx = P.exponential_mechanism([0.0, 1.0], 1.0, 1.0, rng)
    assert idx.dtype == np.int64 and idx.ndim == 0
    with pytest.raises(ValueError):
        P.exponential_mechanism([], 1.0, 1.0, rng)
    with pytest.raises(ValueError, match="NaN"):
        P.exponential_mechanism([0.0, np.nan], 1.0, 1.0, rng)


def test_exponential_huge_utilities_do_not_overflow(rng):
    u = np.array([1e300, 1e300 - 1e290, -1e300])
    out = P.exponential_mechanism(u, 1.0, 1e290, rng, size=1000)
    assert set(np.unique(out)) <= {0, 1}
    p = P.exponential_probabilities(u, 1.0, 1e290)
    assert np.all(np.isfinite(p)) and p.sum() == pytest.approx(1.0)
    # utilities like 1e5 with eps=1 would overflow exp(eps*u) if exponentiated raw
    out = P.exponential_mechanism([1e5, 1e5 - 3, 0], 1.0, 1.0, rng, size=20_000)
    assert np.mean(out == 0) == pytest.approx(1 / (1 + math.exp(-1.5)), abs=0.015)


def test_exponential_excluded_candidates(rng):
    out = P.exponential_mechanism([-np.inf, 0.0, 0.0], 1.0, 0.0, rng, size=10_000)
    assert set(np.unique(out)) == {1, 2}
    with pytest.raises(ValueError, match="excluded"):
        P.exponential_mechanism([-np.inf, -np.inf], 1.0, 1.0, rng)


def test_exponential_zero_sensitivity_is_uniform(rng):
    out = P.exponential_mechanism([0.0, 100.0, 5.0], 1.0, 0.0, rng, size=30_000)
    counts = np.bincount(out, minlength=3)
    assert stats.chisquare(counts).pvalue > 1e-4


@pytest.mark.parametrize("range_based", [False, True])
def test_gumbel_max_frequencies_match_softmax(rng, range_based):
    u = np.array([0.0, 1.0, 2.5, -1.0])
    p = P.exponential_probabilities(u, 1.3, 0.7, range_based=range_based)
    logits = 1.3 * u / (0.7 if range_based else 1.4)
    assert np.allclose(p, np.exp(logits) / np.exp(logits).sum())
    out = P.exponential_mechanism(u, 1.3, 0.7, rng, size=200_000, range_based=range_based)
    counts = np.bincount(out, minlength=4)
    assert stats.chisquare(counts, 200_000 * p).pvalue > 1e-4


def test_gumbel_max_batched_rows_independent(rng):
    logits = np.log([[0.2, 0.8], [0.9, 0.1]])
    out = P.gumbel_max(logits, rng, size=50_000)
    assert out.shape == (50_000, 2)
    assert np.mean(out[:, 0]) == pytest.approx(0.8, abs=0.01)
    assert np.mean(out[:, 1]) == pytest.approx(0.1, abs=0.01)


def _grid_neighbours(k, sens, values):
    """All utility pairs on a small grid whose coordinatewise difference is at most ``sens``."""
    grid = np.array(np.meshgrid(*[values] * k, indexing="ij")).reshape(k, -1).T
    diff = np.abs(grid[:, None, :] - grid[None, :, :]).max(axis=-1)
    i, j = np.nonzero(diff <= sens + 1e-12)
    return grid[i], grid[j]


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_exponential_exact_privacy_standard(eps):
    """Enumerate tiny inputs; P(o|u) <= e^eps P(o|u') for every neighbour pair."""
    u, v = _grid_neighbours(3, 1.0, np.linspace(-1, 1, 5))
    pu, pv = P.exponential_probabilities(u, eps, 1.0), P.exponential_probabilities(v, eps, 1.0)
    ratio = np.max(np.log(pu / pv))
    assert ratio <= eps + 1e-9
    assert ratio > 0.6 * eps  # with 3 candidates the bound is approached: the check has teeth
    # planted bug: the range-based scaling with the standard sensitivity exceeds eps
    bad = np.max(
        np.log(
            P.exponential_probabilities(u, eps, 1.0, range_based=True)
            / P.exponential_probabilities(v, eps, 1.0, range_based=True)
        )
    )
    assert bad > eps


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_exponential_exact_privacy_range_based(eps):
    """Range-based EM: pairs whose difference vector has range <= Delta~ = 1."""
    grid_u, grid_v = _grid_neighbours(3, 1.0, np.linspace(-1, 1, 5))
    d = grid_u - grid_v
    keep = d.max(axis=1) - d.min(axis=1) <= 1.0 + 1e-12
    u, v = grid_u[keep], grid_v[keep]
    pu = P.exponential_probabilities(u, eps, 1.0, range_based=True)
    pv = P.exponential_probabilities(v, eps, 1.0, range_based=True)
    ratio = np.max(np.log(pu / pv))
    assert 0.6 * eps < ratio <= eps + 1e-9
    # planted bug: half the range sensitivity
    bad = np.max(
        np.log(
            P.exponential_probabilities(u, eps, 0.5, range_based=True)
            / P.exponential_probabilities(v, eps, 0.5, range_based=True)
        )
    )
    assert bad > eps


# -- AboveThreshold ---------------------------------------------------------------------------
def test_above_threshold_behaviour(rng):
    out = P.above_threshold([0.0, 0.0, 1000.0, 0.0], 500.0, 1.0, rng, size=10_000)
    assert out.shape == (10_000,) and np.all(out == 2)
    assert np.all(P.above_threshold([0.0, 0.0], 1e4, 1.0, rng, size=100) == -1)
    assert np.all(P.above_threshold([1e4, 1e4], 0.0, 1.0, rng, size=100) == 0)
    multi = P.above_threshold(np.array([[-1e4, 1e4], [1e4, -1e4]]), [0.0, 0.0], 1.0, rng, size=7)
    assert multi.shape == (7, 2) and np.all(multi == [1, 0])


def test_above_threshold_accuracy(rng):
    """Dwork & Roth Thm 3.24: answers are alpha-accurate w.p. >= 1-beta."""
    eps, beta, R = 1.0, 0.05, 20
    alpha = 8 * (math.log(R) + math.log(2 / beta)) / eps
    q = np.full(R, -alpha)
    q[-1] = 100 + alpha
    out = P.above_threshold(q, 100.0, eps, rng, size=20_000)
    assert np.mean(out != R - 1) <= beta


# -- stable histogram -------------------------------------------------------------------------
def test_stable_histogram_picks_heavy_cell(rng):
    keys = np.array([[1, 2]] * 200 + [[3, 4]] * 20 + [[5, 6]])
    key, count = P.stable_histogram(keys, 1.0, 1e-6, rng)
    assert key.tolist() == [1, 2] and abs(count - 200) < 30
    keys_b, counts_b = P.stable_histogram(keys, 1.0, 1e-6, rng, size=1000)
    assert keys_b.shape == (1000, 2) and np.all(keys_b == [1, 2])
    assert counts_b.mean() == pytest.approx(200, abs=1)


def test_stable_histogram_threshold_and_empty(rng):
    tau = P.stable_histogram_threshold(1.0, 1e-6)
    assert tau == pytest.approx(1 + 2 * math.log(1e6))
    assert P.stable_histogram(np.array([[0]] * 3), 1.0, 1e-6, rng) is None
    assert P.stable_histogram(np.zeros((0, 2), dtype=int), 1.0, 1e-6, rng) is None
    keys, counts = P.stable_histogram(np.array([[0]] * 3), 1.0, 1e-6, rng, size=50)
    assert np.all(np.isnan(counts))
    with pytest.raises(TypeError, match="integers"):
        P.stable_histogram(np.array([[0.5]]), 1.0, 1e-6, rng)
    with pytest.raises(ValueError, match="delta"):
        P.stable_histogram(np.array([[0]]), 1.0, 0.0, rng)
    assert P.stable_histogram(np.array([7] * 100), 1.0, 1e-6, rng)[0].tolist() == [7]


def test_stable_histogram_exact_privacy():
    """Exact distribution of the 'which cell' output for one record: 0 w.p. 1-delta/2 >= ..."""
    eps, delta = 1.0, 1e-3
    tau = P.stable_histogram_threshold(eps, delta)
    p_keep_single = stats.laplace(loc=1.0, scale=2 / eps).sf(tau)
    assert p_keep_single == pytest.approx(delta / 2)


# -- composition ------------------------------------------------------------------------------
def test_composition():
    assert P.basic_composition([(0.1, 0.0)] * 10)[0] == pytest.approx(1.0)
    assert P.basic_composition([P.Spend("a", 0.5, 1e-6), P.Spend("b", 0.25)]) == (0.75, 1e-6)
    eps, delta = P.advanced_composition(0.01, 1e-7, 1000, 1e-6)
    expected = math.sqrt(2 * 1000 * math.log(1e6)) * 0.01 + 1000 * 0.01 * math.expm1(0.01)
    assert eps == pytest.approx(expected) and delta == pytest.approx(1000 * 1e-7 + 1e-6)
    assert eps < 1000 * 0.01  # beats basic composition for many small steps
    with pytest.raises(ValueError, match="k"):
        P.advanced_composition(0.1, 0.0, 0, 1e-6)


# -- random matrices --------------------------------------------------------------------------
def test_haar_orthogonal_is_orthogonal(rng):
    q = P.haar_orthogonal(5, rng, size=10)
    assert q.shape == (10, 5, 5)
    assert np.allclose(q @ np.swapaxes(q, 1, 2), np.eye(5), atol=1e-12)
    u = P.haar_stiefel(6, 2, rng)
    assert u.shape == (6, 2) and np.allclose(u.T @ u, np.eye(2), atol=1e-12)
    with pytest.raises(ValueError, match="q must be"):
        P.haar_stiefel(2, 3, rng)


def test_haar_sign_fix(rng):
    """Without the sign fix, QR's Q has a biased diagonal (LAPACK makes R's diagonal negative-
    or positive-biased). Haar Q has E[Q_11] = 0 and Q_11^2 ~ Beta(1/2, (d-1)/2)."""
    d, n = 4, 20_000
    q = P.haar_orthogonal(d, rng, size=n)
    diag = np.diagonal(q, axis1=1, axis2=2)
    assert np.all(np.abs(diag.mean(axis=0)) < 4 / math.sqrt(n))
    assert stats.kstest(q[:, 0, 0] ** 2, stats.beta(0.5, (d - 1) / 2).cdf).pvalue > 1e-4
    # the unfixed QR fails the same test (planted bug)
    raw, _ = np.linalg.qr(rng.standard_normal((n, d, d)))
    assert np.abs(np.diagonal(raw, axis1=1, axis2=2).mean(axis=0)).max() > 0.2
    # the first column is uniform on the sphere: its sign is symmetric
    assert abs(np.mean(q[:, 0, 0] > 0) - 0.5) < 0.02


def test_haar_stiefel_distribution(rng):
    u = P.haar_stiefel(3, 1, rng, size=20_000)[..., 0]
    assert np.abs(u.mean(axis=0)).max() < 0.03
    assert np.allclose((u**2).mean(axis=0), 1 / 3, atol=0.01)


def test_jl_matrix(rng):
    m = P.jl_matrix(50, 400, rng)
    assert m.shape == (50, 400)
    assert m.var() == pytest.approx(1 / 50, rel=0.02)
    x = rng.standard_normal(400)
    norms = [np.linalg.norm(P.jl_matrix(50, 400, rng) @ x) / np.linalg.norm(x) for _ in range(200)]
    assert np.mean(norms) == pytest.approx(1.0, abs=0.03)


# -- smooth sensitivity -----------------------------------------------------------------------
def test_smooth_sensitivity_parameters():
    alpha, beta = P.smooth_sensitivity_parameters(1.0, 1e-6, 10)
    assert alpha == pytest.approx(1.0 / (5 * math.sqrt(2 * math.log(2e6))))
    assert beta == pytest.approx(1.0 / (4 * (10 + math.log(2e6))))
    with pytest.raises(ValueError, match="dim"):
        P.smooth_sensitivity_parameters(1.0, 1e-6, 0)


def test_smooth_sensitivity_gaussian(rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = P.smooth_sensitivity_gaussian(np.zeros(4), 0.5, 1.0, 1e-6, rng, size=20_000)
    alpha, _ = P.smooth_sensitivity_parameters(1.0, 1e-6, 4)
    assert out.shape == (20_000, 4)
    assert out.std() == pytest.approx(0.5 / alpha, rel=0.02)
    with pytest.warns(P.PrivacyWarning, match="proven range"):
        P.smooth_sensitivity_gaussian(np.zeros(4), 0.5, 2.0, 1e-6, rng)


def test_gaussian_noise_distribution_has_power(rng):
    """Tumult-style KS check: passes at the calibrated sigma, rejects sigma x (1 +- 0.3)."""
    sigma = P.analytic_gaussian_sigma(1.0, 1e-6, 2.0)
    out = P.gaussian(0.0, 2.0, 1.0, 1e-6, rng, size=100_000)
    assert stats.kstest(out, stats.norm(scale=sigma).cdf).pvalue > 1e-6
    for factor in (0.7, 1.3):
        assert stats.kstest(out, stats.norm(scale=factor * sigma).cdf).pvalue < 1e-20


def test_privacy_package_never_uses_global_numpy_random():
    """Lint: core/privacy draws randomness only from an explicit Generator."""
    import ast
    import pathlib

    allowed = {"default_rng", "Generator", "SeedSequence", "PCG64"}
    root = pathlib.Path(P.__file__).parent
    offenders = []
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "random"
                and node.attr not in allowed
            ):
                offenders.append(f"{path.name}:{node.lineno} np.random.{node.attr}")
    assert not offenders, offenders
