"""Unit tests of the release protocol: Curator, Release, ReleaseStore, the ledger's units.

The Curator is the one door to non-public data: it refuses what is not private, draws the noise
from fresh OS entropy whatever seed the caller passed, converts the plan into the ledger's unit and
charges it before anything reads the records, answers identical requests from its store, and
returns frozen copies. Conversions follow group privacy (Dwork & Roth, *The Algorithmic
Foundations of Differential Privacy*, 2014, Thm 2.2); cell-level releases follow Battaglia &
Pensa, SDM 2025, Sec. 4.1.
"""

import dataclasses
import decimal
import gc
import io
import json
import math
import sqlite3
import types
from datetime import datetime
from decimal import Decimal

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.cluster import KMeans

import privclust.core as core
from privclust.core import Curator as CoreCurator
from privclust.core import DPLloyd, Ledger, Release
from privclust.core import estimator as estimator_module
from privclust.core.data import Dataset
from privclust.core.estimator import PrivateEstimator
from privclust.core.privacy import BudgetAccountant, BudgetExceeded, Guarantee
from privclust.core.privacy.accounting.relations import RelationError
from privclust.core.release import PrivacyRefused, ReleaseFailed
from privclust.core.release.codec import decode, dumps, encode, loads

BOX = (-1.0, 1.0)
SECRET = 0.123456789012345  # a data value that must never appear in a public error text


def make_X(n=120, d=2, seed=7):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.9, 0.9, size=(n, d))
    X[0, 0] = SECRET
    return X


class Spy(PrivateEstimator):
    """A private estimator that records every data access and fit (a test double).

    It releases ``cluster_centers_`` = column means plus Laplace noise drawn from ``rng``; its
    plan has the given kind and relation; ``fail`` makes the fit raise a message quoting a record.
    """

    _released = ("cluster_centers_",)
    calls = []  # ("check_data" | "fit" | "before_charge", ...) across instances (clones)
    fitted = []  # (the estimator that fitted, the data it read), across instances

    def __init__(
        self,
        epsilon=1.0,
        delta=0.0,
        kind="pure",
        neighbouring="replace",
        fail=False,
        random_state=None,
        ledger=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.kind = kind
        self.neighbouring = neighbouring
        self.fail = fail
        self.random_state = random_state
        self.ledger = ledger

    def _plan(self, n_samples, n_features):
        if self.kind == "none":
            return Guarantee(float("inf"), 0.0, "none", None)
        acc = BudgetAccountant(self.epsilon, self.delta)
        acc.spend("means Laplace", self.epsilon, self.delta, 2.0)
        return acc.guarantee(self.kind, self.neighbouring)

    def _before_charge(self, shape, rng):
        Spy.calls.append(("before_charge", shape))

    def _check_data(self, X):
        Spy.calls.append(("check_data",))
        return super()._check_data(X)

    def _fit(self, X, rng):
        Spy.calls.append(("fit",))
        Spy.fitted.append((self, X))
        if self.fail:
            raise ValueError(f"record 0 has the value {X[0, 0]!r}")
        self.cluster_centers_ = X.mean(axis=0, keepdims=True) + rng.laplace(
            0.0, 2.0 / X.shape[0] / self.epsilon, size=(1, X.shape[1])
        )
        self.internal_ = X  # fitted but NOT released: must never leave
        acc = BudgetAccountant(self.epsilon, self.delta)
        acc.spend("means Laplace", self.epsilon, self.delta, 2.0)
        self.privacy_ = acc.guarantee(self.kind, self.neighbouring)


@pytest.fixture(autouse=True)
def _reset_spy():
    Spy.calls.clear()
    Spy.fitted.clear()
    yield
    Spy.calls.clear()
    Spy.fitted.clear()


def Curator(dataset, ledger):
    """The core Curator, trusting this module's test double as an operator-listed class."""
    return CoreCurator(dataset, ledger, trusted=(Spy,))


def dplloyd(seed=None, **kw):
    params = dict(n_clusters=2, epsilon=0.5, bounds=BOX, n_iter=3, random_state=seed)
    params.update(kw)
    return DPLloyd(**params)


# ---- refusals ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "baseline", [KMeans(n_clusters=2, n_init=1), core.KPlanes(n_clusters=2), core.TauCoClustering()]
)
def test_non_private_estimators_are_refused_and_nothing_is_charged(baseline):
    ledger = Ledger(5.0)
    curator = Curator(make_X(), ledger)
    with pytest.raises(PrivacyRefused, match="not a private estimator"):
        curator.release(baseline)
    with pytest.raises(PrivacyRefused):
        curator.cost(baseline)
    assert ledger.spent == (0.0, 0.0) and ledger.history == [] and curator.releases() == []


