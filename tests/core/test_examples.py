"""The numpydoc Examples of every public estimator and of Curator, Ledger and Release exist and
run as doctests (their outputs are shapes and guarantees, seeded where the estimator allows)."""

import doctest

import pytest

import privclust.core as core

ESTIMATORS = sorted(
    name
    for name in core.__all__
    if isinstance(getattr(core, name, None), type)
    and hasattr(getattr(core, name), "fit")
    and name != "PrivateEstimator"
)
DOCUMENTED = ESTIMATORS + ["Curator", "Ledger", "Release"]


@pytest.mark.parametrize("name", DOCUMENTED)
def test_examples_section_runs(name):
    obj = getattr(core, name)
    assert "Examples\n    --------\n    >>> " in (obj.__doc__ or ""), f"{name} has no Examples"
    (test,) = doctest.DocTestFinder(recurse=False).find(obj, name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    result = runner.run(test)
    assert result.attempted > 0 and result.failed == 0, f"{name}: {result.failed} example(s) failed"
