"""What a run works on (:class:`Request`, captured once) and what the page shows of it
(:class:`RunResult`)."""

import dataclasses

from ..catalogue import AlgorithmSpec


def random_state_for(dataset, seed):
    """The page seed on public demo data; None (fresh OS entropy) on anything private, the data
    owner's own NOT PRIVATE runs included (a seed is public; private releases go through the
    Curator, which ignores seeds anyway)."""
    return seed if getattr(dataset, "public", False) else None


@dataclasses.dataclass
class RunResult:
    """One result shown by the page.

    On private data ``estimator`` is the :class:`~privclust.core.Release` the Curator returned
    (it forwards the released attributes, e.g. ``result.estimator.cluster_centers_``; nothing
    else of the fit exists here), or, for ``owner_only`` results, an estimator fitted through
    the Curator's data owner path (NOT PRIVATE: never downloaded or listed as a release). On
    demo data it is the fitted estimator.
    """

    key: object
    spec: AlgorithmSpec
    settings: dict
    estimator: object
    dataset: object
    elapsed: float
    private_mode: bool
    from_cache: bool = False
    baseline: object = None
    baseline_spec: object = None
    owner_only: bool = False

    @property
    def release(self):
        """The Release of a private result (None on demo data and for owner-only results)."""
        from privclust.core import Release

        return self.estimator if isinstance(self.estimator, Release) else None

    @property
    def guarantee(self):
        release = self.release
        if release is not None:
            return release.guarantee
        return getattr(self.estimator, "privacy_", None)

    @property
    def kind(self):
        """The privacy kind of what was computed ("none": not private; "cell": cell-level)."""
        g = self.guarantee
        if g is None:
            return "none"
        return "cell" if g.neighbouring == "cell" else g.kind


@dataclasses.dataclass(frozen=True)
class Request:
    """What a Release (or a demo run) works on, captured once when it is asked for: the
    dataset, its Curator (None on demo data), the algorithm and its settings values, the data
    owner view switch and the page seed (used on demo data only)."""

    dataset: object
    curator: object
    spec: AlgorithmSpec
    settings: dict
    owner_view: bool
    seed: int

    @property
    def random_state(self):
        """What the estimators of this request are seeded with (:func:`random_state_for`)."""
        return random_state_for(self.dataset, self.seed)
