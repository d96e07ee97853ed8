"""The top banner: demo data (nothing is spent) or PRIVATE data with its budget."""
import panel as pn
import param

from ..safety import escape
from . import teaching
from .common import View


class Banner(View):
    """The top banner: demo (nothing spent) or PRIVATE with the budget."""

    @param.depends("lab.mode", "lab.ledger.spent", "lab.data.dataset", "lab.settings.owner_view")
    def _banner(self):
        lab = self.lab
        if lab.mode == "demo":
            return pn.pane.Alert(teaching.DEMO_BANNER, alert_type="success",
                                 css_classes=["pc-banner", "pc-demo"], sizing_mode="stretch_width")
        total, spent, left = lab.ledger.total, lab.ledger.spent, lab.ledger.remaining
        name = escape(getattr(lab.data.dataset, "name", ""))
        text = teaching.PRIVATE_BANNER.format(name=f": {name}" if name else "", spent=spent[0],
                                              total=total[0], remaining=left[0])
        items = [pn.pane.Alert(text, alert_type="danger", css_classes=["pc-banner", "pc-private"],
                               sizing_mode="stretch_width")]
        if lab.settings.owner_view:
            items.append(pn.pane.Alert(teaching.OWNER_WARNING, alert_type="warning",
                                       sizing_mode="stretch_width"))
        return pn.Column(*items, sizing_mode="stretch_width")

    def __panel__(self):
        return pn.panel(self._banner, sizing_mode="stretch_width")
