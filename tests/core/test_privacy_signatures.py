"""The public signatures of privclust.core.privacy: the estimators, the app and the notebooks call
these by keyword, so a renamed or reordered parameter must fail here first."""

import inspect

import privclust.core as core
from privclust.core import privacy as P
from privclust.core.release.prepared import charge

CONTRACT = {
    "as_generator": ["random_state"],
    "laplace": ["value", "sensitivity", "epsilon", "rng", "size"],
    "complex_laplace": ["value", "sensitivity", "epsilon", "rng", "size"],
    "gaussian": ["value", "sensitivity", "epsilon", "delta", "rng", "size", "calibration"],
    "analytic_gaussian_sigma": ["epsilon", "delta", "sensitivity"],
    "classic_gaussian_sigma": ["epsilon", "delta", "sensitivity"],
    "exponential_mechanism": ["utilities", "epsilon", "sensitivity", "rng", "size", "range_based"],
    "gumbel_max": ["logits", "rng", "size"],
    "above_threshold": ["query_values", "threshold", "epsilon", "rng", "size"],
    "stable_histogram": ["cell_keys", "epsilon", "delta", "rng", "size"],
    "basic_composition": ["spends"],
    "advanced_composition": ["epsilon0", "delta0", "k", "delta_prime"],
    "haar_orthogonal": ["d", "rng", "size"],
    "haar_stiefel": ["d", "q", "rng", "size"],
    "jl_matrix": ["k", "d", "rng"],
    "smooth_sensitivity_parameters": ["epsilon", "delta", "dim"],
    "smooth_sensitivity_gaussian": ["value", "smooth_bound", "epsilon", "delta", "rng", "size"],
}


def test_contract_signatures():
    for name, params in CONTRACT.items():
        assert list(inspect.signature(getattr(P, name)).parameters) == params, name
    # the release pipeline's one charging function (privclust.core.release.prepared)
    assert list(inspect.signature(charge).parameters) == [
        "ledger",
        "epsilon",
        "delta",
        "relation",
        "what",
        "options",
        "pending",
    ]
    assert list(inspect.signature(P.Ledger).parameters) == [
        "epsilon",
        "delta",
        "path",
        "dataset",
        "unit",
    ]
    assert list(inspect.signature(P.Ledger.charge).parameters)[:5] == [
        "self",
        "epsilon",
        "delta",
        "what",
        "relation",
    ]
    assert list(inspect.signature(P.BudgetAccountant).parameters) == ["epsilon", "delta"]
    assert list(inspect.signature(P.BudgetAccountant.spend).parameters) == [
        "self",
        "name",
        "epsilon",
        "delta",
        "sensitivity",
    ]
    assert list(inspect.signature(P.Guarantee).parameters) == [
        "epsilon",
        "delta",
        "kind",
        "neighbouring",
        "mechanisms",
        "warnings",
    ]
    assert list(inspect.signature(P.Spend).parameters) == [
        "name",
        "epsilon",
        "delta",
        "sensitivity",
    ]
    assert list(inspect.signature(P.audit.epsilon_lower_bound).parameters) == [
        "outputs_a",
        "outputs_b",
        "delta",
        "alpha",
        "categorical",
        "rng",
    ]
    assert issubclass(P.PrivacyWarning, UserWarning)


def test_exports():
    assert set(P.__all__) <= set(dir(P))
    assert core.Guarantee is P.Guarantee and core.Ledger is P.Ledger
    assert core.BudgetExceeded is P.BudgetExceeded
    for name in P.__all__:
        obj = getattr(P, name)
        if callable(obj) and not isinstance(obj, type(P)):
            assert obj.__doc__, f"{name} has no docstring"
