"""Which private k-means to use for given public facts (n, d, k, epsilon, relation), from the
real-data benchmark (``benchmarks/sketch/real_data.py``).

The evidence is a table of measured cells: data set, its size and dimension, k, epsilon, method,
mean and standard deviation of the SSE relative to scikit-learn k-means++ (best of 10), number of
runs and seconds per fit, all under add/remove neighbours.  :func:`recommend_kmeans` looks at the
measured cells nearest to the request (in log n, log d, log k, log epsilon) and picks the method
whose SSE is closest to the best of each cell.  A new estimator joins by adding its rows to
:data:`EVIDENCE` and its constructor to :data:`ESTIMATORS`; nothing else changes.

Evidence (relative SSE, mean over 10 runs for DPLloyd and diffprivlib, 5 for CKM, the LSH
coreset, Balcan et al. and diffprivlib on the Yale B sets at k = 64 and yaleb_heldout, fewer
where marked; add/remove, delta = 1e-6 for the two (epsilon, delta) methods;
diffprivlib's mechanisms really receive more epsilon than asked, e.g. 1.41 at eps = 1 on Letter,
2.28 on digits and 3.51 on Yale B, because its two shares are unpacked in swapped order):

| data (n x d), k, eps | dplloyd | dplloyd_n | dplloyd_sphere | dplloyd_old_default | ckm | diffprivlib | lsh_coreset | balcan |
|---|---|---|---|---|---|---|---|---|
| digits (1797 x 64), 8, 0.5 | 2.03 | 1.98 | 1.98 | 3.28 | 5.65 | 2.60 | 1.73 | 1.72 |
| digits (1797 x 64), 8, 1 | 1.70 | 1.68 | 1.68 | 2.25 | 4.20 | 1.94 | 1.59 | 1.58 |
| digits (1797 x 64), 8, 2 | 1.55 | 1.55 | 1.55 | 2.33 | 1.95 | 1.77 | 1.47 | 1.43 |
| digits (1797 x 64), 16, 0.5 | 2.52 | 2.38 | 2.51 | 3.99 | 6.36 | 3.26 | 2.18 | 2.16 |
| digits (1797 x 64), 16, 1 | 2.17 | 2.15 | 2.15 | 3.24 | 6.60 | 2.41 | 1.97 | 1.94 |
| digits (1797 x 64), 16, 2 | 1.92 | 1.92 | 1.94 | 2.62 | 3.15 | 2.25 | 1.71 | 1.79 |
| digits (1797 x 64), 64, 0.5 | 3.81 | 3.68 | 4.12 | 6.73 | 9.48 | 6.10 | 3.42 | 3.36 |
| digits (1797 x 64), 64, 1 | 3.29 | 3.26 | 3.37 | 4.81 | 9.70 | 4.30 | 2.96 | 3.00 |
| digits (1797 x 64), 64, 2 | 2.94 | 2.95 | 2.87 | 4.38 | 5.99 | 3.40 | 2.70 | 2.53 |
| letter (20000 x 16), 8, 0.5 | 1.23 | 1.18 | 1.43 | 1.50 | 1.29 | 1.42 | 1.17 | 1.20 |
| letter (20000 x 16), 8, 1 | 1.19 | 1.12 | 1.37 | 1.34 | 1.17 | 1.31 | 1.13 | 1.13 |
| letter (20000 x 16), 8, 2 | 1.19 | 1.11 | 1.37 | 1.22 | 1.08 | 1.24 | 1.12 | 1.08 |
| letter (20000 x 16), 16, 0.5 | 1.41 | 1.40 | 1.62 | 1.86 | 1.55 | 1.77 | 1.44 | 1.51 |
| letter (20000 x 16), 16, 1 | 1.32 | 1.24 | 1.56 | 1.65 | 1.34 | 1.57 | 1.26 | 1.34 |
| letter (20000 x 16), 16, 2 | 1.30 | 1.19 | 1.54 | 1.46 | 1.20 | 1.47 | 1.19 | 1.28 |
| letter (20000 x 16), 64, 0.5 | 2.09 | 2.09 | 2.47 | 3.13 | 2.74 | 3.03 | 2.05 | 2.09 |
| letter (20000 x 16), 64, 1 | 1.81 | 1.81 | 2.19 | 2.71 | 2.17 | 2.54 | 1.89 | 1.77 |
| letter (20000 x 16), 64, 2 | 1.67 | 1.67 | 2.17 | 2.31 | 1.77 | 2.24 | 1.66 | 1.51 |
| yaleb (2432 x 224), 8, 0.5 | 4.83 | 4.98 | 4.80 | 11.48 | - | 6.59 | 3.25 | 3.56 |
| yaleb (2432 x 224), 8, 1 | 3.61 | 3.57 | 3.57 | 8.35 | - | 4.93 | 2.51 | 2.77 |
| yaleb (2432 x 224), 8, 2 | 3.02 | 2.81 | 2.86 | 4.62 | - | 4.00 | 1.92 | 1.75 |
| yaleb (2432 x 224), 16, 0.5 | 6.72 | 6.05 | 6.79 | 14.24 | - | 7.48 | 3.90 | 4.46 |
| yaleb (2432 x 224), 16, 1 | 4.55 | 4.56 | 5.26 | 10.30 | - | 6.42 | 3.37 | 3.04 |
| yaleb (2432 x 224), 16, 2 | 3.81 | 3.65 | 3.75 | 6.52 | - | 5.18 | 2.64 | 2.19 |
| yaleb (2432 x 224), 64, 0.5 | 10.20 | 9.10 | 12.44 | 21.04 | - | 8.28 | 6.47 | 6.32 |
| yaleb (2432 x 224), 64, 1 | 7.25 | 6.89 | 7.90 | 15.91 | - | 7.92 | 5.17 | 4.96 |
| yaleb (2432 x 224), 64, 2 | 5.87 | 5.36 | 5.80 | 9.79 | - | 7.06 | 4.34 | 3.21 |
| yaleb_heldout (1216 x 56), 8, 0.5 | 4.63 | 4.36 | 4.43 | 9.75 | - | 6.37 | 3.62 | 3.87 |
| yaleb_heldout (1216 x 56), 8, 1 | 3.65 | 3.46 | 3.46 | 6.26 | - | 6.02 | 3.03 | 2.94 |
| yaleb_heldout (1216 x 56), 8, 2 | 2.86 | 2.86 | 3.06 | 4.99 | - | 4.18 | 2.06 | 2.45 |
| yaleb_heldout (1216 x 56), 16, 0.5 | 6.32 | 5.82 | 6.54 | 14.13 | - | 11.16 | 5.14 | 5.46 |
| yaleb_heldout (1216 x 56), 16, 1 | 4.79 | 4.56 | 4.44 | 8.23 | - | 8.00 | 3.67 | 3.72 |
| yaleb_heldout (1216 x 56), 16, 2 | 3.72 | 3.72 | 3.63 | 5.79 | - | 5.45 | 3.01 | 2.76 |
| yaleb_heldout (1216 x 56), 64, 0.5 | 10.51 | 9.71 | 10.92 | 24.93 | - | 13.59 | 8.60 | 9.38 |
| yaleb_heldout (1216 x 56), 64, 1 | 8.09 | 7.55 | 8.29 | 13.62 | - | 11.89 | 6.29 | 7.67 |
| yaleb_heldout (1216 x 56), 64, 2 | 6.62 | 6.60 | 6.33 | 10.24 | - | 9.14 | 5.05 | 4.87 |
"""

