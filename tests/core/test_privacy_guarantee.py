"""Guarantee, Spend and the per-fit BudgetAccountant (docs/algorithms.md,
section 1)."""

import json
import math

import pytest

from privclust.core.privacy import BudgetAccountant, BudgetExceeded, Guarantee, Spend


def test_summary_lines():
    assert (
        Guarantee(1.0, 1e-6, "approx", "replace").summary()
        == "(1.0, 1e-06)-DP, approximate, replace-one neighbours"
    )
    assert (
        Guarantee(0.5, 0.0, "pure", "add_remove").summary()
        == "0.5-DP, pure, add/remove-one neighbours"
    )
    cell = Guarantee(2.0, 0.0, "pure", "cell", warnings=["w"]).summary()
    assert cell.startswith("2.0-DP, pure, one-cell") and "weaker than record privacy" in cell
    assert cell.endswith("; 1 warning")
    assert "asymptotic" in Guarantee(1.0, 0.0, "asymptotic", "replace").summary()
    none = Guarantee(math.inf, 1.0, "none", None)
    assert none.summary().startswith("not differentially private") and not none.is_private
    for g in (Guarantee(1.0, 1e-6, "approx", "replace"), none):
        assert "\n" not in g.summary() and str(g) == g.summary()


def test_validation():
    with pytest.raises(ValueError, match="kind"):
        Guarantee(1.0, 0.0, "approximate", "replace")
    with pytest.raises(ValueError, match="neighbouring"):
        Guarantee(1.0, 0.0, "pure", "bounded")
    with pytest.raises(ValueError, match="neighbouring"):
        Guarantee(1.0, 0.0, "pure", None)
    with pytest.raises(ValueError, match="delta = 0"):
        Guarantee(1.0, 1e-6, "pure", "replace")
    with pytest.raises(ValueError, match="epsilon"):
        Guarantee(math.inf, 0.0, "pure", "replace")
    with pytest.raises(ValueError, match="delta"):
        Guarantee(1.0, 1.0, "approx", "replace")
    with pytest.raises(TypeError):
        Guarantee("x", 0.0, "pure", "replace")


def test_to_dict_is_json_friendly():
    g = Guarantee(
        1.0,
        1e-6,
        "approx",
        "replace",
        mechanisms=[Spend("laplace counts", 0.5, 0.0, 2.0), ("gaussian sums", 0.5, 1e-6, 1.5)],
        warnings=["delta > 1/n"],
    )
    d = g.to_dict()
    assert json.loads(json.dumps(d, allow_nan=False)) == d
    assert d["mechanisms"][1] == {
        "name": "gaussian sums",
        "epsilon": 0.5,
        "delta": 1e-6,
        "sensitivity": 1.5,
    }
    assert Guarantee(**{**d, "mechanisms": d["mechanisms"]}) == g  # round trip
    none = Guarantee(math.inf, 1.0, "none", None).to_dict()
    assert none["epsilon"] == "inf" and json.dumps(none, allow_nan=False)


def test_accountant_records_and_totals():
    acc = BudgetAccountant(1.0, 1e-6)
    acc.spend("init", 0.1)
    for i in range(9):
        acc.spend(f"step {i}", 0.1, 1e-6 / 9, sensitivity=2.0)
    assert acc.spent[0] == pytest.approx(1.0, abs=1e-12)
    assert acc.spent[1] == pytest.approx(1e-6, abs=1e-18)
    assert [m.name for m in acc.mechanisms][:2] == ["init", "step 0"]
    g = acc.guarantee("approx", "replace", warnings=["w"])
    assert g.epsilon == pytest.approx(1.0, abs=1e-12) and g.warnings == ["w"]
    assert len(g.mechanisms) == 10 and g.mechanisms[1].sensitivity == 2.0


def test_accountant_refuses_overspend():
    acc = BudgetAccountant(1.0)
    acc.spend("a", 1 / 3)
    acc.spend("b", 1 / 3)
    acc.spend("c", 1 / 3)  # float round-off absorbed by the relative tolerance
    with pytest.raises(BudgetExceeded, match="'d'"):
        acc.spend("d", 1e-6)
    with pytest.raises(BudgetExceeded):
        BudgetAccountant(1.0).spend("x", 0.5, 1e-9)  # delta plan is 0
    assert len(acc.mechanisms) == 3
    assert acc.remaining[0] == pytest.approx(0.0, abs=1e-12)


def test_accountant_guarantee_kinds():
    acc = BudgetAccountant(1.0, 1e-6)
    acc.spend("g", 0.5, 1e-6)
    with pytest.raises(ValueError, match="delta"):
        acc.guarantee("pure", "replace")
    none = acc.guarantee("none", "replace")
    assert none.epsilon == math.inf and not none.is_private
    with pytest.raises(ValueError):
        BudgetAccountant(0.0)
    with pytest.raises(ValueError):
        BudgetAccountant(1.0).spend("x", -1.0)
