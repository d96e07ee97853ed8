"""Floating-point precision regression test (Mironov, CCS 2012).

This documents a KNOWN LIMITATION, it does not certify safety: ``laplace`` adds numpy's float
noise in floating point, so some outputs are reachable from one input and not from its
neighbour. For x = 1, every output y in (0, 0.5) equals 1 - |L| with |L| in (0.5, 1), which is
computed exactly and is a multiple of 2^-53; for x = 0 the output is L itself, usually finer.
An off-grid output in (0, 0.5) therefore proves the input was 0 (epsilon = infinity for that
output). If the sampler is ever replaced by a float-safe one (snapping, exact discrete
sampling), the first assertion fails: update this test and the module docstring together.
"""

import numpy as np

from privclust.core.privacy import laplace

GRID = 2.0**-53


def _off_grid_fraction(outputs):
    inside = outputs[(outputs > 0) & (outputs < 0.5)]
    return np.mean(np.mod(inside, GRID) != 0) * len(inside) / len(outputs)


def test_numpy_laplace_is_distinguishable_by_low_order_bits():
    rng = np.random.default_rng(2024)
    from_zero = laplace(0.0, 1.0, 1.0, rng, size=100_000)
    from_one = laplace(1.0, 1.0, 1.0, rng, size=100_000)
    assert _off_grid_fraction(from_one) == 0.0  # never off-grid from x = 1 ...
    assert _off_grid_fraction(from_zero) > 0.05  # ... but often from x = 0: the known leak
