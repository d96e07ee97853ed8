"""Stateful property test of the ledger (Hypothesis rule-based state machine): whatever the sequence of
valid and invalid charges, spent == sum of accepted charges <= total, a charge is refused exactly
when it would not fit, and two Ledger objects on one SQLite file always agree."""

import math
import os
import tempfile
from decimal import Decimal

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from privclust.core.privacy import BudgetExceeded, Ledger

amounts = st.one_of(
    st.decimals(min_value=Decimal("0.001"), max_value=Decimal("0.6"), places=3).map(str),
    st.floats(min_value=1e-6, max_value=0.6, allow_nan=False).map(float),
    st.sampled_from([0.1, 0.2, 0.3, 1 / 3, 0.05]),
)
bad_amounts = st.sampled_from([0.0, -0.1, math.nan, math.inf, "x", None])


class LedgerMachine(RuleBasedStateMachine):
    @initialize(total=st.sampled_from([1.0, 0.5, 2.0]), delta=st.sampled_from([0.0, 1e-6]))
    def setup(self, total, delta):
        shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None  # avoid fsync latency
        self.dir = tempfile.TemporaryDirectory(dir=shm)
        path = f"{self.dir.name}/l.sqlite"
        self.total, self.total_delta = Decimal(repr(total)), Decimal(repr(delta))
        self.ledgers = [
            Ledger(total, delta, path=path, dataset="f" * 64),
            Ledger(total, delta, path=path, dataset="f" * 64),
            Ledger(total, delta),
        ]
        self.spent, self.spent_delta, self.n = Decimal(0), Decimal(0), 0

    def teardown(self):
        self.dir.cleanup()

    @rule(amount=amounts, use_delta=st.booleans(), which=st.integers(0, 1))
    def charge(self, amount, use_delta, which):
        eps = Decimal(amount) if isinstance(amount, str) else Decimal(repr(amount))
        dlt = Decimal("5E-7") if use_delta else Decimal(0)
        fits = self.spent + eps <= self.total and self.spent_delta + dlt <= self.total_delta
        outcomes = []
        for ledger in (self.ledgers[which], self.ledgers[2]):
            try:
                ledger.charge(amount, float(dlt), what="prop")
                outcomes.append(True)
            except BudgetExceeded as exc:
                assert "remaining" in str(exc)
                outcomes.append(False)
        assert outcomes == [fits, fits]
        if fits:
            self.spent += eps
            self.spent_delta += dlt
            self.n += 1

    @rule(amount=bad_amounts)
    def invalid_charge(self, amount):
        with pytest.raises((ValueError, TypeError)):
            self.ledgers[0].charge(amount)

    @invariant()
    def consistent(self):
        if not hasattr(self, "ledgers"):
            return
        for ledger in self.ledgers:
            assert ledger.spent_exact == (self.spent, self.spent_delta)
            assert ledger.remaining_exact[0] >= 0 and ledger.remaining_exact[1] >= 0
        assert len(self.ledgers[0].history) == len(self.ledgers[2].history) == self.n


TestLedgerMachine = LedgerMachine.TestCase
TestLedgerMachine.settings = settings(
    max_examples=20,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