def test_plans_of_kind_none_are_refused_before_anything_runs():
    ledger = Ledger(5.0)
    curator = Curator(make_X(), ledger)
    with pytest.raises(PrivacyRefused, match="not private"):
        curator.release(Spy(kind="none"))
    # CompressiveKMeans with epsilon=None releases the noiseless sketch (kind "none")
    with pytest.raises(PrivacyRefused, match="not private"):
        curator.release(core.CompressiveKMeans(n_clusters=2, epsilon=None, bounds=BOX))
    assert Spy.calls == []
    assert ledger.spent == (0.0, 0.0) and ledger.history == [] and curator.releases() == []


def test_privacy_refused_is_a_value_error_and_owner_path_is_marked_not_private():
    curator = Curator(make_X(), Ledger(1.0))
    assert issubclass(PrivacyRefused, ValueError)
    result = curator.owner_fit(KMeans(n_clusters=2, n_init=1, random_state=0))
    assert "NOT PRIVATE" in result.label
    assert curator.ledger.history == [] and curator.releases() == []


# ---- randomness -------------------------------------------------------------------------------
def test_user_seed_is_ignored_two_releases_with_the_same_seed_differ():
    X = make_X()
    first = Curator(X, Ledger(5.0)).release(dplloyd(seed=0))
    second = Curator(X, Ledger(5.0)).release(dplloyd(seed=0))
    seeded = dplloyd(seed=0).fit(X).cluster_centers_  # what an attacker recomputes
    assert not np.array_equal(first.cluster_centers_, second.cluster_centers_)
    assert not np.array_equal(first.cluster_centers_, seeded)
    assert not np.array_equal(second.cluster_centers_, seeded)
    assert "random_state" not in first.params and "fresh OS entropy" in first.randomness


@pytest.mark.parametrize("seed", [0, 12345, np.random.SeedSequence(3)])
def test_nothing_the_caller_passed_as_random_state_reaches_the_noise(monkeypatch, seed):
    seen = []
    real = estimator_module.as_generator

    def spy(random_state=None):
        seen.append(random_state)
        return real(random_state)

    monkeypatch.setattr(estimator_module, "as_generator", spy)
    generator = np.random.default_rng(99)
    state_before = generator.bit_generator.state
    curator = Curator(make_X(), Ledger(5.0))
    curator.release(Spy(random_state=seed))
    curator.release(Spy(epsilon=0.5, random_state=generator))
    assert seen and all(s is None for s in seen), seen
    # the caller's generator was not drawn from
    assert generator.bit_generator.state == state_before
    assert [c for c in Spy.calls if c[0] == "fit"] == [("fit",), ("fit",)]


# ---- the store --------------------------------------------------------------------------------
def test_identical_request_is_answered_from_the_store_at_no_charge():
    ledger = Ledger(5.0)
    curator = Curator(make_X(), ledger)
    first = curator.release(dplloyd(seed=1))
    spent = ledger.spent_exact
    assert curator.cost(dplloyd(seed=2)) == (0.0, 0.0)  # the seed is not part of the request
    again = curator.release(dplloyd(seed=2))
    assert again.from_store and not first.from_store
    assert again.id == first.id and again.charge_id == first.charge_id
    np.testing.assert_array_equal(again.cluster_centers_, first.cluster_centers_)
    assert ledger.spent_exact == spent and len(ledger.history) == 1
    other = curator.release(dplloyd(seed=1, n_iter=4))  # any parameter change is charged
    assert not other.from_store and len(ledger.history) == 2
    assert [r.id for r in curator.releases()] == [first.id, other.id]