import math
from dataclasses import dataclass, field

from ..estimator import check_choice, check_positive_int, epsilon_param

# constructor (name in privclust.core) and fixed parameters of each recommendable method; the
# other rows of EVIDENCE (diffprivlib, DPLloyd without a declared n, its older variants) are
# evidence only
ESTIMATORS = {
    "dplloyd_n": ("DPLloyd", {}),
    "ckm": ("CompressiveKMeans", {}),
    "lsh_coreset": ("LSHCoresetKMeans", {}),
    "balcan": ("BalcanKMeans", {}),
}

# (data set, n, d, k, epsilon, method, mean, sd, runs, seconds per fit): real_data.md
EVIDENCE = (
    ("digits", 1797, 64, 8, 0.5, "balcan", 1.716, 0.036, 5, 0.04),
    ("digits", 1797, 64, 8, 0.5, "ckm", 5.65, 0.159, 5, 4.18),
    ("digits", 1797, 64, 8, 0.5, "diffprivlib", 2.599, 0.406, 10, 1.93),
    ("digits", 1797, 64, 8, 0.5, "dplloyd", 2.031, 0.198, 10, 0.02),
    ("digits", 1797, 64, 8, 0.5, "dplloyd_n", 1.981, 0.151, 10, 0.01),
    ("digits", 1797, 64, 8, 0.5, "dplloyd_old_default", 3.283, 0.408, 10, 0.08),
    ("digits", 1797, 64, 8, 0.5, "dplloyd_sphere", 1.981, 0.151, 10, 0.01),
    ("digits", 1797, 64, 8, 0.5, "lsh_coreset", 1.731, 0.051, 5, 0.02),
    ("digits", 1797, 64, 8, 1.0, "balcan", 1.582, 0.091, 5, 0.04),
    ("digits", 1797, 64, 8, 1.0, "ckm", 4.196, 1.891, 5, 8.89),
    ("digits", 1797, 64, 8, 1.0, "diffprivlib", 1.936, 0.078, 10, 1.89),
    ("digits", 1797, 64, 8, 1.0, "dplloyd", 1.704, 0.058, 10, 0.01),
    ("digits", 1797, 64, 8, 1.0, "dplloyd_n", 1.681, 0.037, 10, 0.01),
    ("digits", 1797, 64, 8, 1.0, "dplloyd_old_default", 2.251, 0.362, 10, 0.07),
    ("digits", 1797, 64, 8, 1.0, "dplloyd_sphere", 1.681, 0.037, 10, 0.01),
    ("digits", 1797, 64, 8, 1.0, "lsh_coreset", 1.595, 0.069, 5, 0.03),
    ("digits", 1797, 64, 8, 2.0, "balcan", 1.432, 0.109, 5, 0.03),
    ("digits", 1797, 64, 8, 2.0, "ckm", 1.95, 0.099, 5, 8.89),
    ("digits", 1797, 64, 8, 2.0, "diffprivlib", 1.77, 0.02, 10, 3.78),
    ("digits", 1797, 64, 8, 2.0, "dplloyd", 1.548, 0.042, 10, 0.01),
    ("digits", 1797, 64, 8, 2.0, "dplloyd_n", 1.548, 0.042, 10, 0.01),
    ("digits", 1797, 64, 8, 2.0, "dplloyd_old_default", 2.327, 0.455, 10, 0.06),
    ("digits", 1797, 64, 8, 2.0, "dplloyd_sphere", 1.548, 0.086, 10, 0.01),
    ("digits", 1797, 64, 8, 2.0, "lsh_coreset", 1.467, 0.05, 5, 0.03),
    ("digits", 1797, 64, 16, 0.5, "balcan", 2.163, 0.068, 5, 0.02),
    ("digits", 1797, 64, 16, 0.5, "ckm", 6.358, 0.518, 5, 13.26),
    ("digits", 1797, 64, 16, 0.5, "diffprivlib", 3.259, 0.52, 10, 2.56),
    ("digits", 1797, 64, 16, 0.5, "dplloyd", 2.522, 0.235, 10, 0.02),
    ("digits", 1797, 64, 16, 0.5, "dplloyd_n", 2.383, 0.156, 10, 0.01),
    ("digits", 1797, 64, 16, 0.5, "dplloyd_old_default", 3.994, 0.452, 10, 0.08),
    ("digits", 1797, 64, 16, 0.5, "dplloyd_sphere", 2.507, 0.186, 10, 0.01),
    ("digits", 1797, 64, 16, 0.5, "lsh_coreset", 2.182, 0.098, 5, 0.02),
    ("digits", 1797, 64, 16, 1.0, "balcan", 1.94, 0.051, 5, 0.03),
    ("digits", 1797, 64, 16, 1.0, "ckm", 6.602, 0.218, 5, 14.48),
    ("digits", 1797, 64, 16, 1.0, "diffprivlib", 2.407, 0.16, 10, 3.22),
    ("digits", 1797, 64, 16, 1.0, "dplloyd", 2.175, 0.084, 10, 0.01),
    ("digits", 1797, 64, 16, 1.0, "dplloyd_n", 2.149, 0.048, 10, 0.01),
    ("digits", 1797, 64, 16, 1.0, "dplloyd_old_default", 3.241, 0.7, 10, 0.1),
    ("digits", 1797, 64, 16, 1.0, "dplloyd_sphere", 2.15, 0.073, 10, 0.01),
    ("digits", 1797, 64, 16, 1.0, "lsh_coreset", 1.966, 0.061, 5, 0.02),
    ("digits", 1797, 64, 16, 2.0, "balcan", 1.792, 0.104, 5, 0.03),
    ("digits", 1797, 64, 16, 2.0, "ckm", 3.147, 1.769, 5, 8.26),
    ("digits", 1797, 64, 16, 2.0, "diffprivlib", 2.249, 0.067, 10, 1.86),
    ("digits", 1797, 64, 16, 2.0, "dplloyd", 1.923, 0.085, 10, 0.01),
    ("digits", 1797, 64, 16, 2.0, "dplloyd_n", 1.923, 0.085, 10, 0.01),
    ("digits", 1797, 64, 16, 2.0, "dplloyd_old_default", 2.619, 0.545, 10, 0.08),
    ("digits", 1797, 64, 16, 2.0, "dplloyd_sphere", 1.943, 0.108, 10, 0.01),
    ("digits", 1797, 64, 16, 2.0, "lsh_coreset", 1.709, 0.069, 5, 0.03),
    ("digits", 1797, 64, 64, 0.5, "balcan", 3.357, 0.04, 5, 0.04),
    ("digits", 1797, 64, 64, 0.5, "ckm", 9.484, 0.444, 5, 44.13),
    ("digits", 1797, 64, 64, 0.5, "diffprivlib", 6.097, 0.406, 10, 7.19),
    ("digits", 1797, 64, 64, 0.5, "dplloyd", 3.813, 0.309, 10, 0.02),
    ("digits", 1797, 64, 64, 0.5, "dplloyd_n", 3.681, 0.187, 10, 0.03),
    ("digits", 1797, 64, 64, 0.5, "dplloyd_old_default", 6.728, 0.602, 10, 0.1),
    ("digits", 1797, 64, 64, 0.5, "dplloyd_sphere", 4.121, 0.566, 10, 0.03),
    ("digits", 1797, 64, 64, 0.5, "lsh_coreset", 3.42, 0.174, 5, 0.02),
    ("digits", 1797, 64, 64, 1.0, "balcan", 2.997, 0.185, 5, 0.04),
    ("digits", 1797, 64, 64, 1.0, "ckm", 9.698, 0.472, 5, 58.24),
    ("digits", 1797, 64, 64, 1.0, "diffprivlib", 4.299, 0.919, 10, 6.2),
    ("digits", 1797, 64, 64, 1.0, "dplloyd", 3.294, 0.096, 10, 0.03),
    ("digits", 1797, 64, 64, 1.0, "dplloyd_n", 3.263, 0.106, 10, 0.03),
    ("digits", 1797, 64, 64, 1.0, "dplloyd_old_default", 4.807, 1.061, 10, 0.08),
    ("digits", 1797, 64, 64, 1.0, "dplloyd_sphere", 3.374, 0.098, 10, 0.05),
    ("digits", 1797, 64, 64, 1.0, "lsh_coreset", 2.964, 0.139, 5, 0.02),
    ("digits", 1797, 64, 64, 2.0, "balcan", 2.533, 0.074, 5, 0.07),
    ("digits", 1797, 64, 64, 2.0, "ckm", 5.991, 2.996, 5, 38.81),
    ("digits", 1797, 64, 64, 2.0, "diffprivlib", 3.398, 0.133, 10, 4.07),
    ("digits", 1797, 64, 64, 2.0, "dplloyd", 2.938, 0.119, 10, 0.04),
    ("digits", 1797, 64, 64, 2.0, "dplloyd_n", 2.952, 0.102, 10, 0.03),
    ("digits", 1797, 64, 64, 2.0, "dplloyd_old_default", 4.381, 0.718, 10, 0.12),
    ("digits", 1797, 64, 64, 2.0, "dplloyd_sphere", 2.873, 0.068, 10, 0.03),
    ("digits", 1797, 64, 64, 2.0, "lsh_coreset", 2.699, 0.061, 5, 0.04),
    ("letter", 20000, 16, 8, 0.5, "balcan", 1.199, 0.074, 5, 0.67),
    ("letter", 20000, 16, 8, 0.5, "ckm", 1.288, 0.04, 5, 4.43),
    ("letter", 20000, 16, 8, 0.5, "diffprivlib", 1.422, 0.112, 10, 2.2),
    ("letter", 20000, 16, 8, 0.5, "dplloyd", 1.226, 0.039, 10, 0.03),
    ("letter", 20000, 16, 8, 0.5, "dplloyd_n", 1.183, 0.036, 10, 0.04),
    ("letter", 20000, 16, 8, 0.5, "dplloyd_old_default", 1.501, 0.124, 10, 0.32),
    ("letter", 20000, 16, 8, 0.5, "dplloyd_sphere", 1.429, 0.118, 10, 0.02),
    ("letter", 20000, 16, 8, 0.5, "lsh_coreset", 1.174, 0.017, 5, 0.23),
    ("letter", 20000, 16, 8, 1.0, "balcan", 1.127, 0.055, 5, 2.22),
    ("letter", 20000, 16, 8, 1.0, "ckm", 1.167, 0.026, 5, 2.73),
    ("letter", 20000, 16, 8, 1.0, "diffprivlib", 1.306, 0.039, 10, 0.76),
    ("letter", 20000, 16, 8, 1.0, "dplloyd", 1.191, 0.019, 10, 0.03),
    ("letter", 20000, 16, 8, 1.0, "dplloyd_n", 1.124, 0.021, 10, 0.04),
    ("letter", 20000, 16, 8, 1.0, "dplloyd_old_default", 1.342, 0.079, 10, 0.09),
    ("letter", 20000, 16, 8, 1.0, "dplloyd_sphere", 1.371, 0.046, 10, 0.03),
    ("letter", 20000, 16, 8, 1.0, "lsh_coreset", 1.131, 0.019, 5, 0.19),
    ("letter", 20000, 16, 8, 2.0, "balcan", 1.085, 0.032, 5, 4.05),
    ("letter", 20000, 16, 8, 2.0, "ckm", 1.084, 0.021, 5, 2.61),
    ("letter", 20000, 16, 8, 2.0, "diffprivlib", 1.244, 0.103, 10, 1.76),
    ("letter", 20000, 16, 8, 2.0, "dplloyd", 1.191, 0.025, 10, 0.04),
    ("letter", 20000, 16, 8, 2.0, "dplloyd_n", 1.108, 0.032, 10, 0.05),
    ("letter", 20000, 16, 8, 2.0, "dplloyd_old_default", 1.216, 0.044, 10, 0.31),
    ("letter", 20000, 16, 8, 2.0, "dplloyd_sphere", 1.372, 0.119, 10, 0.03),
    ("letter", 20000, 16, 8, 2.0, "lsh_coreset", 1.119, 0.046, 5, 0.41),
    ("letter", 20000, 16, 16, 0.5, "balcan", 1.507, 0.188, 5, 3.26),
    ("letter", 20000, 16, 16, 0.5, "ckm", 1.555, 0.07, 5, 3.6),
    ("letter", 20000, 16, 16, 0.5, "diffprivlib", 1.769, 0.051, 10, 3.01),
    ("letter", 20000, 16, 16, 0.5, "dplloyd", 1.41, 0.077, 10, 0.04),
    ("letter", 20000, 16, 16, 0.5, "dplloyd_n", 1.403, 0.085, 10, 0.04),
    ("letter", 20000, 16, 16, 0.5, "dplloyd_old_default", 1.863, 0.133, 10, 0.17),
    ("letter", 20000, 16, 16, 0.5, "dplloyd_sphere", 1.619, 0.075, 10, 0.04),
    ("letter", 20000, 16, 16, 0.5, "lsh_coreset", 1.437, 0.044, 5, 1.56),
    ("letter", 20000, 16, 16, 1.0, "balcan", 1.34, 0.057, 5, 3.4),
    ("letter", 20000, 16, 16, 1.0, "ckm", 1.336, 0.04, 5, 3.45),
    ("letter", 20000, 16, 16, 1.0, "diffprivlib", 1.571, 0.064, 10, 2.3),
    ("letter", 20000, 16, 16, 1.0, "dplloyd", 1.317, 0.044, 10, 0.03),
    ("letter", 20000, 16, 16, 1.0, "dplloyd_n", 1.237, 0.045, 10, 0.05),
    ("letter", 20000, 16, 16, 1.0, "dplloyd_old_default", 1.647, 0.068, 10, 0.21),
    ("letter", 20000, 16, 16, 1.0, "dplloyd_sphere", 1.557, 0.083, 10, 0.04),
    ("letter", 20000, 16, 16, 1.0, "lsh_coreset", 1.265, 0.037, 5, 0.74),
    ("letter", 20000, 16, 16, 2.0, "balcan", 1.278, 0.082, 5, 2.48),
    ("letter", 20000, 16, 16, 2.0, "ckm", 1.197, 0.023, 5, 4.42),
    ("letter", 20000, 16, 16, 2.0, "diffprivlib", 1.467, 0.092, 10, 1.12),
    ("letter", 20000, 16, 16, 2.0, "dplloyd", 1.297, 0.045, 10, 0.04),
    ("letter", 20000, 16, 16, 2.0, "dplloyd_n", 1.185, 0.023, 10, 0.04),
    ("letter", 20000, 16, 16, 2.0, "dplloyd_old_default", 1.456, 0.087, 10, 0.18),
    ("letter", 20000, 16, 16, 2.0, "dplloyd_sphere", 1.541, 0.098, 10, 0.04),
    ("letter", 20000, 16, 16, 2.0, "lsh_coreset", 1.193, 0.035, 5, 0.53),
    ("letter", 20000, 16, 64, 0.5, "balcan", 2.094, 0.053, 5, 2.41),
    ("letter", 20000, 16, 64, 0.5, "ckm", 2.736, 0.124, 5, 11.54),
    ("letter", 20000, 16, 64, 0.5, "diffprivlib", 3.031, 0.108, 10, 5.5),
    ("letter", 20000, 16, 64, 0.5, "dplloyd", 2.09, 0.049, 10, 0.1),
    ("letter", 20000, 16, 64, 0.5, "dplloyd_n", 2.09, 0.049, 10, 0.08),
    ("letter", 20000, 16, 64, 0.5, "dplloyd_old_default", 3.13, 0.262, 10, 2.78),
    ("letter", 20000, 16, 64, 0.5, "dplloyd_sphere", 2.473, 0.141, 10, 0.07),
    ("letter", 20000, 16, 64, 0.5, "lsh_coreset", 2.049, 0.056, 5, 0.47),
    ("letter", 20000, 16, 64, 1.0, "balcan", 1.766, 0.073, 5, 0.72),
    ("letter", 20000, 16, 64, 1.0, "ckm", 2.168, 0.061, 5, 12.36),
    ("letter", 20000, 16, 64, 1.0, "diffprivlib", 2.535, 0.088, 10, 10.42),
    ("letter", 20000, 16, 64, 1.0, "dplloyd", 1.809, 0.038, 10, 0.06),
    ("letter", 20000, 16, 64, 1.0, "dplloyd_n", 1.809, 0.038, 10, 0.06),
    ("letter", 20000, 16, 64, 1.0, "dplloyd_old_default", 2.713, 0.166, 10, 0.46),
    ("letter", 20000, 16, 64, 1.0, "dplloyd_sphere", 2.192, 0.12, 10, 0.06),
    ("letter", 20000, 16, 64, 1.0, "lsh_coreset", 1.889, 0.037, 5, 0.1),
    ("letter", 20000, 16, 64, 2.0, "balcan", 1.515, 0.089, 5, 0.73),
    ("letter", 20000, 16, 64, 2.0, "ckm", 1.773, 0.019, 5, 14.29),
    ("letter", 20000, 16, 64, 2.0, "diffprivlib", 2.243, 0.103, 10, 7.6),
    ("letter", 20000, 16, 64, 2.0, "dplloyd", 1.665, 0.028, 10, 0.06),
    ("letter", 20000, 16, 64, 2.0, "dplloyd_n", 1.665, 0.028, 10, 0.06),
    ("letter", 20000, 16, 64, 2.0, "dplloyd_old_default", 2.313, 0.104, 10, 0.68),
    ("letter", 20000, 16, 64, 2.0, "dplloyd_sphere", 2.172, 0.113, 10, 0.07),
    ("letter", 20000, 16, 64, 2.0, "lsh_coreset", 1.655, 0.045, 5, 0.07),
    ("yaleb", 2432, 224, 8, 0.5, "balcan", 3.562, 0.194, 5, 0.05),
    ("yaleb", 2432, 224, 8, 0.5, "diffprivlib", 6.591, 1.325, 10, 9.68),
    ("yaleb", 2432, 224, 8, 0.5, "dplloyd", 4.825, 0.516, 10, 0.03),
    ("yaleb", 2432, 224, 8, 0.5, "dplloyd_n", 4.977, 0.479, 10, 0.03),
    ("yaleb", 2432, 224, 8, 0.5, "dplloyd_old_default", 11.477, 1.117, 10, 0.18),
    ("yaleb", 2432, 224, 8, 0.5, "dplloyd_sphere", 4.802, 0.587, 10, 0.02),
    ("yaleb", 2432, 224, 8, 0.5, "lsh_coreset", 3.247, 0.346, 5, 0.02),
    ("yaleb", 2432, 224, 8, 1.0, "balcan", 2.769, 0.554, 5, 0.04),
    ("yaleb", 2432, 224, 8, 1.0, "diffprivlib", 4.933, 0.822, 10, 7.02),
    ("yaleb", 2432, 224, 8, 1.0, "dplloyd", 3.612, 0.23, 10, 0.03),
    ("yaleb", 2432, 224, 8, 1.0, "dplloyd_n", 3.572, 0.289, 10, 0.03),
    ("yaleb", 2432, 224, 8, 1.0, "dplloyd_old_default", 8.345, 1.483, 10, 0.15),
    ("yaleb", 2432, 224, 8, 1.0, "dplloyd_sphere", 3.57, 0.198, 10, 0.04),
    ("yaleb", 2432, 224, 8, 1.0, "lsh_coreset", 2.51, 0.274, 5, 0.03),
    ("yaleb", 2432, 224, 8, 2.0, "balcan", 1.754, 0.154, 5, 0.04),
    ("yaleb", 2432, 224, 8, 2.0, "diffprivlib", 4.004, 0.613, 10, 8.23),
    ("yaleb", 2432, 224, 8, 2.0, "dplloyd", 3.025, 0.218, 10, 0.05),
    ("yaleb", 2432, 224, 8, 2.0, "dplloyd_n", 2.813, 0.152, 10, 0.04),
    ("yaleb", 2432, 224, 8, 2.0, "dplloyd_old_default", 4.618, 0.267, 10, 0.22),
    ("yaleb", 2432, 224, 8, 2.0, "dplloyd_sphere", 2.856, 0.196, 10, 0.07),
    ("yaleb", 2432, 224, 8, 2.0, "lsh_coreset", 1.917, 0.091, 5, 0.02),
    ("yaleb", 2432, 224, 16, 0.5, "balcan", 4.456, 0.053, 5, 0.05),
    ("yaleb", 2432, 224, 16, 0.5, "diffprivlib", 7.477, 0.916, 10, 10.53),
    ("yaleb", 2432, 224, 16, 0.5, "dplloyd", 6.723, 1.392, 10, 0.05),
    ("yaleb", 2432, 224, 16, 0.5, "dplloyd_n", 6.05, 0.844, 10, 0.04),
    ("yaleb", 2432, 224, 16, 0.5, "dplloyd_old_default", 14.24, 2.786, 10, 0.16),
    ("yaleb", 2432, 224, 16, 0.5, "dplloyd_sphere", 6.787, 0.93, 10, 0.05),
    ("yaleb", 2432, 224, 16, 0.5, "lsh_coreset", 3.9, 0.197, 5, 0.03),
    ("yaleb", 2432, 224, 16, 1.0, "balcan", 3.041, 0.158, 5, 0.06),
    ("yaleb", 2432, 224, 16, 1.0, "diffprivlib", 6.415, 0.597, 10, 18.83),
    ("yaleb", 2432, 224, 16, 1.0, "dplloyd", 4.553, 0.203, 10, 0.04),
    ("yaleb", 2432, 224, 16, 1.0, "dplloyd_n", 4.559, 0.237, 10, 0.04),
    ("yaleb", 2432, 224, 16, 1.0, "dplloyd_old_default", 10.299, 1.799, 10, 0.17),
    ("yaleb", 2432, 224, 16, 1.0, "dplloyd_sphere", 5.262, 0.946, 10, 0.04),
    ("yaleb", 2432, 224, 16, 1.0, "lsh_coreset", 3.367, 0.328, 5, 0.04),
    ("yaleb", 2432, 224, 16, 2.0, "balcan", 2.194, 0.174, 5, 0.06),
    ("yaleb", 2432, 224, 16, 2.0, "diffprivlib", 5.179, 0.843, 10, 12.7),
    ("yaleb", 2432, 224, 16, 2.0, "dplloyd", 3.807, 0.301, 10, 0.04),
    ("yaleb", 2432, 224, 16, 2.0, "dplloyd_n", 3.654, 0.332, 10, 0.04),
    ("yaleb", 2432, 224, 16, 2.0, "dplloyd_old_default", 6.522, 0.928, 10, 0.15),
    ("yaleb", 2432, 224, 16, 2.0, "dplloyd_sphere", 3.745, 0.296, 10, 0.04),
    ("yaleb", 2432, 224, 16, 2.0, "lsh_coreset", 2.64, 0.237, 5, 0.05),
    ("yaleb", 2432, 224, 64, 0.5, "balcan", 6.321, 0.315, 5, 0.06),
    ("yaleb", 2432, 224, 64, 0.5, "diffprivlib", 8.28, 0.886, 5, 12.26),
    ("yaleb", 2432, 224, 64, 0.5, "dplloyd", 10.196, 1.693, 10, 0.09),
    ("yaleb", 2432, 224, 64, 0.5, "dplloyd_n", 9.103, 1.131, 10, 0.07),
    ("yaleb", 2432, 224, 64, 0.5, "dplloyd_old_default", 21.041, 1.541, 5, 0.16),
    ("yaleb", 2432, 224, 64, 0.5, "dplloyd_sphere", 12.44, 1.867, 10, 0.05),
    ("yaleb", 2432, 224, 64, 0.5, "lsh_coreset", 6.473, 0.539, 5, 0.02),
    ("yaleb", 2432, 224, 64, 1.0, "balcan", 4.965, 0.948, 5, 0.07),
    ("yaleb", 2432, 224, 64, 1.0, "diffprivlib", 7.921, 0.341, 5, 27.26),
    ("yaleb", 2432, 224, 64, 1.0, "dplloyd", 7.246, 0.578, 10, 0.06),
    ("yaleb", 2432, 224, 64, 1.0, "dplloyd_n", 6.887, 0.478, 10, 0.07),
    ("yaleb", 2432, 224, 64, 1.0, "dplloyd_old_default", 15.911, 2.174, 5, 0.2),
    ("yaleb", 2432, 224, 64, 1.0, "dplloyd_sphere", 7.896, 0.939, 10, 0.06),
    ("yaleb", 2432, 224, 64, 1.0, "lsh_coreset", 5.174, 0.298, 5, 0.03),
    ("yaleb", 2432, 224, 64, 2.0, "balcan", 3.213, 0.111, 5, 0.08),
    ("yaleb", 2432, 224, 64, 2.0, "diffprivlib", 7.058, 0.28, 5, 16.75),
    ("yaleb", 2432, 224, 64, 2.0, "dplloyd", 5.87, 0.294, 10, 0.06),
    ("yaleb", 2432, 224, 64, 2.0, "dplloyd_n", 5.357, 0.456, 10, 0.06),
    ("yaleb", 2432, 224, 64, 2.0, "dplloyd_old_default", 9.787, 0.89, 5, 0.11),
    ("yaleb", 2432, 224, 64, 2.0, "dplloyd_sphere", 5.799, 0.408, 10, 0.06),
    ("yaleb", 2432, 224, 64, 2.0, "lsh_coreset", 4.339, 0.127, 5, 0.04),
    ("yaleb_heldout", 1216, 56, 8, 0.5, "balcan", 3.869, 0.233, 5, 0.04),
    ("yaleb_heldout", 1216, 56, 8, 0.5, "diffprivlib", 6.372, 0.82, 5, 0.52),
    ("yaleb_heldout", 1216, 56, 8, 0.5, "dplloyd", 4.626, 0.325, 10, 0.01),
    ("yaleb_heldout", 1216, 56, 8, 0.5, "dplloyd_n", 4.361, 0.341, 10, 0.01),
    ("yaleb_heldout", 1216, 56, 8, 0.5, "dplloyd_old_default", 9.752, 1.578, 5, 0.01),
    ("yaleb_heldout", 1216, 56, 8, 0.5, "dplloyd_sphere", 4.431, 0.479, 10, 0.01),
    ("yaleb_heldout", 1216, 56, 8, 0.5, "lsh_coreset", 3.62, 0.553, 5, 0.03),
    ("yaleb_heldout", 1216, 56, 8, 1.0, "balcan", 2.935, 0.308, 5, 0.06),
    ("yaleb_heldout", 1216, 56, 8, 1.0, "diffprivlib", 6.019, 1.195, 5, 0.49),
    ("yaleb_heldout", 1216, 56, 8, 1.0, "dplloyd", 3.646, 0.192, 10, 0.01),
    ("yaleb_heldout", 1216, 56, 8, 1.0, "dplloyd_n", 3.456, 0.361, 10, 0.01),
    ("yaleb_heldout", 1216, 56, 8, 1.0, "dplloyd_old_default", 6.265, 1.109, 5, 0.02),
    ("yaleb_heldout", 1216, 56, 8, 1.0, "dplloyd_sphere", 3.456, 0.361, 10, 0.01),
    ("yaleb_heldout", 1216, 56, 8, 1.0, "lsh_coreset", 3.028, 0.426, 5, 0.04),
    ("yaleb_heldout", 1216, 56, 8, 2.0, "balcan", 2.448, 0.376, 5, 0.15),
    ("yaleb_heldout", 1216, 56, 8, 2.0, "diffprivlib", 4.179, 0.333, 5, 0.53),
    ("yaleb_heldout", 1216, 56, 8, 2.0, "dplloyd", 2.863, 0.637, 10, 0.01),
    ("yaleb_heldout", 1216, 56, 8, 2.0, "dplloyd_n", 2.863, 0.637, 10, 0.01),
    ("yaleb_heldout", 1216, 56, 8, 2.0, "dplloyd_old_default", 4.993, 0.509, 5, 0.01),
    ("yaleb_heldout", 1216, 56, 8, 2.0, "dplloyd_sphere", 3.065, 0.351, 10, 0.01),
    ("yaleb_heldout", 1216, 56, 8, 2.0, "lsh_coreset", 2.055, 0.177, 5, 0.07),
    ("yaleb_heldout", 1216, 56, 16, 0.5, "balcan", 5.462, 0.281, 5, 0.08),
    ("yaleb_heldout", 1216, 56, 16, 0.5, "diffprivlib", 11.157, 1.325, 5, 1.25),
    ("yaleb_heldout", 1216, 56, 16, 0.5, "dplloyd", 6.324, 0.821, 10, 0.02),
    ("yaleb_heldout", 1216, 56, 16, 0.5, "dplloyd_n", 5.815, 0.494, 10, 0.02),
    ("yaleb_heldout", 1216, 56, 16, 0.5, "dplloyd_old_default", 14.128, 4.346, 5, 0.04),
    ("yaleb_heldout", 1216, 56, 16, 0.5, "dplloyd_sphere", 6.544, 0.759, 10, 0.01),
    ("yaleb_heldout", 1216, 56, 16, 0.5, "lsh_coreset", 5.139, 0.259, 5, 0.05),
    ("yaleb_heldout", 1216, 56, 16, 1.0, "balcan", 3.724, 0.342, 5, 0.08),
    ("yaleb_heldout", 1216, 56, 16, 1.0, "diffprivlib", 7.998, 1.668, 5, 1.41),
    ("yaleb_heldout", 1216, 56, 16, 1.0, "dplloyd", 4.791, 0.483, 10, 0.01),
    ("yaleb_heldout", 1216, 56, 16, 1.0, "dplloyd_n", 4.56, 0.508, 10, 0.01),
    ("yaleb_heldout", 1216, 56, 16, 1.0, "dplloyd_old_default", 8.233, 1.27, 5, 0.04),
    ("yaleb_heldout", 1216, 56, 16, 1.0, "dplloyd_sphere", 4.437, 0.407, 10, 0.01),
    ("yaleb_heldout", 1216, 56, 16, 1.0, "lsh_coreset", 3.667, 0.351, 5, 0.2),
    ("yaleb_heldout", 1216, 56, 16, 2.0, "balcan", 2.758, 0.097, 5, 0.1),
    ("yaleb_heldout", 1216, 56, 16, 2.0, "diffprivlib", 5.446, 0.54, 5, 1.03),
    ("yaleb_heldout", 1216, 56, 16, 2.0, "dplloyd", 3.723, 0.499, 10, 0.01),
    ("yaleb_heldout", 1216, 56, 16, 2.0, "dplloyd_n", 3.723, 0.499, 10, 0.03),
    ("yaleb_heldout", 1216, 56, 16, 2.0, "dplloyd_old_default", 5.792, 0.116, 5, 0.04),
    ("yaleb_heldout", 1216, 56, 16, 2.0, "dplloyd_sphere", 3.633, 0.609, 10, 0.02),
    ("yaleb_heldout", 1216, 56, 16, 2.0, "lsh_coreset", 3.009, 0.299, 5, 0.09),
    ("yaleb_heldout", 1216, 56, 64, 0.5, "balcan", 9.385, 0.317, 5, 0.1),
    ("yaleb_heldout", 1216, 56, 64, 0.5, "diffprivlib", 13.594, 1.8, 5, 3.07),
    ("yaleb_heldout", 1216, 56, 64, 0.5, "dplloyd", 10.511, 1.096, 10, 0.03),
    ("yaleb_heldout", 1216, 56, 64, 0.5, "dplloyd_n", 9.712, 0.9, 10, 0.03),
    ("yaleb_heldout", 1216, 56, 64, 0.5, "dplloyd_old_default", 24.925, 2.62, 5, 0.03),
    ("yaleb_heldout", 1216, 56, 64, 0.5, "dplloyd_sphere", 10.916, 1.834, 10, 0.03),
    ("yaleb_heldout", 1216, 56, 64, 0.5, "lsh_coreset", 8.602, 0.827, 5, 0.05),
    ("yaleb_heldout", 1216, 56, 64, 1.0, "balcan", 7.673, 1.364, 5, 0.07),
    ("yaleb_heldout", 1216, 56, 64, 1.0, "diffprivlib", 11.886, 1.11, 5, 1.95),
    ("yaleb_heldout", 1216, 56, 64, 1.0, "dplloyd", 8.093, 0.811, 10, 0.03),
    ("yaleb_heldout", 1216, 56, 64, 1.0, "dplloyd_n", 7.552, 0.738, 10, 0.04),
    ("yaleb_heldout", 1216, 56, 64, 1.0, "dplloyd_old_default", 13.623, 0.688, 5, 0.02),
    ("yaleb_heldout", 1216, 56, 64, 1.0, "dplloyd_sphere", 8.288, 0.474, 10, 0.05),
    ("yaleb_heldout", 1216, 56, 64, 1.0, "lsh_coreset", 6.293, 0.585, 5, 0.03),
    ("yaleb_heldout", 1216, 56, 64, 2.0, "balcan", 4.872, 0.989, 5, 0.09),
    ("yaleb_heldout", 1216, 56, 64, 2.0, "diffprivlib", 9.142, 0.506, 5, 1.88),
    ("yaleb_heldout", 1216, 56, 64, 2.0, "dplloyd", 6.623, 1.38, 10, 0.04),
    ("yaleb_heldout", 1216, 56, 64, 2.0, "dplloyd_n", 6.596, 1.307, 10, 0.04),
    ("yaleb_heldout", 1216, 56, 64, 2.0, "dplloyd_old_default", 10.243, 0.384, 5, 0.03),
    ("yaleb_heldout", 1216, 56, 64, 2.0, "dplloyd_sphere", 6.334, 0.894, 10, 0.04),
    ("yaleb_heldout", 1216, 56, 64, 2.0, "lsh_coreset", 5.05, 0.754, 5, 0.05),
)

