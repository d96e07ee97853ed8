"""privclust.core: differentially private clustering algorithms and their non-private baselines.

The estimators follow scikit-learn conventions (``fit`` returns ``self``, learned state ends in
``_``, ``random_state`` accepts None/int/Generator). Every private estimator exposes ``privacy_``,
a :class:`privclust.core.privacy.Guarantee`, and charges an optional ``ledger=`` before it releases.

Names are imported lazily, so ``import privclust.core`` stays cheap and a family's modules are
only loaded when one of its classes is used.
"""

from importlib import import_module

_EXPORTS = {
    # subspace clustering (Wang, Wang & Singh, NIPS 2015)
    "KPlanes": "subspace",
    "ThresholdSubspaceClustering": "subspace",
    "SparseSubspaceClustering": "subspace",
    "LowRankRepresentation": "subspace",
    "SampleAggregateSubspaceClustering": "subspace",
    "GibbsSubspaceClustering": "subspace",
    "SuLQSubspaceClustering": "subspace",
    # compressive k-means (Schellekens et al., SPARS 2019)
    "CompressiveKMeans": "sketch",
    "DPLloyd": "sketch",
    # published private k-means competitors (Chang & Kamath 2021; Balcan et al., ICML 2017)
    "LSHCoresetKMeans": "sketch",
    "BalcanKMeans": "sketch",
    "recommend_kmeans": "sketch",
    "Sketch": "sketch",
    # locating a small cluster (Nissim, Stemmer & Vadhan, PODS 2016)
    "OneCluster": "onecluster",
    "PrivateKBalls": "onecluster",
    # co-clustering (Battaglia & Pensa, SDM 2025)
    "TauCoClustering": "cocluster",
    "DPTauCoClustering": "cocluster",
    "DPNMF": "cocluster",  # benchmark competitor (Saha & Imtiaz 2024); plan kind "none"
    # the release protocol: the one door to non-public data
    "Curator": "release",
    "Release": "release",
    "PrivateEstimator": "estimator",
    # public bounds from private quantiles (Smith, STOC 2011) and the owner's check of a box
    "PrivateBounds": "bounds",
    # public bounds from a noisy histogram over power-of-two buckets (order of magnitude)
    "GeometricBounds": "bounds",
    "forecast_geometric_bounds": "bounds",
    "outside_share": "data",
    # foundation
    "Guarantee": "privacy",
    "Ledger": "privacy",
    "BudgetExceeded": "privacy",
    "Dataset": "data",
    "DaskDataset": "data",
    "load": "data",
    "get_dataset": "data",
    "list_datasets": "data",
}

__all__ = sorted(_EXPORTS) + ["privacy", "data", "metrics", "release"]


def __getattr__(name):
    if name in (
        "privacy",
        "data",
        "metrics",
        "subspace",
        "sketch",
        "onecluster",
        "cocluster",
        "experiments",
        "release",
        "bounds",
        "algorithms",
    ):
        return import_module(f"{__name__}.{name}")
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    return getattr(import_module(f"{__name__}.{module}"), name)


def __dir__():
    return __all__
