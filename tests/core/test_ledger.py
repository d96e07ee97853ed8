"""Budget ledger: exact arithmetic, refusal, validation, persistence, concurrency (dp-reliability 6.3)."""

import json
import math
import multiprocessing as mp
import sqlite3
from datetime import datetime
from decimal import Decimal

import numpy as np
import pytest

from privclust.core.privacy import BudgetExceeded, ChargeRecord, Ledger
from privclust.core.release.prepared import charge

FP = "a" * 64


def test_ten_tenths_fit_and_eleventh_refused():
    ledger = Ledger(1.0)
    for i in range(10):
        ledger.charge(0.1, what=f"release {i}")
    assert ledger.spent == (1.0, 0.0)
    assert ledger.spent_exact == (Decimal("1.0"), Decimal(0))
    assert ledger.remaining == (0.0, 0.0)
    with pytest.raises(BudgetExceeded) as info:
        ledger.charge(0.1, what="one too many")
    msg = str(info.value)
    assert "spent epsilon=1.0" in msg and "remaining epsilon=0.0" in msg
    with pytest.raises(BudgetExceeded):
        ledger.charge(1e-9)
    assert len(ledger.history) == 10  # refused charges spend nothing


def test_float_sum_trap_is_avoided():
    ledger = Ledger(1.8)
    for _ in range(3):
        ledger.charge(0.6)  # 0.6 * 3 = 1.7999999999999998 in floats
    assert ledger.remaining_exact[0] == 0
    ledger2 = Ledger(0.3)
    ledger2.charge(0.1)
    ledger2.charge(0.2)  # 0.1 + 0.2 > 0.3 in floats
    with pytest.raises(BudgetExceeded):
        ledger2.charge(1e-300)


def test_delta_budget():
    ledger = Ledger(10.0, 1e-5)
    ledger.charge(1.0, 5e-6)
    ledger.charge(1.0, 5e-6)
    with pytest.raises(BudgetExceeded, match="delta"):
        ledger.charge(1.0, 1e-12)
    ledger.charge(1.0)  # pure charges still fit
    assert ledger.spent == (3.0, 1e-5)


@pytest.mark.parametrize("eps", [0, -0.1, math.nan, math.inf, "abc", None, True])
def test_invalid_epsilon(eps):
    ledger = Ledger(1.0)
    with pytest.raises((ValueError, TypeError)):
        ledger.charge(eps)
    assert ledger.spent == (0.0, 0.0)


@pytest.mark.parametrize("delta", [-1e-9, 1.0, 2.0, math.nan])
def test_invalid_delta(delta):
    with pytest.raises(ValueError):
        Ledger(1.0).charge(0.1, delta)
    with pytest.raises(ValueError):
        Ledger(1.0, delta)


def test_invalid_budget():
    for eps in (0, -1, math.inf, math.nan):
        with pytest.raises(ValueError):
            Ledger(eps)


def test_amount_types():
    ledger = Ledger("1")
    ledger.charge("0.25")
    ledger.charge(np.float64(0.25))
    ledger.charge(Decimal("0.25"))
    ledger.charge(np.float32(0.1))  # widened to float64 (0.10000000149...): charged as used
    assert ledger.remaining_exact[0] == Decimal("0.25") - Decimal(repr(float(np.float32(0.1))))


def test_no_refund_api():
    ledger = Ledger(1.0)
    assert not any(hasattr(ledger, name) for name in ("refund", "reset", "clear"))
    with pytest.raises(ValueError):
        ledger.charge(-0.5)


def test_history_and_summary():
    ledger = Ledger(1.0, 1e-6)
    ledger.charge(0.25, what="DPLloyd(k=3)")
    ledger.charge(0.5, 1e-7, what="OneCluster(t=50)")
    hist = ledger.history
    assert [h.what for h in hist] == ["DPLloyd(k=3)", "OneCluster(t=50)"]
    assert isinstance(hist[0], ChargeRecord) and isinstance(hist[0].when, datetime)
    assert hist[1].epsilon == 0.5 and hist[1].delta == 1e-7
    assert "OneCluster(t=50)" in str(hist[1])
    row = json.loads(json.dumps(hist[1].to_dict()))
    assert row["what"] == "OneCluster(t=50)" and datetime.fromisoformat(row["when"]) == hist[1].when
    text = ledger.summary()
    assert "\n" not in text and "*" not in text and "#" not in text
    assert "spent epsilon=0.75" in text and "remaining epsilon=0.25" in text
    assert "2 charges" in text
    assert ledger.can_charge(0.25) and not ledger.can_charge(0.26)


def test_charge_helper():
    """The pipeline's one charging function: nothing without a ledger, the amount with one."""
    assert charge(None, 5.0, 0.0, None, "anything") is None
    ledger = Ledger(1.0)
    charge(ledger, 0.5, 0.0, None, "x")
    assert ledger.spent == (0.5, 0.0)


