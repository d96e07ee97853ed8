"""The overrides of Panel internals (privclust.app.server.panel_compat) still have something to
override: each private member they replace exists with the signature they were written for, and
the installed Panel is the version they were written for (an upgrade fails here first)."""
import inspect

import panel as pn
from panel.io import resources

from privclust.app.server import panel_compat


def test_panel_is_the_version_the_overrides_were_written_for():
    assert pn.__version__.startswith(panel_compat.PANEL_VERSION + "."), (
        f"panel {pn.__version__}: re-check every override in privclust/app/server/panel_compat.py "
        f"(written for {panel_compat.PANEL_VERSION}.x), then update PANEL_VERSION")


def test_the_overridden_members_exist_with_their_signatures():
    assert list(inspect.signature(pn.widgets.FileDropper._process_event).parameters) == [
        "self", "event"]
    assert "_file_buffer" in inspect.getsource(pn.widgets.FileDropper)
    assert list(inspect.signature(pn.pane.Bokeh._track_overrides).parameters) == [
        "self", "events"]
    assert list(inspect.signature(resources.patch_stylesheet).parameters) == [
        "stylesheet", "dist_url"]
    assert hasattr(resources, "CDN_DIST") and callable(resources.use_cdn)


def test_keep_stylesheets_local_rewrites_no_url_to_the_cdn():
    panel_compat.keep_stylesheets_local()
    panel_compat.keep_stylesheets_local()       # idempotent
    from panel import reactive
    assert resources.patch_stylesheet is reactive.patch_stylesheet
    assert resources.patch_stylesheet._privclust_local


def test_the_notebook_overrides_have_their_targets():
    import panel as pn
    assert "lato" in pn.template.EditableTemplate._resources["css"] or \
        "lato" not in str(pn.template.EditableTemplate._resources)   # already removed here
    assert hasattr(resources, "DIST_DIR") and hasattr(resources, "LOCAL_DIST")
