"""Private release of the sketch: Theorem 1 sensitivity on adversarial neighbours, exact noise
ratio, and statistical audits with planted bugs (Schellekens et al., SPARS 2019, Sec. II,
Theorem 1)."""

import importlib

import numpy as np
import pytest

from privclust.core.privacy import BudgetAccountant
from privclust.core.privacy.audit import epsilon_lower_bound
from privclust.core.sketch import Sketch, SketchOperator, l1_sensitivity, l2_sensitivity, sigma_xi

release_mod = importlib.import_module("privclust.core.sketch.release")
N_AUDIT = 200_000


def _adversarial_records(op, rng, n_candidates=300):
    """The record and replacement (among random points, box corners) maximising the L1 change."""
    cands = np.vstack(
        [
            rng.normal(size=(n_candidates, op.n_features)) * 5,
            np.array(np.meshgrid(*[[-13.5, 13.5]] * op.n_features)).reshape(op.n_features, -1).T,
        ]
    )
    z = op.contributions(cands)
    zz = np.hstack([z.real, z.imag])
    diff = np.abs(zz[:, None, :] - zz[None, :, :]).sum(-1)
    i, j = np.unravel_index(np.argmax(diff), diff.shape)
    return cands[i], cands[j]


@pytest.mark.parametrize(
    "signature,precision",
    [("complex_exp", "double"), ("quantized", "double"), ("complex_exp", "single")],
)
@pytest.mark.parametrize("r", [1, 3, 16])
def test_theorem1_sensitivity_on_adversarial_neighbours(rng, signature, precision, r):
    """float32 cos/sin can exceed |Re| + |Im| <= sqrt(2) by about one float32 ulp; the
    sensitivity of a "single" operator includes that (``rounding_slack``), so no slack here
    beyond float64 round-off."""
    op = SketchOperator.draw(2, 16, 1.0, signature=signature, precision=precision, random_state=5)
    slack = 1e-12
    sens = l1_sensitivity(op, r, 4, "replace")
    x, x_adv = _adversarial_records(op, rng)
    worst = 0.0
    for trial in range(30):
        a = rng.normal(size=(4, 2)) * 3
        b = a.copy()
        a[0], b[0] = x, x_adv
        sa = Sketch(op, r).update(a, random_state=trial)  # same masks on both sides
        sb = Sketch(op, r).update(b, random_state=trial)
        delta = sa.mean - sb.mean
        change = np.abs(delta.real).sum() + np.abs(delta.imag).sum()
        assert change <= sens * (1 + slack)
        worst = max(worst, change)
    assert worst > 0.5 * sens  # the adversarial search gets close to the bound


