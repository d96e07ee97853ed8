"""The base class of privclust's own warnings.

Every warning privclust issues derives from :class:`PrivclustWarning`, so a caller (and the test
suite, where they are errors unless a test expects them) can filter them in one place.
"""


class PrivclustWarning(UserWarning):
    """Base class of the warnings privclust issues."""
