"""privclust.core.sketch: compressive k-means with differential privacy ([SCH19] = Schellekens,
Chatalic, Houssiau, de Montjoye, Jacques & Gribonval, "Compressive k-means with differential
privacy", SPARS 2019).  [SCH19] Sec. II gives the sketch (Eq. (2)), the scrambled sketch with masks
(Eq. (3)) and Theorem 1; Sec. III the experiments (Fig. 1, Fig. 3) and the SNR (Eq. (4)).

Public frequencies and the sketch operator (complex exponential, one-bit quantised with dither),
a mergeable :class:`Sketch` (row blocks, files, Dask partitions), its private release
(Laplace per Theorem 1, add/remove with a noisy count, Gaussian), the CL-OMPR decoder,
:class:`CompressiveKMeans`, the :class:`DPLloyd` baselines and the SNR of Eq. (4); and two
published private k-means competitors: :class:`LSHCoresetKMeans` (an LSH prefix-tree private
coreset, Chang & Kamath 2021) and :class:`BalcanKMeans` (DPHD, Balcan et al., ICML 2017).
"""

from .balcan import BalcanKMeans
from .ckm import CompressiveKMeans
from .clompr import clompr
from .distributed import sketch_dask
from .dplloyd import DPLloyd, dplloyd_runs, sphere_packing_init
from .frequencies import default_frequency_scale, draw_dither, draw_frequencies
from .lsh_coreset import LSHCoresetKMeans
from .operator import C_F, SketchOperator
from .recommend import recommend_kmeans
from .release import l1_sensitivity, l2_sensitivity, release_sketch
from .sketch import Sketch, iter_file_blocks
from .snr import empirical_snr, gmm_true_sketch, noise_std_for_snr, sigma_xi, snr_complex_exp

__all__ = [
    "CompressiveKMeans",
    "DPLloyd",
    "LSHCoresetKMeans",
    "BalcanKMeans",
    "Sketch",
    "SketchOperator",
    "C_F",
    "clompr",
    "sketch_dask",
    "dplloyd_runs",
    "sphere_packing_init",
    "recommend_kmeans",
    "default_frequency_scale",
    "draw_dither",
    "draw_frequencies",
    "l1_sensitivity",
    "l2_sensitivity",
    "release_sketch",
    "iter_file_blocks",
    "empirical_snr",
    "gmm_true_sketch",
    "noise_std_for_snr",
    "sigma_xi",
    "snr_complex_exp",
]
