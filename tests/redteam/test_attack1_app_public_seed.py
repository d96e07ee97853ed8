"""Red team, attack 1 at the page: noise drawn from the page's public seed.

The dashboard used to build every private release with ``random_state=settings.seed``, a page
control everyone can read (default 0). An analyst who knows every record but one re-ran the
estimator with that seed on both candidate datasets and found the one whose output equals the
release exactly. Now a release goes through the Curator, which draws fresh OS entropy and
ignores any seed; the page's seed applies to demo data only.
"""

import numpy as np
import pytest

from privclust.app.state import Lab
from privclust.core import DPLloyd

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_attack1_released_dplloyd_is_not_the_seeded_run_on_either_neighbour(ledger_env, csv_bytes):
    rng = np.random.default_rng(1)
    X = np.clip(rng.normal(scale=0.4, size=(300, 2)) + rng.choice([-2.0, 2.0], (300, 1)), -4, 4)
    lab = Lab()
    assert lab.data.upload("records.csv", csv_bytes(X))
    lab.settings.param.update(task="kmeans")
    lab.settings.param.update(algorithm="dplloyd", epsilon=0.1, n_clusters=2, seed=0)
    result = lab.do_release()
    assert result is not None, lab.message
    released = np.asarray(result.estimator.cluster_centers_)
    # the attacker: every page setting, the page seed, and both candidate datasets
    spec, values, seed = lab.settings.spec, lab.settings.values(), lab.settings.seed
    data = lab.data.dataset.X
    neighbour = np.array(data)
    neighbour[17] = [3.5, -3.5]  # the one record the attacker does not know
    for candidate in (data, neighbour):
        guess = spec.build(values, random_state=seed, ledger=None).fit(candidate)
        assert not np.array_equal(released, guess.cluster_centers_)
        direct = DPLloyd(
            n_clusters=2,
            epsilon=0.1,
            bounds=(values["lower"], values["upper"]),
            init=values["init"],
            random_state=seed,
        ).fit(candidate)
        assert not np.array_equal(released, direct.cluster_centers_)
    # the download says where the noise came from and carries no seed
    from privclust.app.export import report_payload

    payload = report_payload(result)
    assert "random_state" not in str(payload) and "seed" not in str(payload).replace(
        "any seed was ignored", ""
    )
