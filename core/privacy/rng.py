"""Random generators: every random draw in privclust comes from one ``numpy.random.Generator``."""

import numbers

import numpy as np


def as_generator(random_state=None):
    """Turn ``random_state`` into a ``numpy.random.Generator`` (PCG64; never the global
    numpy state, so that every draw of a fit, public ones included, is reproducible from one seed).

    ``None`` draws fresh OS entropy (the production setting); an integer or a ``SeedSequence``
    seeds a new PCG64 generator (reproducible runs and tests); a ``Generator`` is returned as is,
    so consecutive calls share its stream. Anything else (including the legacy
    ``RandomState`` and the global ``np.random`` state) raises ``TypeError``.
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError("random_state must be None, an int or a numpy.random.Generator, got a bool")
    if isinstance(random_state, numbers.Integral):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer, got {random_state}")
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    raise TypeError(
        "random_state must be None, an int, a SeedSequence or a numpy.random.Generator, "
        f"got {type(random_state).__name__}"
    )
