"""Exceptions and warnings of the privacy layer."""


class PrivacyWarning(UserWarning):
    """A configuration whose privacy claim is weaker than it looks (e.g. outside a proven range)."""


class BudgetExceeded(RuntimeError):
    """A charge or spend would exceed the privacy budget; nothing was spent."""
