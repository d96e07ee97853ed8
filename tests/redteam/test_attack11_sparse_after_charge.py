"""Red team, attack 11: a release on sparse data charged, then failed.

Whether a dataset is stored sparse is public (``Curator.public_facts()["sparse"]``, the kind of an
uploaded .npz), like its shape. Every private estimator but DP-tauCC read its data with
``np.asarray(X, float64)`` after the charge, which fails on every scipy.sparse matrix: through
the Curator a sparse upload spent the budget of each DPLloyd, compressive k-means, SuLQ,
sample-and-aggregate, Gibbs or 1-cluster request and released nothing. Not a leak (the failure
depends on a public fact only), but the release protocol promises that nothing that can fail on
public facts runs after the charge. An estimator now says whether it reads sparse input, and
one that does not is refused before the charge, through the Curator and through ``fit``.
"""

import pytest
import scipy.sparse as sp
from sklearn.base import clone
from test_plan_before_data import TABLE

import privclust.core as core
from privclust.core import Curator, Dataset, Ledger
from privclust.core.release import ReleaseFailed

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.mark.parametrize("name", sorted(TABLE))
def test_attack11_sparse_data_refused_before_the_charge_or_released(name):
    params, build = TABLE[name]
    X = sp.csr_matrix(build())
    est = getattr(core, name)(**params)

    ledger = Ledger(1e6, 0.5)
    curator = Curator(Dataset(X, public=False), ledger)
    assert curator.public_facts()["sparse"] is True
    try:
        release = curator.release(clone(est))
    except ReleaseFailed as exc:  # charged, then failed: the budget is gone for nothing
        pytest.fail(f"{name} on sparse data failed after its charge ({exc.detail})")
    except ValueError:
        assert ledger.spent == (0.0, 0.0) and ledger.history == []
    else:
        assert release.cost == tuple(float(c) for c in ledger.spent)

    direct = Ledger(1e6, 0.5)
    try:
        clone(est).set_params(ledger=direct).fit(X)
    except ValueError:
        assert direct.spent == (0.0, 0.0) and direct.history == []
    else:
        assert direct.spent != (0.0, 0.0)
