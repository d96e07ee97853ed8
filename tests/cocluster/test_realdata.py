"""DP-tauCC and Fast-tauCC on the real cstr matrix (needs PRIVCLUST_DATA_DIR)."""

import numpy as np
import pytest

from privclust.core.cocluster import DPTauCoClustering, TauCoClustering
from privclust.core.data import get_dataset
from privclust.core.metrics import nmi


@pytest.mark.realdata
def test_cstr_utility(data_dir):
    ds = get_dataset("cstr")
    X, y = ds.X, np.asarray(ds.labels)
    fast = [nmi(y, TauCoClustering(4, 4, random_state=s).fit(X).row_labels_) for s in range(3)]
    dp_low = [
        nmi(y, DPTauCoClustering(4, 4, epsilon=0.1, random_state=s).fit(X).row_labels_)
        for s in range(5)
    ]
    dp_high = [DPTauCoClustering(4, 4, epsilon=3.0, random_state=s).fit(X) for s in range(5)]
    high = [nmi(y, e.row_labels_) for e in dp_high]
    assert np.median(fast) > 0.35
    assert np.median(high) > 0.15 > np.median(dp_low)
    assert np.median([nmi(y, e.eval_row_labels_) for e in dp_high]) > 0.15
