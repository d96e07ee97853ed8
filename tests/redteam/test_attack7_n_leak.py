"""Red team, attack 7: the number of records leaked under add/remove neighbours.

Under add/remove neighbours (Dwork & Roth, "The Algorithmic Foundations of Differential
Privacy", 2014, Def. 2.4 with the symmetric-difference distance) whether one person is in the
data is the secret, so n itself must not be published. SuLQ k-plane (Blum, Dwork, McSherry &
Nissim, PODS 2005) with ``delta=None`` used delta = 1/(n ln n) and published it in
``privacy_.delta``, in ``noise_scale_`` (a function of delta) and in the ledger's text: an
attacker who knows every record but one read n exactly and so learnt whether that record was
in (500 vs 499). With an explicit delta, the guarantee's warnings still compared delta with 1/n.

The attacker's view: everything a release or the ledger history shows, for two neighbouring
datasets (one record removed), through the public API.
"""

import numpy as np
import pytest

from privclust.core import Curator, Ledger
from privclust.core.data import make_union_of_subspaces
from privclust.core.subspace import SuLQSubspaceClustering

N = 500
# between 1/500 = 0.002 and 1/499 = 0.002004: a guarantee that compares delta with 1/n tells
# the two datasets apart
DELTA = 0.002002


@pytest.fixture(scope="module")
def neighbours():
    X = make_union_of_subspaces(N, 5, 2, 2, noise=0.05, random_state=7).X
    return X, np.delete(X, 123, axis=0)


def _ledger():
    return Ledger(10.0, 0.1, unit="add_remove")


def _history(ledger):
    return [(r.what, r.epsilon, r.delta, r.relation, r.requested) for r in ledger.history]


def test_attack7_n_leak_sulq_delta_none_refused_before_charge_and_explicit_delta_hides_n(
    neighbours,
):
    X, X_minus = neighbours
    assert X_minus.shape[0] == N - 1
    # delta=None would derive delta from n: refused before anything is charged or read,
    # directly and through the curator
    ledger = _ledger()
    est = SuLQSubspaceClustering(
        2, 2, epsilon=1.0, delta=None, neighbouring="add_remove", ledger=ledger
    )
    with pytest.raises(ValueError, match="explicit delta"):
        est.fit(X)
    assert not hasattr(est, "privacy_") and not hasattr(est, "noise_scale_")
    with pytest.raises(ValueError, match="explicit delta"):
        Curator(X, ledger).release(
            SuLQSubspaceClustering(2, 2, epsilon=1.0, delta=None, neighbouring="add_remove")
        )
    assert ledger.history == [] and ledger.spent == (0.0, 0.0)

    # an explicit delta: every published number is the same on both neighbours
    seen = []
    for data in (X, X_minus):
        direct_ledger, curator_ledger = _ledger(), _ledger()
        est = SuLQSubspaceClustering(
            2,
            2,
            epsilon=1.0,
            delta=DELTA,
            n_iter=5,
            neighbouring="add_remove",
            ledger=direct_ledger,
        ).fit(data)
        release = Curator(data, curator_ledger).release(
            SuLQSubspaceClustering(
                2, 2, epsilon=1.0, delta=DELTA, n_iter=5, neighbouring="add_remove"
            )
        )
        seen.append(
            {
                "delta": est.privacy_.delta,
                "guarantee": est.privacy_.to_dict(),
                "noise_scale": est.noise_scale_,
                "direct history": _history(direct_ledger),
                "release guarantee": release.guarantee.to_dict(),
                "release cost": release.cost,
                "release attributes": sorted(release.attributes),
                "release noise_scale": release.attributes["noise_scale_"],
                "release params": release.params,
                "curator history": _history(curator_ledger),
            }
        )
    a, b = seen
    assert a["delta"] == DELTA and a["direct history"] and a["curator history"]
    for name in a:
        assert a[name] == b[name], name
