"""The run controller of one session: demo runs, releases through the Curator, the data owner's
NOT PRIVATE runs, and what the page may show of them.

The page is a client of the release protocol: on private data every release goes through
``privclust.core.Curator`` (which alone refuses, seeds, charges and decides what leaves), the
page holds the returned ``Release`` objects, and non-private algorithms run only in the data
owner view through the Curator's owner path, marked NOT PRIVATE. One :class:`Lab` per browser
session holds everything user-derived; nothing is kept in module globals or ``pn.state.cache``.
"""

import contextlib
import logging
import re
import threading
import time
import traceback

import numpy as np
import param

from .. import catalogue
from . import demo_cache as demo_cache_module
from . import releases
from .box_faces import face_warning
from .data import PRESETS, DataModel
from .ledger import LedgerModel, relation_note
from .results import Request, RunResult, random_state_for
from .settings import SettingsModel

log = logging.getLogger(__name__)


class Lab(param.Parameterized):
    """The run controller of one session (two modes, demo and private; private runs follow the
    release protocol of :class:`privclust.core.Curator`).

    Demo data (``dataset.public``): every settings change re-runs (through ``schedule``, which
    the page debounces), nothing is charged, seeds apply. Private data: nothing runs until
    Release, and a release goes only through the dataset's :class:`~privclust.core.Curator`
    (it refuses what is not private, ignores seeds, charges the ledger exactly before it fits,
    answers identical requests from its store at no charge and returns a frozen Release).
    Non-private algorithms run on private data only in the data owner view, through the
    Curator's owner path, marked NOT PRIVATE.
    """

    mode = param.Selector(default="demo", objects=["demo", "private"], constant=True)
    result = param.Parameter(default=None)
    message = param.String(default="", doc="plain text shown in the status alert")
    message_kind = param.Selector(default="info", objects=["info", "success", "warning", "danger"])
    running = param.Boolean(False)
    stale = param.Boolean(False, doc="private mode: settings changed since the last release")
    release = param.Event(label="Release")
    n_runs = param.Integer(0, doc="estimator fits started by this session")
    settings_changed = param.Event(doc="any setting, an algorithm parameter included, changed")

    def __init__(
        self,
        data=None,
        settings=None,
        ledger=None,
        specs=None,
        schedule=None,
        worker=None,
        ledger_path=None,
        demo_cache=None,
        fit_stepping=None,
        **params,
    ):
        super().__init__(**params)
        self.data = data or DataModel()
        self.settings = settings or SettingsModel(specs=specs)
        self.ledger = ledger or LedgerModel(path=ledger_path)
        # schedule(fn): how a demo re-run is requested (the page debounces it and runs it off the
        # server's IO loop); worker(fn): where a Release runs (the page: the session's worker
        # thread). Both default to running inline, which is what model tests want.
        self.schedule = schedule or (lambda fn: fn())
        self.worker = worker or (lambda fn: fn())
        # demo results only (public data; private ones live in the Curator's store): the served
        # page shares one cache between its sessions (demo_cache.SHARED), else this Lab's own
        self._cache = demo_cache if demo_cache is not None else demo_cache_module.DemoCache()
        # fit_stepping(estimator, X, superseded) -> bool: how a demo fit of a stepping estimator
        # (the Gibbs sampler) runs; inline by default, in a child process in a server
        self._fit_stepping = fit_stepping or fit_steps
        self._quiet = False
        self._generation = 0  # bumped by every new demo request: a running demo fit stops
        # held while a demo result is shown: a fit of an older request that finishes on the
        # worker while a newer one is shown from the cache (IO thread) is never shown after it
        self._showing = threading.RLock()
        self._failure_detail = None  # the withheld message of a failure on private data
        self._notice = ""  # said with the next demo result (e.g. why the demo data changed)
        self.settings.param.watch(self._on_owner_view, "owner_view")
        self.settings.param.watch(self._on_task, "task")  # registered first: before the re-run
        self.data.param.watch(self._on_dataset, ["dataset"])
        self.settings.param.watch(
            self._on_settings,
            [p for p in self.settings.param if p not in ("name", "owner_view", "private_mode")],
        )
        self._algo_watcher = None
        self._watch_algo()
        self._on_dataset()

    # ---- reactions --------------------------------------------------------------------------
    def _watch_algo(self):
        if self._algo_watcher is not None:
            self._algo_watcher[0].param.unwatch(self._algo_watcher[1])
            self._algo_watcher = None
        algo = self.settings.algo
        if algo is not None:
            names = [p for p in algo.param if p != "name"]
            self._algo_watcher = (algo, algo.param.watch(self._on_settings, names))

    def _on_dataset(self, *events):
        ds = self.data.dataset
        private = ds is not None and not ds.public
        with param.edit_constant(self):
            self.mode = "private" if private else "demo"
        self.ledger.open(ds, trusted=catalogue.private_classes(self.settings.specs))
        self.cancel_demo()
        self.result = None
        with self.quietly():
            self.settings.param.update(
                owner_view=False if private else self.settings.owner_view, private_mode=private
            )
            if ds is not None:
                self.settings.adapt_to(ds, self.data.suggested_task)
        self._watch_algo()
        if private:
            # the PRIVATE banner says that nothing runs until Release and what it charges;
            # the status stays empty rather than a second box saying the same
            self.say("")
            self.stale = True
        else:
            self.request_run()

    def _on_task(self, event):
        """Demo data follow the task: a preset made for another task (e.g. real-valued
        subspace data for co-clustering, which needs counts) is switched to the task's own,
        with a message, before anything runs."""
        if self._quiet or self.data.source != "preset" or self.data.suggested_task == event.new:
            return
        preset = next(k for k, (_, task) in PRESETS.items() if task == event.new)
        self._notice = (
            f"Switched the demo data to “{PRESETS[preset][0]}”: the "
            f"{catalogue.TASKS[event.new]} task needs data of its kind. "
        )
        self.data.preset = preset

    @contextlib.contextmanager
    def quietly(self):
        """Settings changed inside this block start no demo run and mark nothing stale."""
        self._quiet = True
        try:
            yield
        finally:
            self._quiet = False

    def _on_settings(self, *events):
        if any(e.name == "algo" for e in events):
            self._watch_algo()
        self.param.trigger("settings_changed")
        if self._quiet:
            return
        if self.mode == "demo":
            self.request_run()
        else:
            self.stale = True

    @param.depends("release", watch=True)
    def _on_release(self):
        request = self.capture()  # once, now: the job never re-reads the page's state

        def job():  # runs on the session's worker
            if request is None or self.data.dataset is not request.dataset:
                self.say(
                    "The dataset changed before the release started: nothing was run or charged.",
                    "warning",
                )
                return None
            return self.do_release(request)

        self.worker(job)

    # ---- requests ---------------------------------------------------------------------------
    def capture(self):
        """The current dataset, its Curator and the settings values, read once (None when no
        dataset or algorithm is chosen)."""
        ds, spec = self.data.dataset, self.settings.spec
        if ds is None or spec is None:
            return None
        private = not ds.public
        curator = self.ledger.curator if private and self.ledger.dataset is ds else None
        return Request(
            dataset=ds,
            curator=curator,
            spec=spec,
            settings=self.settings.values(spec),
            owner_view=bool(self.settings.owner_view) and private,
            seed=int(self.settings.seed),
        )

    def request_run(self):
        """Demo mode: (re-)run through the debouncing scheduler, or at once when the shared
        demo cache already holds the result (no fit: a class moving one slider asks for the
        same results, and a new page's first result is then part of the page itself)."""
        with self._showing:
            self.cancel_demo()
            if self.mode != "demo" or self._show_cached() is not None:
                return
        self.schedule(self.run_demo)

    def _show_cached(self):
        """Show the cached demo result of the current settings; None when there is none."""
        request = self.capture()
        if request is None or not request.dataset.public:
            return None
        if self.data.suggested_task not in (None, request.spec.task):
            return None
        key = _demo_key(request.dataset, request.spec, request.settings, request.seed)
        if self._shown(key, request.dataset):
            return self.result
        cached = self._cache.get(key)
        if cached is None:
            return None
        self.result = demo_cache_module.for_session(cached, request.dataset)
        self._say_demo(self.result)
        return self.result

    def cancel_demo(self):
        """Stop a demo fit that is still running (one with ``iter_fit``, e.g. the Gibbs sampler,
        stops at its next record); a newer request or other data supersedes it."""
        self._generation += 1

    def request_key(self, spec=None):
        """The demo cache key of the current settings (public data only)."""
        spec = spec or self.settings.spec
        return _demo_key(self.data.dataset, spec, self.settings.values(spec), self.settings.seed)

    def run_demo(self):
        """Fit on demo data; never touches a ledger, never runs on private data."""
        request = self.capture()
        if request is None or not request.dataset.public:
            return None
        if self.data.suggested_task not in (None, request.spec.task):
            return None  # a preset of another task: _on_task is switching it
        return self._fit_demo(request)

    def do_release(self, request=None):
        """Release ``request`` (default: captured now). Private data: through the Curator only;
        demo data: a demo run."""
        request = request or self.capture()
        if request is None:
            self.say("Choose a dataset and an algorithm first.", "warning")
            return None
        if request.dataset.public:
            return self._fit_demo(request)
        if request.curator is None:
            self.say(
                f"Refused: {self.ledger.error or 'this dataset has no budget ledger'}. "
                "Nothing was run or charged.",
                "danger",
            )
            return None
        return self._release(request)

    def _release(self, request):
        """A private release through the page's release service: the estimator is built once
        and the Curator prepares it once (one clone, one plan); the outcome's words come from
        :func:`.releases.describe`."""
        spec, values, curator = request.spec, request.settings, request.curator
        self.running = True
        t0 = time.perf_counter()
        try:
            # no seed and no ledger: the Curator draws fresh entropy and charges its ledger
            try:
                est = spec.build(values, random_state=None, ledger=None)
            except (ValueError, TypeError) as exc:
                outcome = releases.Outcome(releases.REFUSED, reason=str(exc))
            else:
                outcome = releases.release(curator, est)
        finally:
            self.running = False
            self.ledger.refresh()
        if outcome.not_private and request.owner_view:
            return self._owner_run(request)
        if outcome.not_private:
            self.say(
                f"Refused: {spec.label} with these settings is not private, so it is not "
                "offered on private data (only the data owner view runs it, marked NOT "
                "PRIVATE). Nothing was run or charged.",
                "danger",
            )
            return None
        text, kind = releases.describe(outcome, spec.label, self.ledger, request.owner_view)
        if not outcome.ok:
            self.say(text, kind)
            if outcome.status == releases.FAILED:
                self.result = None
                if not request.owner_view:
                    self._failure_detail, _ = releases.describe(
                        outcome, spec.label, self.ledger, True
                    )
            return None
        release = outcome.release
        if not release.from_store:
            self.n_runs += 1
        result = RunResult(
            key=release.key,
            spec=spec,
            settings=values,
            estimator=release,
            dataset=request.dataset,
            elapsed=time.perf_counter() - t0,
            private_mode=True,
            from_cache=release.from_store,
        )
        if request.dataset is not self.data.dataset:
            self.say(
                "The dataset changed while the release ran: it is stored with the other "
                "releases of its dataset (the ledger panel lists them).",
                "warning",
            )
            return None
        self.param.update(result=result, stale=False)
        face = self.face_note(result)
        self.say(text + face, "warning" if face and kind == "success" else kind)
        return result

    def _owner_run(self, request):
        """Data owner view: a non-private algorithm on the raw data (Curator.owner_fit),
        NOT PRIVATE, never stored, listed or downloaded as a release."""
        spec, values = request.spec, request.settings
        self.running = True
        t0 = time.perf_counter()
        try:
            est = spec.build(values, random_state=request.random_state, ledger=None)
            fitted = request.curator.owner_fit(est).value
            self.n_runs += 1
        except Exception as exc:  # noqa: BLE001 -- the owner may read the message
            log.warning("owner run failed: %s", traceback.format_exc(limit=3))
            self.say(
                f"The run failed ({type(exc).__name__}): {exc} (data owner view: not private)",
                "danger",
            )
            return None
        finally:
            self.running = False
        result = RunResult(
            key=None,
            spec=spec,
            settings=values,
            estimator=fitted,
            dataset=request.dataset,
            elapsed=time.perf_counter() - t0,
            private_mode=True,
            owner_only=True,
        )
        if request.dataset is not self.data.dataset or not self.settings.owner_view:
            return None
        self.param.update(result=result, stale=False)
        self.say(
            f"{spec.label} ran on the raw data: NOT PRIVATE (data owner view only; not a "
            "release, not downloadable). Nothing was charged.",
            "warning",
        )
        return result

    def open_release(self, release_id):
        """Show a stored release of the current private dataset again (no charge)."""
        curator = self.ledger.curator
        if curator is None:
            return None
        try:
            release = curator.get_release(int(release_id))
        except (KeyError, ValueError, TypeError):
            self.say("No such release for this dataset.", "warning")
            return None
        spec = catalogue.for_estimator(release.estimator, self.settings.specs)
        if spec is None:
            self.say(
                f"Release #{release.id} ({release.estimator}) is not a clustering result: "
                "the ledger panel lists it.",
                "info",
            )
            return None
        settings = {k: v for k, v in release.params.items() if not isinstance(v, dict)}
        result = RunResult(
            key=release.key,
            spec=spec,
            settings=settings,
            estimator=release,
            dataset=self.data.dataset,
            elapsed=0.0,
            private_mode=True,
            from_cache=True,
        )
        self.param.update(result=result)
        self.say(
            f"Re-opened release #{release.id} ({release.time:%Y-%m-%d %H:%M} UTC): "
            "nothing was charged.",
            "info",
        )
        return result

    def _fit_demo(self, request):
        """Fit on public demo data (seeded by the page seed; no ledger)."""
        spec, ds, values = request.spec, request.dataset, request.settings
        if not ds.public:
            return None  # never: private data goes through the Curator only
        token = self._generation
        key = _demo_key(ds, spec, values, request.seed)
        result = self._cache.get(key)
        if result is None:
            # computed once for every session asking the same now (they wait for this one)
            result, _ = self._cache.get_or_compute(
                key, ds, lambda: self._compute_demo(request, key)
            )
            if result is None:
                return None
        result = demo_cache_module.for_session(result, ds)
        with self._showing:
            if ds is not self.data.dataset:  # the data changed while this ran (worker thread)
                return None
            if self._generation != token:
                return None  # a newer request came (and may already show its cached result)
            if self._shown(key, ds):
                return self.result
            self.param.update(result=result, stale=False)
            self._say_demo(result)
        return result

    def _shown(self, key, dataset):
        """Is the result now shown this request's? Then it is not shown again: that would only
        re-say its status and drop the notice said with it (a task switch makes several
        requests; the debounced run of an earlier one found the result already shown)."""
        shown = self.result
        return shown is not None and shown.key == key and shown.dataset is dataset

    def _compute_demo(self, request, key):
        """The fit of a demo request (None when superseded or failed, with the failure said)."""
        spec, ds, values = request.spec, request.dataset, request.settings
        self.running = True
        t0 = time.perf_counter()
        try:
            est = spec.build(values, random_state=request.random_state, ledger=None)
            self.n_runs += 1
            if hasattr(est, "iter_fit"):
                token = self._generation
                if not self._fit_stepping(est, ds.X, lambda: self._generation != token):
                    return None  # superseded: a newer request will show its result
            else:
                est.fit(ds.X)
        except Exception as exc:  # noqa: BLE001 -- logged, and told without a traceback
            log.warning("run failed: %s", traceback.format_exc(limit=3))
            self.say(self.failure_text(exc, False), "danger")
            self.result = None
            return None
        finally:
            self.running = False
        return RunResult(
            key=key,
            spec=spec,
            settings=values,
            estimator=est,
            dataset=ds,
            elapsed=time.perf_counter() - t0,
            private_mode=False,
        )

    def _say_demo(self, result):
        """The status of a demo result (fresh or from the cache): a notice and its warnings,
        or nothing (an empty status is hidden): the demo banner already says that demo data
        spend nothing, and two stacked boxes saying it pushed the plots down."""
        notice, self._notice = self._notice, ""
        faces = self.face_note(result)
        warned = bool(faces or (result.guarantee is not None and result.guarantee.warnings))
        self.say(
            (notice + _warnings_text(result.guarantee) + faces).strip(),
            "warning" if warned else "info",
        )

    def face_note(self, result):
        """The free warning about released centres on the box's faces (see
        :mod:`.box_faces`), with the columns' names; "" when there is none."""
        return face_warning(result, self.settings.column_name)

    def baseline(self, result=None):
        """The non-private baseline of a result (computed once, kept on the result); None
        where raw data may not be shown (see :meth:`baseline_estimator`)."""
        result = result or self.result
        if result is None or result.owner_only:
            return None
        if result.baseline is None:
            result.baseline = self.baseline_estimator(result.dataset)
            result.baseline_spec = self.settings.baseline_spec
        return result.baseline

    def baseline_estimator(self, dataset):
        """The task's non-private baseline fitted on ``dataset``: on demo data directly (page
        seed), on private data only in the data owner view, through the Curator's owner path
        (NOT PRIVATE, fresh randomness); None otherwise or when it fails."""
        bspec = self.settings.baseline_spec
        if bspec is None or not self.raw_allowed(dataset):
            return None
        values = self.settings.values(bspec)
        try:
            est = bspec.build(values, random_state=random_state_for(dataset, self.settings.seed))
            if dataset.public:
                # the same for every ε and every session: fitted once per server (it was two
                # thirds of the sessions' worker time while a class moved the ε slider)
                key = ("baseline", *_demo_key(dataset, bspec, values, self.settings.seed))
                return self._cache.get_or_compute(key, dataset, lambda: est.fit(dataset.X))[0]
            if self.ledger.curator is None or self.ledger.dataset is not dataset:
                return None
            return self.ledger.curator.owner_fit(est).value
        except Exception:  # noqa: BLE001 -- a missing baseline must not break the page
            log.warning("baseline failed: %s", traceback.format_exc(limit=3))
            return None

    def kind(self, spec=None, values=None):
        """The privacy kind of ``spec`` with ``values`` (default: the current settings) on the
        loaded data's shape, from the estimator's plan; ValueError when the settings are
        invalid for it."""
        spec = spec or self.settings.spec
        values = self.settings.values(spec) if values is None else values
        ds = self.data.dataset
        shape = (ds.n_samples, ds.n_features) if ds is not None else catalogue.NOMINAL_SHAPE
        return spec.kind(values, shape)

    def cost_note(self, spec=None):
        """What a release of the current settings would charge, in plain words, before it is
        asked for ("" on demo data): the Curator's exact cost in the ledger's unit and what
        remains, or why it would be refused. Reads only parameters and the ledger."""
        spec = spec or self.settings.spec
        if self.mode != "private" or spec is None or self.ledger.curator is None:
            return ""
        try:
            est = spec.build(self.settings.values(spec), random_state=None, ledger=None)
        except (ValueError, TypeError) as exc:
            return f"Refused with these settings: {exc}"
        prepared = releases.prepare(self.ledger.curator, est)
        if isinstance(prepared, releases.Outcome):
            if prepared.not_private:
                return "Not private with these settings: Release refuses it on private data."
            return f"Refused with these settings: {prepared.reason}"
        eps, delta = self.ledger.curator.cost(prepared)
        left = self.ledger.remaining
        if (eps, delta) == (0.0, 0.0):
            return "Identical to a stored release: answered from the store, nothing is charged."
        note = relation_note(
            prepared.plan.neighbouring, prepared.plan.epsilon, eps, self.ledger.unit
        )
        text = (
            f"Charges ε = {eps:g}"
            + (f", δ = {delta:g}" if delta else "")
            + (f" ({note})" if note else "")
            + f"; ε = {left[0]:g} remain."
        )
        fits = releases.budget_check(self.ledger.curator, prepared) is None
        return text if fits else text + " Not enough budget: it would be refused."

    def suggest_bounds(self):
        """Private data: spend ``settings.bounds_epsilon`` on a noisy histogram of each column
        over power-of-two buckets (GeometricBounds through the Curator: charged and recorded
        like any release) and set the public box per column. Nothing is spent when the
        forecast (public facts only) says the result would be unreliable, unless
        ``settings.bounds_anyway``. Returns the Release or None."""
        from privclust.core import GeometricBounds
        from privclust.core.bounds.geometric_bounds import exponents_for_range

        s, curator = self.settings, self.ledger.curator
        if self.mode != "private" or curator is None:
            self.say(
                "Suggested bounds are for private data: on demo data the generator's box "
                "is public and already set.",
                "info",
            )
            return None
        try:
            est = GeometricBounds(
                epsilon=s.bounds_epsilon,
                neighbouring=self.ledger.unit,
                exponents=exponents_for_range(s.bounds_largest, s.bounds_smallest),
            )
            forecast = self.bounds_forecast(est)
        except ValueError as exc:
            self.say(f"Refused before anything ran: {exc}. Nothing was run or charged.", "danger")
            return None
        if forecast.reliable is False and not s.bounds_anyway:
            self.say(
                "Nothing was spent: " + forecast.message() + " (Tick “suggest even when "
                "the forecast says unreliable” to spend anyway.)",
                "warning",
            )
            return None
        try:
            outcome = releases.release(curator, est)
        finally:
            self.ledger.refresh()
        if not outcome.ok:
            self.say(
                *releases.describe(outcome, "Suggest bounds", self.ledger, self.settings.owner_view)
            )
            return None
        release = outcome.release
        lower, upper = np.asarray(release.lower_), np.asarray(release.upper_)
        with self.quietly():
            s.set_feature_box(lower, upper)
        self.stale = True
        missed = [s.column_name(j) for j in np.flatnonzero(~np.asarray(release.found_))]
        text = (
            f"Suggested a public box per column from a noisy power-of-two histogram "
            f"(release #{release.id}, charged ε = {release.cost[0]:g}); it is now set in "
            "the sidebar's table."
        )
        if missed:
            self.say(
                text + f" Not found (no bucket stood out of the noise), so given the whole "
                f"search range: {', '.join(missed[:8])}{', ...' if len(missed) > 8 else ''}"
                ". Type a box for them from what you know.",
                "warning",
            )
        else:
            self.say(text, "success")
        return release

    def bounds_forecast(self, est=None):
        """What Suggest bounds can achieve on the loaded data's public shape, before anything
        is spent (:func:`privclust.core.forecast_geometric_bounds`); None without data."""
        from privclust.core import GeometricBounds
        from privclust.core.bounds.geometric_bounds import exponents_for_range

        ds, s = self.data.dataset, self.settings
        if ds is None:
            return None
        if est is None:
            est = GeometricBounds(
                epsilon=s.bounds_epsilon,
                neighbouring=self.ledger.unit,
                exponents=exponents_for_range(s.bounds_largest, s.bounds_smallest),
            )
        return est.forecast(ds.n_samples, ds.n_features)

    def outside_share(self):
        """Data owner view only: the share of records outside the current public box (NOT
        PRIVATE: an exact count of the raw data), else None."""
        from privclust.core.data import outside_share

        ds, s = self.data.dataset, self.settings
        if ds is None or ds.public or not self.raw_allowed(ds) or self.ledger.curator is None:
            return None
        return self.ledger.curator.owner_evaluate(
            lambda d: outside_share(d, *s.box_arrays(d.n_features))
        ).value

    def show(self, result, text, kind="success"):
        """Show ``result`` (a demo result is also cached) with a status message; a result of
        another dataset than the loaded one is not shown."""
        if not result.private_mode:
            self._cache.put(result.key, result)
        if result.dataset is not self.data.dataset:
            return False
        self.param.update(result=result, stale=False)
        self.say(text, kind)
        return True

    def failure_text(self, exc, private, about_data=True, charged=True):
        """The message shown for a failed run. A failure while reading private data may
        describe the records in its message (a count, a value), so outside the data owner view
        only its type is shown; errors in the settings (``about_data=False``: before any data
        is read) are always shown in full. ``charged``: whether the budget was spent."""
        kind = type(exc).__name__
        if private and about_data and not self.settings.owner_view:
            text = (
                f"The run failed ({kind}). Its message may describe the private data: the "
                "data owner view (not private) shows it."
            )
        elif isinstance(exc, (ValueError, TypeError)):
            text = f"The run failed ({kind}): {exc}"
        else:
            text = f"The run failed ({kind})."
        if private:
            text += (
                " The budget charged for it stays spent."
                if charged
                else " Nothing was run or charged."
            )
        return text

    def _on_owner_view(self, event):
        """Switching the data owner view on shows the message of a failure withheld above;
        switching it off hides a NOT PRIVATE result."""
        if event.new and self._failure_detail:
            self.say(self._failure_detail + " (data owner view: not private)", "danger")
        if not event.new and self.result is not None and self.result.owner_only:
            self.result = None
            self.say("Data owner view off: the NOT PRIVATE result is hidden.", "info")

    def report_failure(self):
        """A job of this session failed outside the models' own error handling (logged on the
        server): say so without its details, and show the ledger as it now is (a release may
        have been charged before the failure)."""
        self.running = False
        try:
            self.ledger.refresh()
        finally:
            self.say(
                "Something failed on the server while this ran (the operator's log has the "
                "details). Anything charged is listed in the ledger panel, where a stored "
                "release re-opens free of charge.",
                "danger",
            )

    def say(self, text, kind="info"):
        self._failure_detail = None
        self.param.update(message=text, message_kind=kind)

    def raw_allowed(self, dataset):
        """May the page show things computed on the raw records of ``dataset``? Public (demo)
        data: yes. Private data: only in the data owner view, and only for the dataset now
        loaded (a run that finished after the data changed never unlocks raw displays); never
        for a large data set on Dask (its records are not loaded, in the page or the server)."""
        if dataset is None or not hasattr(dataset, "X"):  # a large data set stays on Dask
            return False
        if getattr(dataset, "public", False):
            return True
        return bool(self.settings.owner_view) and dataset is self.data.dataset

    @property
    def show_raw(self):
        """May the page show things computed on the raw data of the current result (or of the
        loaded dataset when there is no result)? See :meth:`raw_allowed`."""
        result = self.result
        return self.raw_allowed(result.dataset if result is not None else self.data.dataset)


