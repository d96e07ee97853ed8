"""Red team, attack 13: the release pipeline written once (findings 1-7 of the one-pipeline review).

Each test drives the public API as an attacker or an unlucky user would; each failed on the code
before the one pipeline (PreparedRelease, the door's vouched clone, pending requests):

1. a float subclass as epsilon passed the door, and its arithmetic set the noise;
2. ``Curator.release(est, runner=f)`` handed caller code the raw records after the charge;
3. a warning raised after the charge depended on a record (``clip_l2`` overflowed);
4. a crash between the charge and the store lost a paid release (charged again on retry);
5. a Gibbs run whose watcher went away was lost (here at the core; the browser reload is in
   ``tests/app/test_gibbs_ui.py``);
6. the same records as dense CSV and as sparse Matrix Market got two budgets;
7. a cell-level release's text stated another cost than the ledger charged.
"""

import inspect
import io
import os
import re
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

import privclust.core as core
from privclust.core import Curator, Ledger
from privclust.core.data import Dataset, load
from privclust.core.onecluster import OneClusterAggregator
from privclust.core.release import PrivacyRefused


class Tiny(float):
    """An epsilon that says 0.1 to the plan and the ledger but divides like 1e12."""

    def __rtruediv__(self, other):
        return float(other) / 1e12

    def __rmul__(self, other):
        return float(other) * 1e12

    __mul__ = __rmul__


def _X(n=200, d=3, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, size=(n, d))


# ---- finding 1 ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda: core.DPLloyd(n_clusters=2, epsilon=Tiny(0.1), bounds=(-1.0, 1.0)),
        lambda: core.DPLloyd(n_clusters=2, epsilon=0.1, bounds=(Tiny(-1.0), 1.0)),
        lambda: core.DPLloyd(n_clusters=2, epsilon=0.1, bounds=np.array([-1.0, 1.0], dtype=object)),
        lambda: core.SampleAggregateSubspaceClustering(
            n_clusters=2,
            subspace_dim=1,
            epsilon=1.0,
            delta=1e-3,
            solver=core.KPlanes(n_clusters=2, subspace_dim=Tiny(1.0)),
        ),
        lambda: (
            core.OneCluster(
                n_points=50,
                epsilon=1.0,
                delta=1e-6,
                bounds=(-1.0, 1.0),
                aggregator=OneClusterAggregator(alpha=Tiny(1.0)),
            )
            if "aggregator" in inspect.signature(core.OneCluster).parameters
            else core.DPLloyd(n_clusters=2, epsilon=0.1, bounds=(-1.0, Tiny(1.0)))
        ),
    ],
)
def test_finding1_a_value_the_door_cannot_vouch_for_is_refused_before_the_charge(make):
    ledger = Ledger(5.0)
    with pytest.raises(PrivacyRefused, match="parameter"):
        Curator(_X(), ledger).release(make())
    assert ledger.history == []


def test_finding1_exact_numpy_values_are_accepted_as_the_builtins_they_equal():
    ledger = Ledger(5.0)
    release = Curator(_X(), ledger).release(
        core.DPLloyd(n_clusters=np.int64(2), epsilon=np.float64(0.25), bounds=(np.float32(-1), 1.0))
    )
    assert release.params["epsilon"] == 0.25 and type(release.params["epsilon"]) is float
    assert ledger.spent == (0.5, 0.0)  # add/remove 0.25 on the replace-one ledger


# ---- finding 2 ----------------------------------------------------------------------------------
def test_finding2_no_caller_code_runs_between_the_charge_and_the_store():
    curator = Curator(_X(), Ledger(5.0))
    for method in (curator.release, curator.release_plan, curator.live):
        assert "runner" not in inspect.signature(method).parameters
    stolen = []
    with pytest.raises(TypeError):
        curator.release(
            core.DPLloyd(n_clusters=2, epsilon=0.5, bounds=(-1.0, 1.0)),
            runner=lambda est, X: stolen.append(np.array(X)),
        )
    assert stolen == [] and curator.ledger.history == [] and curator.releases() == []


