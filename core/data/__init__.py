"""privclust.core.data: datasets, loaders with validation, domain helpers, generators, registry.

Per-record domain enforcement (clipping, quantisation, count checks) and generators for the
experiments of Wang, Wang & Singh (NIPS 2015), Schellekens et al. (SPARS 2019), a planted-ball
benchmark for Nissim, Stemmer & Vadhan (PODS 2016) and block counts for Battaglia & Pensa
(SDM 2025).
"""

from .box import outside_share
from .dask_dataset import DaskDataset
from .dataset import Dataset
from .domain import DataWarning, check_counts, check_nonneg_integer, clip_box, clip_l2, quantize
from .loaders import FORMATS, load
from .registry import DatasetInfo, data_dir, get_dataset, list_datasets
from .synthetic import (
    make_block_counts,
    make_gaussian_mixture,
    make_planted_ball,
    make_union_of_subspaces,
)
from .validation import DataFormatError

__all__ = [
    "Dataset",
    "DaskDataset",
    "DataFormatError",
    "DataWarning",
    "FORMATS",
    "load",
    "DatasetInfo",
    "data_dir",
    "get_dataset",
    "list_datasets",
    "check_counts",
    "check_nonneg_integer",
    "clip_box",
    "clip_l2",
    "quantize",
    "outside_share",
    "make_block_counts",
    "make_gaussian_mixture",
    "make_planted_ball",
    "make_union_of_subspaces",
]