# internal names that warnings may quote, as the page says them
READABLE = {
    "eval_row_labels_": "the evaluation row labels",
    "ckm": "compressive k-means",
    "dplloyd": "DPLloyd",
    "dplloyd_improved": "DPLloyd (improved init)",
}
_READABLE = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, READABLE), key=len, reverse=True)) + r")\b"
)


def readable(text):
    """``text`` with internal names (attributes, planner keys) replaced by readable ones."""
    return _READABLE.sub(lambda m: READABLE[m.group(1)], str(text))


def _warnings_text(guarantee):
    """The guarantee's warnings (e.g. noise of the order of the output), for the status line
    rather than only the Report tab: one paragraph each, with readable names."""
    warnings = getattr(guarantee, "warnings", None) or ()
    return "".join(f"\n\nWarning: {readable(w)}" for w in warnings)


def _demo_key(ds, spec, values, seed):
    return (
        ds.fingerprint if ds is not None else None,
        spec.key,
        tuple(sorted((k, _hashable(v)) for k, v in values.items())),
        seed,
    )


def _hashable(v):
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, float):
        return repr(v)
    return v


def fit_steps(estimator, X, superseded):
    """A stepping demo fit inline: ``estimator.iter_fit(X)`` record by record; False as soon as
    ``superseded()`` (a newer request will show its result), else True."""
    steps = estimator.iter_fit(X)
    try:
        for _ in steps:
            if superseded():
                return False
    finally:
        steps.close()
    return True
