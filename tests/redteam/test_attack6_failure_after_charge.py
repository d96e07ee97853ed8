"""Red team, attack 6: a failure after the charge tells neighbours apart.

Compressive k-means (Schellekens, Chatalic, Keriven, Gribonval & Jacques, "Compressive k-means
with differential privacy", SPARS 2019) sketches every record with cos/sin of random phases. A
single finite record above 3.4e38 overflows the float32 phases, and a huge float64 record
overflows the float64 ones: the sketch became NaN and the release raised AFTER epsilon was
charged. "error" versus "centroids" then told a dataset from its neighbour with certainty (an
infinite privacy loss), whatever the noise.

Now every record is clipped to the public box before sketching (per record, so the sensitivity
of [SCH19] Thm 1 is unchanged), so a release succeeds on every finite input; and parameters
whose phases would overflow on the public box are refused from the parameters alone, before the
ledger is charged. The attacker here only uses the public API: an estimator, a ledger and, for
the app's path, the Curator.

Before the fix, the default dense float32 path failed after the charge for every value below
(NaN sketch), the float64 paths for a record at the float64 maximum, the noiseless sketch was not
the one of the clipped data, and overflowing parameters were charged before failing. The other
(path, value) pairs passed already and stay as regression cover.
"""

import numpy as np
import pytest

from privclust.core import CompressiveKMeans, Curator, Ledger

BOX = (-1.0, 1.0)
F32_MAX = float(np.finfo(np.float32).max)


def neighbours(huge, n=200, d=2, seed=3, coords=(0,)):
    """X (all in the box) and X' with record 0 replaced by a finite record of magnitude huge."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-0.5, 0.1, size=(n // 2, d)), rng.normal(0.5, 0.1, size=(n // 2, d))])
    X = np.clip(X, *BOX)
    Xp = X.copy()
    Xp[0, list(coords)] = huge
    assert np.all(np.isfinite(Xp))
    return X, Xp


def ckm(**kw):
    params = dict(n_clusters=2, epsilon=1.0, bounds=BOX, n_replicates=1, random_state=0)
    params.update(kw)
    return CompressiveKMeans(**params)


HUGE = [
    pytest.param(1e39, (0,), id="float32-overflow"),
    pytest.param(np.nextafter(F32_MAX, np.inf), (0,), id="just-above-float32-max"),
    pytest.param(-3e38, (0, 1), id="negative-near-float32-max"),
    pytest.param(1e300, (0,), id="huge-float64"),
    pytest.param(-np.finfo(np.float64).max, (0, 1), id="float64-max"),
]
PATHS = [
    pytest.param({}, id="dense-float32"),
    pytest.param({"measurements_per_record": 1}, id="subsampled-float64"),
    pytest.param({"measurements_per_record": 7}, id="partial-mask"),
    pytest.param({"signature": "quantized"}, id="quantized"),
]


@pytest.mark.parametrize("kw", PATHS)
@pytest.mark.parametrize("huge, coords", HUGE)
def test_attack6_one_huge_finite_record_does_not_fail_after_the_charge(huge, coords, kw):
    X, Xp = neighbours(huge, coords=coords)
    outcomes = []
    for data in (X, Xp):
        ledger = Ledger(5.0)
        est = ckm(ledger=ledger, **kw).fit(data)  # no exception on either neighbour
        assert np.all(np.isfinite(est.sketch_)) and np.all(np.isfinite(est.cluster_centers_))
        assert np.all(est.cluster_centers_ >= BOX[0]) and np.all(est.cluster_centers_ <= BOX[1])
        assert ledger.spent == (1.0, 0.0) and len(ledger.history) == 1
        outcomes.append(est.cluster_centers_.shape)
    assert outcomes[0] == outcomes[1]  # same kind of answer: nothing to tell them apart by


@pytest.mark.parametrize("kw", PATHS)
def test_attack6_the_sketch_sees_the_record_clipped_to_the_public_box(kw):
    """The noiseless sketch (epsilon=None) of X' equals the one of X' clipped to the box: the
    huge record enters exactly as the box corner it is clipped to, no more."""
    _, Xp = neighbours(1e39, coords=(0, 1))
    clipped = np.clip(Xp, *BOX)
    raw = ckm(epsilon=None, **kw).fit(Xp).sketch_
    ref = ckm(epsilon=None, **kw).fit(clipped).sketch_
    assert np.all(np.isfinite(raw))
    np.testing.assert_allclose(raw, ref, rtol=0, atol=1e-12)
    # and the clipped record is a real change (the attack's record is not silently dropped)
    other = ckm(epsilon=None, **kw).fit(neighbours(0.0, coords=(0, 1))[1]).sketch_
    assert np.max(np.abs(raw - other)) > 1e-6


def test_attack6_release_through_the_curator_succeeds_on_the_huge_record():
    X, Xp = neighbours(1e39)
    for data in (X, Xp):
        ledger = Ledger(5.0)
        release = Curator(data, ledger).release(ckm(random_state=None))
        assert np.all(np.isfinite(release.cluster_centers_))
        assert release.cost == (1.0, 0.0) and ledger.spent == (1.0, 0.0)


class _Unreadable:
    """Public shape only: any read of the values is a test failure."""

    shape = (200, 2)
    ndim = 2

    def __array__(self, *args, **kwargs):
        raise AssertionError("the data were read")

    def __getitem__(self, item):
        raise AssertionError("the data were read")


# box and frequency scale whose phases |Omega^T x| + xi exceed 1e30 on the box (float32 cos/sin
# lose every digit; beyond 3.4e38 they overflow to inf and the sketch to NaN)
OVERFLOWING = [
    pytest.param(dict(bounds=(-1e30, 1e30), frequency_scale=1.0), id="huge-box"),
    pytest.param(dict(bounds=(-1e38, 1e38), frequency_scale=1.0), id="box-at-float32"),
    pytest.param(dict(bounds=(-1e20, 1e20), frequency_scale=1e-30), id="tiny-scale"),
]


@pytest.mark.parametrize("params", OVERFLOWING)
def test_attack6_parameters_whose_phases_overflow_are_refused_before_the_charge(params):
    ledger = Ledger(5.0)
    with pytest.raises(ValueError, match="phases"):
        ckm(ledger=ledger, random_state=None, **params).fit(_Unreadable())
    assert ledger.spent == (0.0, 0.0) and ledger.history == []
    # the same on real data: still refused before the charge, not after it
    _, Xp = neighbours(params["bounds"][1])
    with pytest.raises(ValueError, match="phases"):
        ckm(ledger=ledger, **params).fit(Xp)
    assert ledger.spent == (0.0, 0.0) and ledger.history == []


@pytest.mark.parametrize("params", OVERFLOWING)
def test_attack6_curator_refuses_overflowing_parameters_before_the_charge(params):
    """The app's path: the Curator must refuse these parameters with the ledger untouched (a
    ReleaseFailed after the charge would spend the budget on a release that cannot run)."""
    X, _ = neighbours(0.0)
    ledger = Ledger(5.0)
    curator = Curator(X, ledger)
    with pytest.raises(ValueError, match="phases"):
        curator.release(ckm(random_state=None, **params))
    assert ledger.spent == (0.0, 0.0) and ledger.history == [] and curator.releases() == []