# ---- finding 3 ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda: core.SuLQSubspaceClustering(
            n_clusters=2, subspace_dim=1, epsilon=1.0, delta=1e-3, n_iter=2
        ),
        lambda: core.SampleAggregateSubspaceClustering(
            n_clusters=2, subspace_dim=1, epsilon=1.0, delta=1e-3, solver="kplanes"
        ),
    ],
)
def test_finding3_no_warning_tells_whether_a_huge_record_is_there(make):
    X = _X(n=300, d=4, seed=3)
    with_record = X.copy()
    with_record[7] = 1.3e155  # ||x|| overflows a plain norm
    seen = {}
    for name, data in (("without", X), ("with", with_record)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            curator = Curator(data, Ledger(10.0, 1e-2))
            release = curator.release(make())
        seen[name] = [str(w.message) for w in caught]
        assert release.id is not None
    assert seen == {"without": [], "with": []}


def test_finding3_warnings_after_the_charge_are_withheld_for_the_data_owner():
    class Loud(core.DPLloyd):
        def _fit(self, X, rng):
            warnings.warn(f"record 0 is {X[0, 0]!r}", stacklevel=1)
            return super()._fit(X, rng)

    curator = Curator(_X(), Ledger(5.0), trusted=(Loud,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        release = curator.release(Loud(n_clusters=2, epsilon=0.5, bounds=(-1.0, 1.0)))
    assert [str(w.message) for w in caught] == []
    withheld = curator.owner_warnings(release.id)
    assert "NOT PRIVATE" in withheld.label and "record 0 is" in withheld.value[0]


# ---- finding 4 ----------------------------------------------------------------------------------
CRASH = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    from privclust.core import Curator, DPLloyd, Ledger
    from privclust.core.data import Dataset
    from privclust.core.release.prepared import PreparedRelease

    def crash(self, X):                      # the process dies after the charge, before the store
        os.kill(os.getpid(), signal.SIGKILL)
    PreparedRelease.compute = crash
    X = np.load(sys.argv[1])
    ds = Dataset(X, name="private")
    Curator(ds, Ledger(3.0, path=sys.argv[2], dataset=ds)).release(
        DPLloyd(n_clusters=2, epsilon=0.5, bounds=(-1.0, 1.0), n_iter=3))
""")


@pytest.mark.parametrize("how", ["next identical request", "restart"])
def test_finding4_a_paid_release_survives_a_crash_between_the_charge_and_the_store(tmp_path, how):
    X = _X(seed=4)
    np.save(tmp_path / "X.npy", X)
    path = tmp_path / "ledger.sqlite"
    proc = subprocess.run(
        [sys.executable, "-c", CRASH, str(tmp_path / "X.npy"), str(path)],
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == -9, proc.stderr.decode()
    ds = Dataset(X, name="private")
    ledger = Ledger(3.0, path=path, dataset=ds)
    assert ledger.spent == (1.0, 0.0) and len(ledger.pending()) == 1  # paid, not stored
    curator = Curator(ds, ledger)
    request = core.DPLloyd(n_clusters=2, epsilon=0.5, bounds=(-1.0, 1.0), n_iter=3)
    if how == "restart":
        [release] = curator.recover()
    else:
        release = curator.release(request)
    assert "completed after the first run" in release.notes[0]
    assert release.charge_id == ledger.history[0].id and ledger.spent == (1.0, 0.0)
    again = curator.release(request)  # at most one output per charge
    assert again.from_store and again.id == release.id and ledger.spent == (1.0, 0.0)
    assert ledger.pending() == [] and curator.recover() == []
    assert len(curator.releases()) == 1


def test_finding4_a_failure_after_the_charge_is_not_retried_for_free():
    from privclust.core.release import ReleaseFailed

    class Fragile(core.DPLloyd):
        def _fit(self, X, rng):
            raise ValueError("a data-dependent failure")

    ledger = Ledger(5.0)
    curator = Curator(_X(), ledger, trusted=(Fragile,))
    for _ in range(2):
        with pytest.raises(ReleaseFailed):
            curator.release(Fragile(n_clusters=2, epsilon=0.5, bounds=(-1.0, 1.0)))
    assert ledger.spent == (2.0, 0.0) and len(ledger.failed_charges()) == 2


# ---- finding 5 ----------------------------------------------------------------------------------
def test_finding5_an_abandoned_gibbs_run_ends_as_a_stored_release(tmp_path):
    X = _X(n=300, d=5, seed=5)
    ds = Dataset(X, name="private")
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(5.0, path=path, dataset=ds)
    request = core.GibbsSubspaceClustering(
        n_clusters=2, subspace_dim=1, epsilon=1.0, n_iter=10**6, n_chains=1, record_every=10
    )
    live = Curator(ds, ledger).live(request, process=True).start()
    deadline = time.time() + 60
    while live.queue.empty() and time.time() < deadline:
        time.sleep(0.05)
    live.abandon()  # the page went away
    assert live.join(120) and live.status == "stopped" and live.error is None
    # a later session (a new process: new ledger and curator objects) finds it, at no charge
    curator = Curator(Dataset(X.copy()), Ledger(5.0, path=path, dataset=ds))
    [stored] = curator.releases()
    assert stored.id == live.release.id and 0 < stored.attributes["subspaces_"].size
    assert curator.ledger.spent == (1.0, 0.0) and curator.cost(request) == (0.0, 0.0)
    assert curator.release(request).from_store and curator.ledger.spent == (1.0, 0.0)


# ---- finding 6 ----------------------------------------------------------------------------------
def test_finding6_the_same_records_dense_or_sparse_or_permuted_have_one_budget(tmp_path):
    counts = np.random.default_rng(6).poisson(1.0, size=(40, 6)).astype(float)
    buf = io.StringIO()
    np.savetxt(buf, counts, delimiter=",", fmt="%d")
    dense = load(buf.getvalue().encode(), format="csv")
    rows, cols = np.nonzero(counts)
    mtx = (
        "%%MatrixMarket matrix coordinate real general\n"
        f"{counts.shape[0]} {counts.shape[1]} {len(rows)}\n"
        + "".join(f"{i + 1} {j + 1} {counts[i, j]:g}\n" for i, j in zip(rows, cols, strict=True))
    )
    sparse = load(mtx.encode(), format="mtx")
    permuted = Dataset(counts[::-1, [3, 1, 0, 5, 2, 4]].astype(np.int32))
    assert sparse.is_sparse and not dense.is_sparse
    assert dense.budget_key == sparse.budget_key == permuted.budget_key
    path = tmp_path / "ledger.sqlite"
    Curator(dense, Ledger(1.0, path=path, dataset=dense)).release(
        core.DPLloyd(n_clusters=2, epsilon=0.5, bounds=(0.0, 10.0))
    )  # costs 1.0
    ledger = Ledger(1.0, path=path, dataset=permuted)
    assert ledger.remaining == (0.0, 0.0)


# ---- finding 7 ----------------------------------------------------------------------------------
@pytest.mark.parametrize("row_cap, cell_bound", [(5, 2.0), (5, 0.5), (3, 1.0)])
def test_finding7_the_cost_a_release_states_is_the_cost_charged(row_cap, cell_bound):
    counts = np.random.default_rng(7).poisson(1.0, size=(60, 8)).astype(float)
    ledger = Ledger(1000.0)
    release = Curator(counts, ledger).release(
        core.DPTauCoClustering(epsilon=0.5, row_cap=row_cap, cell_bound=cell_bound)
    )
    [note] = [w for w in release.guarantee.warnings if "row_cap" in w]
    factor = int(re.search(r"= (\d+) x epsilon", note).group(1))
    assert factor * 0.5 == pytest.approx(release.cost[0]) == ledger.spent[0]


# ---- one caller, one build, one plan, one clone -------------------------------------------------
def test_ledger_charge_has_one_caller_in_core():
    import ast

    import privclust.core

    root = os.path.dirname(privclust.core.__file__)
    callers = []
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                for node in ast.walk(ast.parse(open(path).read())):
                    if (
                        isinstance(node, ast.Call)
                        and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "charge"
                    ):
                        callers.append(os.path.relpath(path, root))
    assert callers == [os.path.join("release", "prepared.py")]


def test_one_app_release_builds_plans_and_clones_once(ledger_env, csv_bytes, monkeypatch):
    from sklearn import base as sklearn_base

    from privclust.app import catalogue
    from privclust.app.state import Lab
    from privclust.core.estimator import PrivateEstimator
    from privclust.core.release import prepared as prepared_module

    lab = Lab()
    assert lab.data.upload("records.csv", csv_bytes(_X(n=120)))
    lab.settings.param.update(task="kmeans")
    lab.settings.param.update(algorithm="dplloyd", epsilon=0.5, n_clusters=2)
    counts = {"build": 0, "plan": 0, "clone": 0, "sklearn clone": 0}

    def counting(name, real):
        def wrapper(*args, **kwargs):
            counts[name] += 1
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(
        catalogue.AlgorithmSpec, "build", counting("build", catalogue.AlgorithmSpec.build)
    )
    monkeypatch.setattr(PrivateEstimator, "plan", counting("plan", PrivateEstimator.plan))
    monkeypatch.setattr(
        prepared_module, "vouched_clone", counting("clone", prepared_module.vouched_clone)
    )
    monkeypatch.setattr(sklearn_base, "clone", counting("sklearn clone", sklearn_base.clone))
    assert lab.do_release() is not None, lab.message
    assert counts == {"build": 1, "plan": 1, "clone": 1, "sklearn clone": 0}