def test_float32_path_sums_within_the_sensitivity_on_large_blocks():
    """Regression: the float32 trigonometric path once summed each block in float32
    (``ones @ block``); its data-dependent rounding let one record move the sketch by
    1 + 3.4e-5 times the sensitivity at n = 2000 (measured). Blocks are summed in float64 now."""
    rng = np.random.default_rng(0)
    m, n = 8, 2000
    op = SketchOperator(np.ones((1, m)), precision="single")
    sens = l1_sensitivity(op, m, n, "replace")
    worst = 0.0
    for _ in range(40):
        a = np.full((n, 1), rng.uniform(-0.3, 0.3))  # large partial sums: coarse float32 ulps
        a[: n // 2] = rng.uniform(-0.3, 0.3)
        b = a.copy()
        i = rng.integers(n)
        a[i], b[i] = np.pi / 4, 5 * np.pi / 4  # the tight pair of Theorem 1
        delta = Sketch(op).update(a).mean - Sketch(op).update(b).mean
        worst = max(worst, (np.abs(delta.real).sum() + np.abs(delta.imag).sum()) / sens)
    assert 0.999 < worst <= 1.0


def test_sketches_of_different_precisions_do_not_merge():
    """A double-precision release has no float32 slack: a merged sum holding float32
    contributions could exceed its sensitivity, so the merge is refused."""
    kw = dict(signature="complex_exp", random_state=3)
    single = SketchOperator.draw(2, 16, 1.0, precision="single", **kw)
    double = SketchOperator.draw(2, 16, 1.0, precision="double", **kw)
    assert np.array_equal(single.frequencies, double.frequencies)  # the same map otherwise
    assert double.rounding_slack == 1.0 < single.rounding_slack
    X = np.random.default_rng(0).normal(size=(5, 2))
    with pytest.raises(ValueError, match="different operators"):
        Sketch(double).update(X) + Sketch(single).update(X)
    merged = Sketch(single).update(X) + Sketch(single).update(X)
    assert merged.count == 10


def test_theorem1_bound_is_tight_for_one_frequency():
    op = SketchOperator(np.array([[1.0]]), precision="double")  # m = 1, f_e
    a, b = np.array([[0.0], [np.pi / 4]]), np.array([[0.0], [5 * np.pi / 4]])
    delta = Sketch(op).update(a).mean - Sketch(op).update(b).mean
    assert abs(delta.real) + abs(delta.imag) == pytest.approx(l1_sensitivity(op, 1, 2, "replace"))


@pytest.mark.parametrize(
    "r,m,n,eps", [(1, 1000, 10**5, 1.0), (1000, 1000, 10**7, 0.1), (7, 50, 321, 3.0)]
)
def test_theorem1_ratio_is_exactly_epsilon(r, m, n, eps):
    op = SketchOperator(np.zeros((1, m)), precision="double")
    per_part_scale = (sigma_xi(eps, n, m, r) / 2.0) / np.sqrt((r / m) * m * n)  # Eq. (3)
    assert l1_sensitivity(op, r, n, "replace") / per_part_scale == pytest.approx(eps, rel=1e-12)
    single = SketchOperator(np.zeros((1, m)), precision="single")  # float32 trig: + 2^-20
    assert l1_sensitivity(single, r, n, "replace") / per_part_scale == pytest.approx(
        eps * (1 + 2.0**-20), rel=1e-12
    )


def test_add_remove_and_gaussian_sensitivities(rng):
    op = SketchOperator.draw(2, 16, 1.0, precision="double", random_state=6)
    X = rng.normal(size=(5, 2))
    extra = rng.normal(size=(1, 2))
    for r in (1, 4, 16):
        a = Sketch(op, r).update(X, random_state=1)
        b = Sketch(op, r).update(np.vstack([X, extra]), random_state=1)
        # same masks for the shared rows: block-level rng draws masks row by row in order
        d = (b.sum - a.sum) / a.alpha
        assert (
            np.abs(d.real).sum() + np.abs(d.imag).sum()
            <= l1_sensitivity(op, r, 5, "add_remove") + 1e-12
        )
        assert np.linalg.norm(d) <= l2_sensitivity(op, r, 5, "add_remove") + 1e-12
    assert l2_sensitivity(op, 4, 10, "replace") == pytest.approx(2 * np.sqrt(16 / 4) / 10)


def _tight_pair(signature, precision="double"):
    """m = 1, n = 2 neighbours whose sketches differ by exactly c_f in L1 (Re and Im both move)."""
    if signature == "complex_exp":
        op = SketchOperator(np.array([[1.0]]), precision=precision)
        return op, np.array([[0.0], [np.pi / 4]]), np.array([[0.0], [5 * np.pi / 4]])
    op = SketchOperator(np.array([[1.0]]), dither=np.array([0.0]), signature="quantized")
    return op, np.array([[0.0], [np.pi / 4]]), np.array([[0.0], [5 * np.pi / 4]])


def _audit_release(
    signature,
    neighbouring="replace",
    mechanism="laplace",
    delta=0.0,
    eps=1.0,
    seed=0,
    precision="double",
):
    op, a, b = _tight_pair(signature, precision)
    if neighbouring == "add_remove":
        b = a[:1]
    sa, sb = Sketch(op).update(a), Sketch(op).update(b)
    rng = np.random.default_rng(seed)
    out_a = sa.release(eps, neighbouring, mechanism, delta, random_state=rng, size=N_AUDIT)[:, 0]
    out_b = sb.release(eps, neighbouring, mechanism, delta, random_state=rng, size=N_AUDIT)[:, 0]
    # the attacker's scalar: Re + Im (both parts move in the same direction)
    return epsilon_lower_bound(
        out_a.real + out_a.imag, out_b.real + out_b.imag, delta=delta, rng=rng
    )


@pytest.mark.audit
@pytest.mark.parametrize(
    "signature,precision",
    [("complex_exp", "double"), ("quantized", "double"), ("complex_exp", "single")],
)
def test_audit_laplace_release_passes(signature, precision):
    """Includes the float32-trigonometry sketch path (its rounding must not break the sensitivity bound: the audit checks it)."""
    assert _audit_release(signature, precision=precision) <= 1.0


@pytest.mark.audit
def test_audit_add_remove_and_gaussian_pass():
    assert _audit_release("complex_exp", "add_remove", eps=1.0, seed=1) <= 1.0
    assert _audit_release("complex_exp", "replace", "gaussian", delta=1e-3, seed=2) <= 1.0


def _audit_masked(eps=1.0, seed=4, m=4, r=1):
    """Subsampled release (r < m masks, [SCH19] Eq. (3)): m equal frequencies so the tight pair
    is tight on every entry; the masks are drawn independently of the data on both sides. The
    attacker's scalar is the sum over entries of Re + Im."""
    op = SketchOperator(np.ones((1, m)), precision="double")
    a, b = np.array([[0.0], [np.pi / 4]]), np.array([[0.0], [5 * np.pi / 4]])
    rng = np.random.default_rng(seed)
    outs = []
    for X in (a, b):
        # fresh masks every 50 releases (4000 mask draws per side; 16 mask patterns exist)
        rel = [
            Sketch(op, r).update(X, random_state=rng).release(eps, random_state=rng, size=50)
            for _ in range(N_AUDIT // 50)
        ]
        out = np.concatenate(rel)
        outs.append((out.real + out.imag).sum(axis=1))
    return epsilon_lower_bound(outs[0], outs[1], rng=rng)


@pytest.mark.audit
def test_audit_subsampled_release_passes():
    assert _audit_masked() <= 1.0


@pytest.mark.audit
def test_audit_subsampled_release_catches_missing_alpha(monkeypatch):
    """Planted bug: the sensitivity of the masked sum not divided by alpha_r = r/m."""
    real = release_mod.l1_sensitivity
    monkeypatch.setattr(
        release_mod, "l1_sensitivity", lambda op, r, *a: real(op, r, *a) * r / op.sketch_size
    )
    assert _audit_masked() > 1.0


@pytest.mark.audit
def test_audit_catches_planted_half_sensitivity(monkeypatch):
    real = release_mod.l1_sensitivity
    monkeypatch.setattr(release_mod, "l1_sensitivity", lambda *a: real(*a) / 2)
    assert _audit_release("complex_exp") > 1.0


@pytest.mark.audit
def test_audit_catches_planted_noiseless_count(monkeypatch):
    """Bug: the add/remove count released without noise (n leaks)."""
    monkeypatch.setattr(
        release_mod, "laplace", lambda value, *a, size=None, **k: np.full(size, value)
    )
    assert _audit_release("complex_exp", "add_remove", eps=1.0, seed=3) > 1.0


def test_release_records_spends_and_validates():
    op, a, _ = _tight_pair("complex_exp")
    sk = Sketch(op).update(a)
    acc = BudgetAccountant(1.0)
    sk.release(1.0, "add_remove", random_state=0, accountant=acc)
    assert acc.spent[0] == pytest.approx(1.0, abs=1e-12)
    assert [s.name for s in acc.mechanisms] == ["sketch numerator Laplace", "sketch count Laplace"]
    with pytest.raises(ValueError, match="delta"):
        sk.release(1.0, mechanism="gaussian")
    with pytest.raises(NotImplementedError):
        sk.release(1.0, neighbouring="cell")
    with pytest.raises(ValueError, match="epsilon"):
        sk.release(-1.0)
