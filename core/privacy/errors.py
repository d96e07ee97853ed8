"""Exceptions and warnings of the privacy layer."""

from ..exceptions import PrivclustWarning


class PrivacyWarning(PrivclustWarning):
    """A configuration whose privacy claim is weaker than it looks (e.g. outside a proven range)."""


class BudgetExceeded(RuntimeError):
    """A charge or spend would exceed the privacy budget; nothing was spent."""


class DuplicateRequest(RuntimeError):
    """A charge refused because a release for the same request key is already paid for
    (pending or stored); nothing was spent. ``key`` names it, ``done`` says whether stored."""

    def __init__(self, key, done):
        super().__init__(
            f"request {key[:12]}... is already paid for ({'stored' if done else 'pending'})"
        )
        self.key = key
        self.done = bool(done)
