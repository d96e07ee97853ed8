"""Sweeps use light settings and say so, show a time estimate, and Cancel stops the running
fit within 2 s (it used to wait for the fit: after a 20,000-iteration Gibbs demo a sweep ran
15 full fits and Cancel took 28.6 s)."""

import threading
import time

import pytest
from browser import choose_long_gibbs_run, expect_text, open_page, open_tab, text_of, wait_for
from playwright.sync_api import expect

from privclust.app import catalogue
from privclust.app.state import Lab
from privclust.app.views.tradeoff import (
    LIGHT,
    TradeoffView,
    _Stoppable,
    light_settings,
    seconds_per_fit,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def heavy_gibbs_lab():
    lab = Lab()
    with lab.quietly():  # no demo run of the heavy settings here
        lab.settings.algorithm = "gibbs"
        lab.settings.algo.param.update(n_iter=20000, n_chains=8)
    return lab


def test_light_settings_are_applied_and_said(ledger_env):
    lab = heavy_gibbs_lab()
    spec = lab.settings.spec
    values, changed = light_settings(spec, lab.settings.values(spec))
    assert (values["n_iter"], values["n_chains"]) == (
        LIGHT["gibbs"]["n_iter"],
        LIGHT["gibbs"]["n_chains"],
    )
    assert changed == {"n_iter": (20000, 200), "n_chains": (8, 2)}
    view = TradeoffView(lab=lab)
    plan = view.plan.object
    assert "light settings" in plan and "iterations 200 instead of 20000" in plan
    assert "chains 2 instead of 8" in plan and "estimated after the first fit" in plan


def test_the_estimate_scales_the_last_demo_fit_down(ledger_env):
    lab = Lab()  # the default demo: a timed result
    spec = lab.settings.spec
    result = lab.result
    assert seconds_per_fit(result, spec, {}) == pytest.approx(max(result.elapsed, 0.01))
    half = {"n_iter": (20, 10)}
    assert seconds_per_fit(result, spec, half) == pytest.approx(max(result.elapsed / 2, 0.01))
    assert "about **" in TradeoffView(lab=lab).plan.object


def test_cancel_stops_a_long_fit_at_its_next_step(ledger_env):
    lab = heavy_gibbs_lab()
    spec = catalogue.by_key("gibbs")
    est = spec.build({**lab.settings.values(spec), "n_iter": 20000, "n_chains": 8}, random_state=0)
    stop = threading.Event()
    errors = []

    def fit():
        try:
            _Stoppable(est, stop).fit(lab.data.dataset.X)
        except Exception as exc:  # noqa: BLE001 -- the test reads it
            errors.append(type(exc).__name__)

    thread = threading.Thread(target=fit)
    thread.start()
    time.sleep(1.0)
    assert thread.is_alive()  # a 20,000-iteration run is under way
    t0 = time.perf_counter()
    stop.set()
    thread.join(10)
    assert not thread.is_alive() and errors == ["SweepCancelled"]
    assert time.perf_counter() - t0 < 2.0


@pytest.mark.ui
def test_sweep_after_a_long_gibbs_demo_is_light_and_cancels_quickly(page, server):
    open_page(page, server)
    choose_long_gibbs_run(page)
    open_tab(page, "Trade-off")
    expect_text(page, ".pc-sweep-plan", "light settings")
    expect_text(page, ".pc-sweep-plan", "iterations 200 instead of 20000")
    # 20 trials (100 light fits): the sweep is still running when Cancel is pressed
    page.get_by_role("slider", name="trials per ε").first.press("End")
    expect_text(page, ".pc-sweep-plan", "100 fits")
    page.get_by_role("button", name="Run sweep").click()
    wait_for(
        page,
        lambda: "left" in text_of(page, ".pc-sweep-status"),
        timeout=120,
        what="a time estimate while the sweep runs",
    )
    page.get_by_role("button", name="Cancel").click()
    expect_text(page, ".pc-sweep-status", "Cancelled", timeout=30_000)
    status = text_of(page, ".pc-sweep-status")
    seconds = float(status.split("stopped ")[1].split(" s")[0])
    assert seconds < 2.0, status
    expect(page.get_by_role("button", name="Run sweep")).to_be_enabled()
