"""The server's warm-up (app/server/warmup.py, ``panel serve --setup``): what it leaves the
process with for its sessions."""

import gc

from bokeh.document import Document
from bokeh.settings import settings

from privclust.app.server import sampler, warmup


def test_the_warm_up_checks_one_whole_page_and_sessions_skip_bokeh_s_checks(
    ledger_env, monkeypatch
):
    """Bokeh's document checks run once, on the warm-up's page holding every view, and not again
    for each session's page (the same kinds of models; ~5 % of a new page's server work)."""
    checked = []
    real = Document.validate
    monkeypatch.setattr(Document, "validate", lambda doc: (checked.append(doc), real(doc))[1])
    monkeypatch.setattr(sampler, "start_sampler_server", lambda: None)
    monkeypatch.setattr(gc, "freeze", lambda: None)  # the test process's objects stay collectable
    settings.perform_document_validation.unset_value()
    assert settings.perform_document_validation()
    try:
        warmup.warm_up()
        assert not settings.perform_document_validation()
        (doc,) = checked
        names = {type(m).__name__ for m in doc.models}
        assert {"Slider", "Tabs", "GlyphRenderer"} <= names and len(list(doc.models)) > 300
    finally:
        settings.perform_document_validation.unset_value()


def test_holoviews_is_loaded_once_per_server_process_and_at_every_notebook_page(
    ledger_env, monkeypatch
):
    """A notebook's page loads HoloViews' extension each time (it injects the notebook's
    JavaScript); a server session's page does not once the process has loaded it (the warm-up's
    page), since there it only rebuilt the same option builders for every new page."""
    import holoviews as hv

    from privclust.app import page
    from privclust.app.server import session_hooks
    from privclust.app.state import Lab

    calls = []
    monkeypatch.setattr(hv, "extension", lambda *a, **k: calls.append(a))
    page.create_app(lab=Lab())
    assert calls == [("bokeh",)]
    monkeypatch.setattr(session_hooks, "in_session", lambda: True)
    monkeypatch.setattr(page, "_lazy_tabs", lambda *a: None)  # no session document to watch
    assert "bokeh" in hv.Store.renderers
    page.create_app(lab=Lab())
    assert calls == [("bokeh",)]


def test_only_num_procs_workers_take_one_waiting_connection_at_a_time(monkeypatch):
    """``--num-procs`` workers share one listening socket: each takes one waiting connection at
    a time (a class's pages spread over them) and ends with the master. A single-process server
    keeps tornado's own accept loop (it has nothing to balance)."""
    from tornado import netutil, process

    from privclust.app.server import parent_watch

    watched = []
    monkeypatch.setattr(parent_watch, "die_with_parent", watched.append)
    monkeypatch.setattr(netutil, "_DEFAULT_BACKLOG", 128)
    monkeypatch.setattr(process, "task_id", lambda: None)
    assert not warmup.worker_setup()
    assert netutil._DEFAULT_BACKLOG == 128 and not watched
    monkeypatch.setattr(process, "task_id", lambda: 1)
    assert warmup.worker_setup()
    assert netutil._DEFAULT_BACKLOG == 1 and len(watched) == 1
