"""The top of the main area: demo data (nothing is spent) or PRIVATE data with its budget, and
the status of the last action (a refusal, an error, a release), where the user is looking."""

import panel as pn
import param

from ..safety import escape
from . import teaching
from .common import View


class Banner(View):
    """The top banner: demo (nothing spent) or PRIVATE with the budget; below it the status."""

    def __init__(self, **params):
        super().__init__(**params)
        self.status = pn.pane.Alert(
            "", visible=False, css_classes=["pc-status"], sizing_mode="stretch_width"
        )
        self.lab.param.watch(self._status, ["message", "message_kind"])
        self._status()

    def _status(self, *events):
        lab = self.lab
        self.status.param.update(
            object=escape(lab.message), visible=bool(lab.message), alert_type=lab.message_kind
        )

    @param.depends("lab.mode", "lab.ledger.spent", "lab.data.dataset", "lab.settings.owner_view")
    def _banner(self):
        lab = self.lab
        if lab.mode == "demo":
            return pn.pane.Alert(
                teaching.DEMO_BANNER,
                alert_type="success",
                css_classes=["pc-banner", "pc-demo"],
                sizing_mode="stretch_width",
            )
        total, spent, left = lab.ledger.total, lab.ledger.spent, lab.ledger.remaining
        name = escape(getattr(lab.data.dataset, "name", ""))
        text = teaching.PRIVATE_BANNER.format(
            name=f": {name}" if name else "", spent=spent[0], total=total[0], remaining=left[0]
        )
        items = [
            pn.pane.Alert(
                text,
                alert_type="danger",
                css_classes=["pc-banner", "pc-private"],
                sizing_mode="stretch_width",
            )
        ]
        if lab.settings.owner_view:
            items.append(
                pn.pane.Alert(
                    teaching.OWNER_WARNING, alert_type="warning", sizing_mode="stretch_width"
                )
            )
        return pn.Column(*items, sizing_mode="stretch_width")

    def __panel__(self):
        return pn.Column(
            pn.panel(self._banner, sizing_mode="stretch_width"),
            self.status,
            sizing_mode="stretch_width",
        )