def test_store_survives_a_restart_with_a_persistent_ledger(tmp_path):
    X = make_X()
    ds = Dataset(X, name="private")
    path = tmp_path / "budget.sqlite"
    first = Curator(ds, Ledger(3.0, path=path, dataset=ds)).release(dplloyd(seed=0))
    assert first.cost == (1.0, 0.0)  # add/remove 0.5 on a replace-one ledger

    # a new process: the file is re-opened by a new Ledger and a new Curator
    ledger = Ledger(3.0, path=path, dataset=Dataset(X[::-1].copy(), name="reloaded"))
    curator = Curator(Dataset(X, name="reloaded"), ledger)
    assert ledger.spent == (1.0, 0.0)
    assert curator.cost(dplloyd()) == (0.0, 0.0)
    again = curator.release(dplloyd(seed=5))
    assert again.from_store and again.id == first.id and again.charge_id == first.charge_id
    np.testing.assert_array_equal(again.cluster_centers_, first.cluster_centers_)
    assert ledger.spent == (1.0, 0.0) and len(ledger.history) == 1
    listed = curator.releases()
    assert len(listed) == 1 and curator.get_release(first.id).key == first.key
    with pytest.raises(KeyError):
        curator.get_release(first.id + 100)


# ---- the frozen release -----------------------------------------------------------------------
def _reachable(root, limit=20000):
    """Objects reachable from ``root`` through gc referents, not descending into types,
    modules or functions (every object refers to its class, which refers to the world)."""
    seen, stack, out = set(), [root], []
    while stack and len(out) < limit:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        out.append(obj)
        if isinstance(obj, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)):
            continue
        stack.extend(gc.get_referents(obj))
    return out


