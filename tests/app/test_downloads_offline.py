"""The downloaded HTML plot is self-contained: opened from disk with no network, it draws the
plot and asks no host (not even a relative static/ file) for anything."""

import pytest

from privclust.app.export import plot_html
from privclust.app.state import Lab
from privclust.app.views import ClustersView

pytestmark = pytest.mark.ui


def test_downloaded_plot_renders_offline_with_no_request(page, tmp_path, ledger_env):
    lab = Lab()  # demo data: the page's default result
    path = tmp_path / "privclust_clusters.html"
    path.write_bytes(plot_html(ClustersView(lab=lab).figure(analyst=True)).getvalue())
    requests = []

    def refuse(route):
        if route.request.url != path.as_uri():
            requests.append(route.request.url)
            return route.abort()
        return route.continue_()

    page.route("**/*", refuse)
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_function(
        "() => window.Bokeh && Bokeh.documents.length > 0 && "
        "document.querySelector('.bk-Figure, .bk-GridPlot, .bk-Column')",
        timeout=30_000,
    )
    page.wait_for_timeout(500)
    assert requests == [] and errors == []