# -- persistence -------------------------------------------------------------------------------
def test_persistence_across_objects(tmp_path):
    path = tmp_path / "ledger.sqlite"
    first = Ledger(1.0, 1e-6, path=path, dataset=FP)
    for _ in range(4):
        first.charge(0.1, 1e-7, what="first session")
    second = Ledger(1.0, 1e-6, path=path, dataset=FP)
    assert second.spent == pytest.approx((0.4, 4e-7))
    assert second.spent_exact == (Decimal("0.4"), Decimal("4E-7"))
    for _ in range(6):
        second.charge(0.1, what="second session")
    with pytest.raises(BudgetExceeded):
        first.charge(0.1)
    assert [h.what for h in first.history] == ["first session"] * 4 + ["second session"] * 6
    other = Ledger(1.0, path=path, dataset="b" * 64)  # another dataset has its own budget
    assert other.spent == (0.0, 0.0)


def test_dataset_object_fingerprint(tmp_path):
    class DS:
        fingerprint = FP

    ledger = Ledger(1.0, path=tmp_path / "l.db", dataset=DS())
    ledger.charge(0.5)
    assert Ledger(1.0, path=tmp_path / "l.db", dataset=FP).spent == (0.5, 0.0)


def test_reopen_with_other_total_refused(tmp_path):
    path = tmp_path / "ledger.sqlite"
    Ledger(1.0, path=path, dataset=FP).charge(0.9)
    with pytest.raises(ValueError, match="refusing"):
        Ledger(100.0, path=path, dataset=FP)
    with pytest.raises(ValueError, match="refusing"):
        Ledger(1.0, 1e-6, path=path, dataset=FP)
    assert Ledger("1.00", path=path, dataset=FP).spent == (0.9, 0.0)  # same value, other spelling


def test_path_requires_dataset(tmp_path):
    with pytest.raises(ValueError, match="dataset"):
        Ledger(1.0, path=tmp_path / "x.db")


def test_file_contents_are_decimal_strings(tmp_path):
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(1.0, path=path, dataset=FP)
    ledger.charge(0.1, what="w")
    ledger.charge(0.2, what="w2")
    with sqlite3.connect(path) as conn:
        total = conn.execute("SELECT total_epsilon, spent_epsilon FROM ledgers").fetchone()
        rows = conn.execute("SELECT at, what, epsilon, delta FROM charges ORDER BY id").fetchall()
    assert total == ("1.0", "0.3")
    assert [r[1:] for r in rows] == [("w", "0.1", "0.0"), ("w2", "0.2", "0.0")]
    datetime.fromisoformat(rows[0][0])


def _worker(path, n, out):
    ledger = Ledger(1.0, path=path, dataset=FP)
    ok = 0
    for _ in range(n):
        try:
            ledger.charge(0.01, what="concurrent")
            ok += 1
        except BudgetExceeded:
            pass
    out.put(ok)


def test_two_processes_never_overspend(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    Ledger(1.0, path=path, dataset=FP)
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(path, 60, out)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=120)
    assert sum(results) == 100
    ledger = Ledger(1.0, path=path, dataset=FP)
    assert ledger.spent_exact[0] == Decimal("1.00")
    assert len(ledger.history) == 100


def test_threads_never_overspend():
    from concurrent.futures import ThreadPoolExecutor

    ledger = Ledger(1.0)

    def try_charge(_):
        try:
            ledger.charge(0.01)
            return 1
        except BudgetExceeded:
            return 0

    with ThreadPoolExecutor(8) as pool:
        assert sum(pool.map(try_charge, range(800))) == 100


def test_unusable_file_gives_clean_error(tmp_path):
    not_db = tmp_path / "notes.txt"
    not_db.write_text("this is not a database\n" * 100)
    with pytest.raises(ValueError, match="cannot use ledger file"):
        Ledger(1.0, path=not_db, dataset=FP)
    with pytest.raises(ValueError, match="cannot use ledger file"):
        Ledger(1.0, path=tmp_path / "missing" / "dir" / "l.db", dataset=FP)


def test_copies_and_sklearn_clones_share_one_budget():
    """clone() deep-copies constructor parameters; a copied ledger must not reset spending."""
    import copy

    from sklearn.base import clone

    from privclust.core import DPLloyd

    ledger = Ledger(1.0)
    assert copy.copy(ledger) is ledger and copy.deepcopy(ledger) is ledger
    model = DPLloyd(
        n_clusters=2,
        epsilon=0.6,
        bounds=(-1.0, 1.0),
        neighbouring="replace",
        ledger=ledger,
        random_state=0,
    )
    twin = clone(model)
    assert twin.get_params()["ledger"] is ledger
    X = np.random.default_rng(0).uniform(-1, 1, size=(50, 2))
    model.fit(X)
    with pytest.raises(BudgetExceeded):
        twin.fit(X)