RELATIONS = ("add_remove", "replace")


@dataclass(frozen=True)
class KMeansRecommendation:
    """A private k-means to use: ``estimator`` (a class name in ``privclust.core``) with
    ``params`` (add ``bounds`` and ``n_clusters``), its ``expected_relative_sse`` on the nearest
    measured cells, and the ``evidence`` rows behind the choice."""

    estimator: str
    params: dict
    expected_relative_sse: float
    reason: str
    evidence: tuple = field(default=(), repr=False)


def _distance(row, n, d, k, epsilon):
    return math.fsum(
        math.log(a / b) ** 2 for a, b in ((row[1], n), (row[2], d), (row[3], k), (row[4], epsilon))
    )


def recommend_kmeans(n, d, k, epsilon, relation="add_remove", n_cells=3, evidence=None):
    """The private k-means estimator to pick for n records in d dimensions, k clusters and
    privacy parameter epsilon, from the measured benchmark cells.

    Parameters
    ----------
    n : int
        A public (declared) estimate of the number of records; under ``add_remove`` it is not
        read from the data, and it is passed on as DPLloyd's ``expected_n_samples``.
    d, k : int
        Dimension and number of clusters.
    epsilon : float
        Total privacy parameter.
    relation : {"add_remove", "replace"}, default="add_remove"
        Neighbouring relation of the release; the recommended estimator is configured for it.
    n_cells : int, default=3
        Number of nearest measured (data set, k, epsilon) cells that decide.
    evidence : tuple of rows or None
        Rows as in :data:`EVIDENCE` (the default).

    Returns
    -------
    KMeansRecommendation

    Notes
    -----
    Each candidate's score is the mean, over the nearest cells where it was measured, of its
    mean relative SSE divided by the best privclust method's in that cell; ties go to the faster
    method. Only privclust estimators are recommended; the peers' rows are kept as evidence.
    """
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    k = check_positive_int(k, "k")
    epsilon = epsilon_param(epsilon)
    check_choice(relation, "relation", RELATIONS)
    n_cells = check_positive_int(n_cells, "n_cells")
    rows = [r for r in (EVIDENCE if evidence is None else evidence) if r[5] in ESTIMATORS]
    if not rows:
        raise ValueError("no evidence rows for any privclust k-means estimator")
    cells = {}
    for r in rows:
        cells.setdefault(r[:5], []).append(r)
    nearest = sorted(cells, key=lambda c: _distance(c, n, d, k, epsilon))[:n_cells]
    scores = {}
    for cell in nearest:
        best = min(r[6] for r in cells[cell])
        for r in cells[cell]:
            scores.setdefault(r[5], []).append((r[6] / best, r[6], r[9]))
    method = min(
        scores,
        key=lambda m: (sum(s[0] for s in scores[m]) / len(scores[m]), sum(s[2] for s in scores[m])),
    )
    name, params = ESTIMATORS[method]
    params = {**params, "epsilon": epsilon, "neighbouring": relation}
    if name == "DPLloyd" and relation == "add_remove":
        params["expected_n_samples"] = n
    used = tuple(r for cell in nearest for r in cells[cell])
    expected = sum(s[1] for s in scores[method]) / len(scores[method])
    where = "; ".join(f"{c[0]} (n={c[1]}, d={c[2]}, k={c[3]}, eps={c[4]:g})" for c in nearest)
    return KMeansRecommendation(
        name, params, expected, f"lowest relative SSE on the nearest measured cells: {where}", used
    )
