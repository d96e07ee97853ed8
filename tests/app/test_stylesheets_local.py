"""No stylesheet of the served page points at Panel's CDN, even in a document that never went
through the HTML handler (what Bokeh builds for a websocket whose session was discarded, the
cause of the CDN requests seen under load)."""

import panel as pn
from bokeh.document import Document
from bokeh.models import ImportedStyleSheet
from panel.io import resources

from privclust.app.server import panel_compat


def _urls(doc):
    return [m.url for m in doc.models if isinstance(m, ImportedStyleSheet)]


def test_a_document_without_a_dist_url_gets_local_stylesheets():
    panel_compat.keep_stylesheets_local()
    doc = Document()  # no dist_url: as for a session built for a late socket
    assert "dist_url" not in doc._template_variables
    page = pn.template.BootstrapTemplate(
        main=[pn.Column(pn.pane.Markdown("text"), pn.widgets.Button(label="b"))]
    )
    page.server_doc(doc)
    urls = _urls(doc)
    assert urls and not [u for u in urls if u.startswith(resources.CDN_DIST)], urls
    assert all(u.startswith(resources.LOCAL_DIST) for u in urls if "/css/" in u), urls


def test_a_rewrite_asked_for_with_the_cdn_goes_to_the_local_dist():
    panel_compat.keep_stylesheets_local()
    sheet = ImportedStyleSheet(url=f"{resources.CDN_DIST}css/markdown.css")
    resources.patch_stylesheet(sheet, resources.CDN_DIST)
    assert sheet.url.startswith(resources.LOCAL_DIST + "css/markdown.css")