def test_release_is_frozen_and_holds_copies_only():
    X = make_X()
    curator = Curator(X, Ledger(5.0))
    release = curator.release(Spy())
    [(est, data)] = Spy.fitted
    assert isinstance(est, Spy) and est.random_state is None and est.ledger is None

    with pytest.raises(dataclasses.FrozenInstanceError):
        release.cost = (0.0, 0.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        release.attributes = {}
    with pytest.raises(TypeError):
        release.attributes["cluster_centers_"] = np.zeros((1, 2))
    centres = release.cluster_centers_
    assert not centres.flags.writeable
    with pytest.raises(ValueError):
        centres[0, 0] = 1e6
    with pytest.raises(ValueError):
        centres.flags.writeable = True
    assert not np.shares_memory(centres, est.cluster_centers_)
    expected = est.cluster_centers_.copy()
    est.cluster_centers_[...] = 42.0  # mutating the estimator does not touch the release
    np.testing.assert_array_equal(release.cluster_centers_, expected)

    # only released attributes leave; the unreleased fitted X does not
    assert set(release.attributes) == {"cluster_centers_"}
    with pytest.raises(AttributeError):
        release.internal_  # noqa: B018 -- the access must raise

    # no reference to the estimator, the data or any estimator/dataset object
    for obj in _reachable(release):
        assert obj is not est and obj is not data and obj is not X
        assert not isinstance(obj, (BaseEstimator, Dataset)), type(obj)
        if isinstance(obj, np.ndarray):
            assert not np.shares_memory(obj, data) and not np.shares_memory(obj, X)
    assert isinstance(release.estimator, str) and isinstance(release.guarantee, Guarantee)
    assert isinstance(release.time, datetime) and isinstance(release.key, str)
    assert isinstance(release.attributes, types.MappingProxyType)
    assert json.loads(json.dumps(release.to_dict()))  # plain data
    back = Release.from_dict(release.to_dict())
    np.testing.assert_array_equal(back.cluster_centers_, release.cluster_centers_)
    assert back.guarantee.to_dict() == release.guarantee.to_dict()


# ---- refusals of the charge run nothing ---------------------------------------------------------
def test_budget_exceeded_runs_nothing():
    ledger = Ledger(1.0)
    ledger.charge(0.75, what="earlier release")
    curator = Curator(make_X(), ledger)
    with pytest.raises(BudgetExceeded):
        curator.release(Spy(epsilon=0.5))
    # only the public, data-independent preparation ran (it may refuse parameters, so it
    # comes before the charge); nothing read the data or fitted
    assert [c[0] for c in Spy.calls] == ["before_charge"]
    assert ledger.spent == (0.75, 0.0) and len(ledger.history) == 1 and curator.releases() == []
    assert curator.release(Spy(epsilon=0.25)).cost == (0.25, 0.0)  # still usable
    assert ledger.remaining_exact[0] == 0


@pytest.mark.parametrize(
    "unit, relation", [("add_remove", "replace"), ("replace", "cell"), ("add_remove", "cell")]
)
def test_relation_the_ledger_cannot_count_runs_nothing(unit, relation):
    ledger = Ledger(10.0, unit=unit)
    curator = Curator(make_X(), ledger)
    with pytest.raises(RelationError):
        curator.release(Spy(neighbouring=relation))
    with pytest.raises(RelationError):
        curator.cost(Spy(neighbouring=relation))
    assert Spy.calls == []
    assert ledger.spent == (0.0, 0.0) and ledger.history == [] and curator.releases() == []


def test_cell_level_release_without_row_cap_is_refused_by_the_curator():
    counts = np.random.default_rng(1).poisson(2.0, size=(30, 8)).astype(float)
    ledger = Ledger(100.0)
    curator = Curator(counts, ledger)
    with pytest.raises(RelationError, match="row_cap"):
        curator.release(core.DPTauCoClustering(epsilon=1.0))
    assert ledger.history == []
    release = curator.release(core.DPTauCoClustering(epsilon=1.0, row_cap=3))
    assert release.cost == (6.0, 0.0)  # 2 floor(3) ceil(1 / 1) x epsilon
    assert ledger.history[-1].relation == "cell"


# ---- failure after the charge -----------------------------------------------------------------
def test_failure_after_the_charge_hides_the_message_but_keeps_the_charge():
    ledger = Ledger(5.0)
    curator = Curator(make_X(), ledger)
    with pytest.raises(ReleaseFailed) as info:
        curator.release(Spy(fail=True))
    err = info.value
    secret = repr(SECRET)
    assert secret[:8] in err.detail and "record 0" in err.detail
    for text in (str(err), repr(err), *map(str, err.args)):
        assert secret[:8] not in text and "record 0" not in text
    assert err.kind == "ValueError" and "ValueError" in str(err)
    assert ledger.spent == (1.0, 0.0) and len(ledger.history) == 1  # no refund
    assert curator.releases() == []  # nothing stored


# ---- public facts -----------------------------------------------------------------------------
def test_public_facts_show_n_only_under_replace():
    X = make_X(n=137, d=3)
    facts = Curator(X, Ledger(1.0)).public_facts()
    assert facts["n_samples"] == 137 and facts["n_features"] == 3 and facts["unit"] == "replace"
    hidden = Curator(X, Ledger(1.0, unit="add_remove")).public_facts()
    assert "n_samples" not in hidden and hidden["n_features"] == 3
    assert "137" not in json.dumps(hidden)


# ---- ledger units -----------------------------------------------------------------------------
def _exact(eps, delta):
    """(1 + e^eps) delta to 80 digits (the ledger keeps 40, rounded up)."""
    fine = decimal.Context(prec=80)
    return fine.multiply(fine.add(1, fine.exp(Decimal(repr(eps)))), Decimal(repr(delta)))


@pytest.mark.parametrize("eps, delta", [(0.3, 1e-6), (1.0, 1e-9), (0.1, 0.0), (2.5, 1e-5)])
def test_add_remove_costs_twice_epsilon_and_one_plus_e_eps_delta_on_replace(eps, delta):
    ledger = Ledger(100.0, 0.5)
    record = ledger.charge(eps, delta, what="x", relation="add_remove")
    spent_eps, spent_delta = ledger.spent_exact
    assert spent_eps == 2 * Decimal(repr(eps))
    exact = _exact(eps, delta)
    slack = decimal.Context(prec=80).multiply(
        exact, Decimal("1.00000000000000000000000000000000001")
    )
    assert exact <= spent_delta <= slack  # rounded up, by less than 1e-35 relative
    assert float(spent_delta) == pytest.approx((1 + math.exp(eps)) * delta, rel=1e-15)
    assert record.relation == "add_remove" and record.requested == (eps, delta)
    assert record.epsilon == 2 * eps and ledger.cost(eps, delta, "add_remove") == ledger.spent_exact
    text = str(ledger.history[-1])
    assert "add_remove" in text and f"epsilon={eps!r}" in text and f"epsilon={2 * eps!r}" in text


def test_replace_release_is_refused_on_an_add_remove_ledger():
    ledger = Ledger(10.0, 1e-3, unit="add_remove")
    with pytest.raises(RelationError, match="add/remove ledger"):
        ledger.charge(0.1, 0.0, relation="replace")
    assert not ledger.can_charge(0.1, 0.0, relation="replace")
    assert ledger.spent == (0.0, 0.0) and ledger.history == []
    ledger.charge(0.1, 1e-6, relation="add_remove")  # its own unit: counted as is
    assert ledger.spent_exact == (Decimal("0.1"), Decimal("0.000001"))


# two rows of integer counts with sums <= L differ in up to 2 floor(L) cells by one unit each,
# each a separate step of a cell-level release whatever c >= 1 is: 2 floor(L) ceil(1 / c) steps
@pytest.mark.parametrize(
    "row_cap, cell_bound, steps",
    [(3, 1.0, 6), (3, 4.0, 6), (1, 1.0, 2), (5, 3.0, 10), (2.5, 0.5, 8)],
)
def test_cell_release_needs_a_row_cap_and_costs_2_floor_L_ceil_1_over_c_eps(
    row_cap, cell_bound, steps
):
    ledger = Ledger(100.0)
    with pytest.raises(RelationError, match="row_cap"):
        ledger.charge(0.5, 0.0, relation="cell", cell_bound=cell_bound)
    with pytest.raises(RelationError):
        ledger.charge(0.5, 1e-6, relation="cell", row_cap=row_cap, cell_bound=cell_bound)
    assert ledger.history == []
    record = ledger.charge(
        0.5, 0.0, what="cocluster", relation="cell", row_cap=row_cap, cell_bound=cell_bound
    )
    assert ledger.spent_exact == (Decimal("0.5") * steps, Decimal(0))
    assert record.relation == "cell" and record.requested == (0.5, 0.0)
    assert record.epsilon == 0.5 * steps


def test_history_shows_relation_requested_and_converted_cost(tmp_path):
    ledger = Ledger(20.0, 0.1, path=tmp_path / "l.sqlite", dataset="k" * 64)
    ledger.charge(0.5, 0.0, what="A", relation="replace")
    ledger.charge(0.25, 1e-6, what="B", relation="add_remove")
    ledger.charge(0.5, 0.0, what="C", relation="cell", row_cap=2)
    ledger.charge(0.125, 0.0, what="D")
    reopened = Ledger(20.0, 0.1, path=tmp_path / "l.sqlite", dataset="k" * 64)
    hist = reopened.history
    assert [h.what for h in hist] == ["A", "B", "C", "D"]
    assert [h.relation for h in hist] == ["replace", "add_remove", "cell", "replace"]
    assert [h.requested for h in hist] == [(0.5, 0.0), (0.25, 1e-6), (0.5, 0.0), (0.125, 0.0)]
    assert [h.epsilon for h in hist] == [0.5, 0.5, 2.0, 0.125]
    assert hist[1].delta == pytest.approx(float(_exact(0.25, 1e-6)), rel=1e-15)
    assert [h.id for h in hist] == sorted(h.id for h in hist) and len({h.id for h in hist}) == 4
    assert hist[1].to_dict()["requested"] == [0.25, 1e-6]
    assert reopened.spent_exact[0] == Decimal("3.125")


def test_old_ledger_files_without_unit_and_relation_columns_are_migrated(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE ledgers (dataset TEXT PRIMARY KEY, total_epsilon TEXT NOT NULL, "
        "total_delta TEXT NOT NULL, spent_epsilon TEXT NOT NULL, spent_delta TEXT NOT NULL, "
        "created TEXT NOT NULL);"
        "CREATE TABLE charges (id INTEGER PRIMARY KEY AUTOINCREMENT, dataset TEXT NOT NULL, "
        "at TEXT NOT NULL, what TEXT NOT NULL, epsilon TEXT NOT NULL, delta TEXT NOT NULL);"
    )
    conn.execute(
        "INSERT INTO ledgers VALUES ('abc', '2.0', '0.001', '0.75', '0', "
        "'2025-01-01T00:00:00+00:00')"
    )
    conn.execute(
        "INSERT INTO charges (dataset, at, what, epsilon, delta) VALUES "
        "('abc', '2025-01-01T00:00:01+00:00', 'old release', '0.75', '0')"
    )
    conn.commit()
    conn.close()

    with pytest.raises(ValueError, match="unit"):
        Ledger(2.0, 0.001, path=path, dataset="abc", unit="add_remove")
    ledger = Ledger(2.0, 0.001, path=path, dataset="abc")
    assert ledger.unit == "replace" and ledger.spent_exact == (Decimal("0.75"), Decimal(0))
    (old,) = ledger.history
    assert old.what == "old release" and old.relation == "replace" and old.requested is None
    ledger.charge(0.5, 1e-5, what="new", relation="add_remove")
    hist = Ledger(2.0, 0.001, path=path, dataset="abc").history
    assert [h.what for h in hist] == ["old release", "new"]
    assert hist[1].relation == "add_remove" and hist[1].requested == (0.5, 1e-5)
    assert ledger.spent_exact[0] == Decimal("1.75")
    with pytest.raises(BudgetExceeded):
        ledger.charge(0.26, 0.0)
    conn = sqlite3.connect(path)
    cols = {r[1] for r in conn.execute("PRAGMA table_info(charges)")}
    conn.close()
    assert {"relation", "requested_epsilon", "requested_delta"} <= cols


# ---- the codec --------------------------------------------------------------------------------
CODEC_VALUES = [
    np.array([[0.5, -0.0, np.nan], [np.inf, -np.inf, 1e-300]]),
    np.arange(-3, 9).reshape(3, 4),
    np.array([True, False, True]),
    np.array([1 + 2j, np.nan + 1j, complex(0, -np.inf)]),
    np.zeros((0, 3)),
    np.array(2.5),
    (1, 2.5, "three", None, (True, [4, 5])),
    {"a": np.array([1.0, np.nan]), (1, 2): ("x", {"inner": -np.inf}), 3: [np.int64(7)]},
    [float("nan"), float("inf"), -0.0, complex(1, float("nan"))],
]


def _same(a, b):
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype.kind == b.dtype.kind
        np.testing.assert_array_equal(a, b)  # nan == nan here, and -0.0 keeps its sign below
        if a.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(a), np.signbit(b))
        assert not b.flags.writeable
        return
    if isinstance(a, float):
        assert isinstance(b, float) and (a == b or (math.isnan(a) and math.isnan(b)))
        assert math.copysign(1, a) == math.copysign(1, b)
        return
    if isinstance(a, complex):
        assert isinstance(b, complex)
        _same(a.real, b.real)
        _same(a.imag, b.imag)
        return
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b)
        for k in a:
            _same(a[k], b[k])
        return
    if isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
        return
    assert a == b and type(b) is type(a) or (isinstance(a, np.integer) and b == int(a))


