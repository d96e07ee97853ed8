"""Frequencies and the sketch operator (Schellekens et al., SPARS 2019, Sec. II, Eqs. (2)-(3))."""

import numpy as np
import pytest

from privclust.core.sketch import (
    C_F,
    SketchOperator,
    default_frequency_scale,
    draw_dither,
    draw_frequencies,
)


def test_c_f_constants():
    assert C_F["complex_exp"] == pytest.approx(2 * np.sqrt(2))
    assert C_F["quantized"] == 4.0


def test_default_scale_follows_public_box_and_k():
    k = d = 10
    B = 3 * 2.5 * k ** (1 / d) + 4  # public box of Schellekens et al.'s mixture
    assert 6.0 <= default_frequency_scale((-B, B), k, d) <= 10.0
    # doubling the box doubles sigma; more clusters shrink it
    assert default_frequency_scale((-2 * B, 2 * B), k, d) == pytest.approx(
        4 * default_frequency_scale((-B, B), k, d)
    )
    assert default_frequency_scale((-B, B), 20, d) < default_frequency_scale((-B, B), k, d)
    with pytest.raises(ValueError, match="bounds"):
        default_frequency_scale(None, k, d)


@pytest.mark.parametrize("law", ["adapted_radius", "gaussian", "folded_gaussian"])
def test_frequencies_scale_and_directions(law):
    om = draw_frequencies(5, 20000, 4.0, law, random_state=0)
    assert om.shape == (5, 20000)
    radii = np.linalg.norm(om, axis=0) * 2.0  # times sigma = 2
    expected = {
        "gaussian": np.sqrt(5) * 0.97,
        "folded_gaussian": np.sqrt(2 / np.pi),
        "adapted_radius": None,
    }[law]
    if expected is not None:
        assert radii.mean() == pytest.approx(expected, rel=0.05)
    else:  # adapted radius: mode near 1.5, support [0, 8]
        assert 1.2 < np.median(radii) < 2.2 and radii.max() <= 8.0
    dirs = om / np.linalg.norm(om, axis=0)
    assert np.abs(dirs.mean(axis=1)).max() < 0.03  # uniform directions


def test_frequencies_validation():
    with pytest.raises(ValueError, match="frequency_scale"):
        draw_frequencies(3, 4, -1.0)
    with pytest.raises(ValueError, match="law"):
        draw_frequencies(3, 4, 1.0, law="cauchy")
    xi = draw_dither(1000, random_state=1)
    assert xi.min() >= 0 and xi.max() < 2 * np.pi


def test_contribution_norms_and_values(rng):
    X = rng.normal(size=(50, 3)) * 4
    op_e = SketchOperator.draw(3, 64, 1.0, random_state=1)
    z = op_e.contributions(X)
    assert np.allclose(np.linalg.norm(z, axis=1), 1.0)  # ||z_x|| = 1 for f_e
    op_q = SketchOperator.draw(3, 64, 1.0, signature="quantized", random_state=1)
    assert not np.all(op_q.dither == 0)  # f_q always dithered
    zq = op_q.contributions(X) * 8.0
    assert set(np.unique(zq.real)) <= {-1.0, 1.0} and set(np.unique(zq.imag)) <= {-1.0, 1.0}
    t = X @ op_q.frequencies + op_q.dither
    assert np.array_equal(zq.real, np.where(np.cos(t) >= 0, 1.0, -1.0))
    assert np.array_equal(zq.imag, np.where(np.sin(t) >= 0, 1.0, -1.0))


@pytest.mark.parametrize(
    "signature,precision",
    [("complex_exp", "single"), ("complex_exp", "double"), ("quantized", "double")],
)
def test_dense_sum_matches_contributions(rng, signature, precision):
    X = rng.normal(size=(3000, 4)) * 3
    op = SketchOperator.draw(
        4, 50, 2.0, signature=signature, dither=True, precision=precision, random_state=2
    )
    expected = op.contributions(X).sum(axis=0)
    got = op.masked_sum(X, 50, rng)
    tol = 1e-3 if precision == "single" else 1e-9
    assert np.allclose(got, expected, atol=tol)


def test_quantized_dense_sum_counts_exactly_what_the_signs_sum_to(rng):
    """The quantised r = m path counts quarter turns in integer buffers over row blocks (m = 5000:
    104 rows a block, 10 blocks here); it must give exactly the sums of the +-1 signs that
    ``_signature_parts`` computes from the same phases, block by block."""
    X = rng.normal(size=(1000, 3)) * 5
    op = SketchOperator.draw(3, 5000, 1.0, signature="quantized", random_state=5)
    rows = 104
    expected = np.zeros(5000, dtype=complex)
    for start in range(0, len(X), rows):
        re, im = op._dense_sum(X[start : start + rows])
        expected += re + 1j * im
    re, im = op._dense_sum_quantized(X, rows)
    assert np.array_equal(re + 1j * im, expected)
    assert np.allclose(op.masked_sum(X, 5000, rng), op.contributions(X).sum(axis=0), atol=1e-9)


@pytest.mark.parametrize("r", [1, 3])
def test_masks_keep_exactly_r_entries(rng, r):
    op = SketchOperator.draw(2, 8, 1.0, precision="double", random_state=3)
    x = rng.normal(size=(1, 2))
    z = op.contributions(x)[0]
    for _ in range(20):
        s = op.masked_sum(x, r, rng)
        kept = np.flatnonzero(s)
        assert len(kept) == r
        assert np.allclose(s[kept], z[kept])


def test_masked_sum_is_unbiased(rng):
    X = rng.normal(size=(20, 2))
    op = SketchOperator.draw(2, 6, 1.0, precision="double", random_state=4)
    full = op.contributions(X).sum(axis=0)
    est = np.mean([op.masked_sum(X, 2, rng) for _ in range(2000)], axis=0) * 3.0
    assert np.allclose(est, full, atol=0.1)


@pytest.mark.parametrize(
    "signature,precision,r",
    [
        ("complex_exp", "single", 500),
        ("quantized", "double", 500),
        ("complex_exp", "double", 1),
        ("complex_exp", "double", 5),
    ],
)
def test_never_materialises_n_by_m(signature, precision, r):
    """An n x m float64 matrix here would take 80 MB; row blocks keep the peak near 2-8 MB."""
    import tracemalloc

    X = np.random.default_rng(0).normal(size=(20_000, 3))
    op = SketchOperator.draw(3, 500, 1.0, signature=signature, precision=precision, random_state=0)
    tracemalloc.start()
    try:
        op.masked_sum(X, r, np.random.default_rng(1))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6
