"""Red team, attack 12: a Release's parameters were read after the fit.

A Release stores the public parameters of its request. The Curator read them from the fitted
clone, after the data had been read, and a parameter object describes itself by its public
attributes (``get_params()`` or ``vars()``). An aggregator or solver object that keeps anything
from its call in a public attribute (here: the first block outputs of sample-and-aggregate,
Nissim, Raskhodnikova & Smith, STOC 2007, which are computed without noise) therefore put
non-private values into ``release.params``, the release store and the download, charged as if
only the noisy output had left. The parameters are now captured when the request is prepared,
before any record is read.
"""

import numpy as np
import pytest

from privclust.core import Curator, Ledger
from privclust.core.data import make_union_of_subspaces
from privclust.core.onecluster.aggregator import OneClusterAggregator
from privclust.core.release import PrivacyRefused
from privclust.core.subspace import SampleAggregateSubspaceClustering

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


class RememberingAggregator(OneClusterAggregator):
    """The 1-cluster aggregator (same plan, same guarantee) that remembers its input."""

    def __call__(self, Y, epsilon, delta, bounds, rng):
        self.last_input = np.asarray(Y)[:2].tolist()  # block outputs: not private
        return super().__call__(Y, epsilon, delta, bounds, rng)


def _request():
    return SampleAggregateSubspaceClustering(
        2, 1, epsilon=1.0, delta=1e-5, aggregator=RememberingAggregator()
    )


def test_attack12_release_params_are_captured_before_the_fit():
    X = make_union_of_subspaces(400, 4, 2, 1, noise=0.01, random_state=0).X
    ledger = Ledger(10.0, 1e-3)
    curator = Curator(X, ledger)
    # a parameter object that is not an exact privclust class is code the curator would run on
    # the records: it is refused before anything is charged
    for run in (lambda: curator.release(_request()), lambda: curator.release_plan([_request()])):
        with pytest.raises(PrivacyRefused, match="aggregator"):
            run()
    assert ledger.history == []
    # the exact aggregator keeps its run in ``result_``; the release describes it as it was
    # before the fit (its constructor parameters), in the store and in a plan alike
    release = curator.release(
        SampleAggregateSubspaceClustering(
            2, 1, epsilon=1.0, delta=1e-5, aggregator=OneClusterAggregator()
        )
    )
    described = release.params["aggregator"]
    assert described["class"] == "OneClusterAggregator"
    assert set(described["params"]) == set(OneClusterAggregator().__dict__)
    assert "result_" not in repr(release.to_dict())
    assert curator.get_release(release.id).params == release.params