@pytest.mark.parametrize("value", CODEC_VALUES, ids=lambda v: type(v).__name__)
def test_codec_round_trips_through_strict_json(value):
    text = dumps(value)
    json.loads(text)  # strict JSON: dumps used allow_nan=False
    assert "NaN" not in text and "Infinity" not in text
    _same(value, loads(text))
    _same(value, decode(json.loads(json.dumps(encode(value)))))


@pytest.mark.parametrize("value", CODEC_VALUES, ids=lambda v: type(v).__name__)
def test_codec_round_trips_with_arrays_as_npy_blobs(value):
    arrays = []
    text = json.dumps(encode(value, arrays), allow_nan=False)
    assert "__ndarray__" not in text  # every array went to a blob
    _same(value, decode(json.loads(text), arrays))
    with pytest.raises(ValueError, match="blob"):
        decode({"__npy__": 0})


def test_store_keeps_arrays_as_npy_blobs_and_reads_old_inline_payloads(tmp_path):
    """Arrays are stored as .npy blobs (no pickle), not as JSON float lists; a release stored
    the old way (arrays inline in its JSON payload) is still read back as it was."""
    X = make_X()
    ds = Dataset(X, name="private")
    path = tmp_path / "budget.sqlite"
    first = Curator(ds, Ledger(3.0, path=path, dataset=ds)).release(dplloyd(seed=0))
    conn = sqlite3.connect(path)
    try:
        (payload,) = conn.execute(
            "SELECT payload FROM releases WHERE id = ?", (first.id,)
        ).fetchone()
        blobs = [
            b
            for (b,) in conn.execute(
                "SELECT npy FROM release_arrays WHERE release_id = ? ORDER BY position", (first.id,)
            )
        ]
        assert "__ndarray__" not in payload and "__npy__" in payload and blobs
        centres = np.load(io.BytesIO(blobs[0]), allow_pickle=False)
        np.testing.assert_array_equal(centres, first.cluster_centers_)
        # the format before blobs: the download JSON itself, arrays inline, no blob rows
        conn.execute(
            "UPDATE releases SET payload = ? WHERE id = ?",
            (json.dumps(first.to_dict(), allow_nan=False), first.id),
        )
        conn.execute("DELETE FROM release_arrays")
        conn.commit()
    finally:
        conn.close()
    curator = Curator(Dataset(X, name="reloaded"), Ledger(3.0, path=path, dataset=ds))
    (old,) = curator.releases()
    np.testing.assert_array_equal(old.cluster_centers_, first.cluster_centers_)
    assert not old.cluster_centers_.flags.writeable and old.to_dict() == first.to_dict()


def test_codec_refuses_what_it_cannot_store():
    with pytest.raises(TypeError):
        encode(np.array(["a", "b"], dtype=object))
    with pytest.raises(TypeError):
        encode(object())
    with pytest.raises(ValueError):
        decode({"unknown": 1})


class LyingDPLloyd(DPLloyd):
    """A subclass that states DPLloyd's plan but would release a raw record."""

    def _fit(self, X, rng):
        super()._fit(X, rng)
        self.cluster_centers_ = X[: self.n_clusters].copy()


def test_only_trusted_exact_classes_and_parameter_objects_run():
    """The curator limits what may run; it cannot contain code it runs: a subclass, an
    unlisted class or a callable parameter is refused before anything is charged."""
    ledger = Ledger(5.0)
    core_only = CoreCurator(make_X(), ledger)
    for request in (LyingDPLloyd(2, epsilon=0.5, bounds=(-5, 5)), Spy(epsilon=0.5)):
        with pytest.raises(PrivacyRefused, match="trusted"):
            core_only.release(request)
    agg = core.SampleAggregateSubspaceClustering(
        n_clusters=2,
        subspace_dim=1,
        epsilon=1.0,
        delta=1e-6,
        aggregator=lambda Y, e, d, b, rng: (Y[0], None),
    )
    with pytest.raises(PrivacyRefused, match="aggregator"):
        core_only.release(agg)
    assert ledger.history == []
    assert core_only.release(DPLloyd(2, epsilon=0.5, bounds=(-5, 5))).cost == (1.0, 0.0)
    listed = CoreCurator(make_X(), Ledger(5.0), trusted=(Spy,))
    assert listed.release(Spy(epsilon=0.5)).cost == (0.5, 0.0)
