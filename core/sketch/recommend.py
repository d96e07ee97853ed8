"""Which private k-means to use for given public facts (n, d, k, epsilon, relation), from the
real-data benchmark (``benchmarks/sketch/real_data.py``).

The evidence is a table of measured cells: data set, its size and dimension, k, epsilon, method,
mean and standard deviation of the SSE relative to scikit-learn k-means++ (best of 10), number of
runs and seconds per fit, all under add/remove neighbours.  :func:`recommend_kmeans` looks at the
measured cells nearest to the request (in log n, log d, log k, log epsilon) and picks the method
whose SSE is closest to the best of each cell.  A new estimator joins by adding its rows to
:data:`EVIDENCE` and its constructor to :data:`ESTIMATORS`; nothing else changes.

Evidence (relative SSE, mean over 10 runs; CKM, the LSH coreset and Balcan et al. 5 runs, or
fewer where marked; add/remove, delta = 1e-6 for the two (epsilon, delta) methods;
diffprivlib's mechanisms really receive more epsilon than asked, e.g. 1.41 at eps = 1 on Letter,
2.28 on digits and 3.51 on Yale B, because its two shares are unpacked in swapped order):

| data (n x d), k, eps | dplloyd | dplloyd_n | dplloyd_sphere | dplloyd_old_default | ckm | diffprivlib | lsh_coreset | balcan |
|---|---|---|---|---|---|---|---|---|
| digits (1797 x 64), 8, 0.5 | 2.00 | 2.12 | 2.12 | 3.28 | 5.52 [2] | 2.60 | 1.73 | 1.72 |
| digits (1797 x 64), 8, 1 | 1.80 | 1.77 | 1.77 | 2.25 | 5.26 | 1.94 | 1.59 | 1.58 |
| digits (1797 x 64), 8, 2 | 1.64 | 1.64 | 1.62 | 2.33 | - | 1.77 | 1.47 | 1.43 |
| digits (1797 x 64), 16, 0.5 | 3.03 | 2.58 | 2.58 | 3.99 | - | 3.26 | 2.18 | 2.16 |
| digits (1797 x 64), 16, 1 | 2.20 | 2.20 | 2.20 | 3.24 | 6.86 [1] | 2.41 | 1.97 | 1.94 |
| digits (1797 x 64), 16, 2 | 2.05 | 2.05 | 2.04 | 2.62 | - | 2.25 | 1.71 | 1.79 |
| digits (1797 x 64), 64, 0.5 | 5.04 | 4.18 | 4.18 | 6.73 | - | 6.10 | 3.42 | 3.36 |
| digits (1797 x 64), 64, 1 | 3.57 | 3.45 | 3.45 | 4.81 | - | 4.30 | 2.96 | 3.00 |
| digits (1797 x 64), 64, 2 | 3.09 | 3.09 | 3.03 | 4.38 | - | 3.40 | 2.70 | 2.53 |
| letter (20000 x 16), 8, 0.5 | 1.18 | 1.18 | 1.33 | 1.50 | 1.55 | 1.42 | 1.17 | 1.20 |
| letter (20000 x 16), 8, 1 | 1.12 | 1.12 | 1.25 | 1.34 | 1.35 | 1.31 | 1.13 | 1.13 |
| letter (20000 x 16), 8, 2 | 1.11 | 1.11 | 1.26 | 1.22 | 1.26 | 1.24 | 1.12 | 1.08 |
| letter (20000 x 16), 16, 0.5 | 1.40 | 1.40 | 1.54 | 1.86 | 2.06 | 1.77 | 1.44 | 1.51 |
| letter (20000 x 16), 16, 1 | 1.24 | 1.24 | 1.43 | 1.65 | 1.75 | 1.57 | 1.26 | 1.34 |
| letter (20000 x 16), 16, 2 | 1.19 | 1.19 | 1.39 | 1.46 | 1.50 | 1.47 | 1.19 | 1.28 |
| letter (20000 x 16), 64, 0.5 | 2.25 | 2.25 | 2.49 | 3.13 | - | 3.03 | 2.05 | 2.09 |
| letter (20000 x 16), 64, 1 | 1.90 | 1.90 | 2.11 | 2.71 | - | 2.54 | 1.89 | 1.77 |
| letter (20000 x 16), 64, 2 | 1.59 | 1.59 | 1.96 | 2.31 | - | 2.24 | 1.66 | 1.51 |
| yaleb (2432 x 224), 8, 0.5 | 7.05 | 6.68 | 6.68 | 11.48 | - | 6.59 | 3.25 | 3.56 |
| yaleb (2432 x 224), 8, 1 | 4.71 | 4.58 | 4.58 | 8.35 | - | 4.93 | 2.51 | 2.77 |
| yaleb (2432 x 224), 8, 2 | 3.54 | 3.41 | 3.41 | 4.62 | - | 4.00 | 1.92 | 1.75 |
| yaleb (2432 x 224), 16, 0.5 | 9.18 | 8.96 | 8.96 | 14.24 | - | 7.48 | 3.90 | 4.46 |
| yaleb (2432 x 224), 16, 1 | 6.63 | 6.32 | 6.32 | 10.30 | - | 6.42 | 3.37 | 3.04 |
| yaleb (2432 x 224), 16, 2 | 4.53 | 4.46 | 4.46 | 6.52 | - | 5.18 | 2.64 | 2.19 |
| yaleb (2432 x 224), 64, 0.5 | - | 13.70 | - | - | - | - | 6.47 | 6.32 |
| yaleb (2432 x 224), 64, 1 | 12.03 | 10.16 | 11.52 | 15.91 | - | 7.92 | 5.17 | 4.96 |
| yaleb (2432 x 224), 64, 2 | - | 6.70 | - | - | - | - | 4.34 | 3.21 |
"""
import math
from dataclasses import dataclass, field

from ..privacy.estimator import check_choice, check_positive_int, epsilon_param

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
    ('digits', 1797, 64, 8, 0.5, 'balcan', 1.716, 0.036, 5, 0.04),
    ('digits', 1797, 64, 8, 0.5, 'ckm', 5.517, 0.203, 2, 52.06),
    ('digits', 1797, 64, 8, 0.5, 'diffprivlib', 2.599, 0.406, 10, 1.93),
    ('digits', 1797, 64, 8, 0.5, 'dplloyd', 1.998, 0.112, 10, 0.08),
    ('digits', 1797, 64, 8, 0.5, 'dplloyd_n', 2.121, 0.47, 10, 0.06),
    ('digits', 1797, 64, 8, 0.5, 'dplloyd_old_default', 3.283, 0.408, 10, 0.08),
    ('digits', 1797, 64, 8, 0.5, 'dplloyd_sphere', 2.121, 0.47, 10, 0.11),
    ('digits', 1797, 64, 8, 0.5, 'lsh_coreset', 1.731, 0.051, 5, 0.02),
    ('digits', 1797, 64, 8, 1.0, 'balcan', 1.582, 0.091, 5, 0.04),
    ('digits', 1797, 64, 8, 1.0, 'ckm', 5.26, 0.391, 5, 82.69),
    ('digits', 1797, 64, 8, 1.0, 'diffprivlib', 1.936, 0.078, 10, 1.89),
    ('digits', 1797, 64, 8, 1.0, 'dplloyd', 1.804, 0.053, 10, 0.09),
    ('digits', 1797, 64, 8, 1.0, 'dplloyd_n', 1.77, 0.038, 10, 0.08),
    ('digits', 1797, 64, 8, 1.0, 'dplloyd_old_default', 2.251, 0.362, 10, 0.07),
    ('digits', 1797, 64, 8, 1.0, 'dplloyd_sphere', 1.77, 0.038, 10, 0.07),
    ('digits', 1797, 64, 8, 1.0, 'lsh_coreset', 1.595, 0.069, 5, 0.03),
    ('digits', 1797, 64, 8, 2.0, 'balcan', 1.432, 0.109, 5, 0.03),
    ('digits', 1797, 64, 8, 2.0, 'diffprivlib', 1.77, 0.02, 10, 3.78),
    ('digits', 1797, 64, 8, 2.0, 'dplloyd', 1.643, 0.05, 10, 0.06),
    ('digits', 1797, 64, 8, 2.0, 'dplloyd_n', 1.643, 0.05, 10, 0.06),
    ('digits', 1797, 64, 8, 2.0, 'dplloyd_old_default', 2.327, 0.455, 10, 0.06),
    ('digits', 1797, 64, 8, 2.0, 'dplloyd_sphere', 1.625, 0.079, 10, 0.06),
    ('digits', 1797, 64, 8, 2.0, 'lsh_coreset', 1.467, 0.05, 5, 0.03),
    ('digits', 1797, 64, 16, 0.5, 'balcan', 2.163, 0.068, 5, 0.02),
    ('digits', 1797, 64, 16, 0.5, 'diffprivlib', 3.259, 0.52, 10, 2.56),
    ('digits', 1797, 64, 16, 0.5, 'dplloyd', 3.026, 0.708, 10, 0.18),
    ('digits', 1797, 64, 16, 0.5, 'dplloyd_n', 2.581, 0.275, 10, 0.07),
    ('digits', 1797, 64, 16, 0.5, 'dplloyd_old_default', 3.994, 0.452, 10, 0.08),
    ('digits', 1797, 64, 16, 0.5, 'dplloyd_sphere', 2.581, 0.275, 10, 0.07),
    ('digits', 1797, 64, 16, 0.5, 'lsh_coreset', 2.182, 0.098, 5, 0.02),
    ('digits', 1797, 64, 16, 1.0, 'balcan', 1.94, 0.051, 5, 0.03),
    ('digits', 1797, 64, 16, 1.0, 'ckm', 6.859, None, 1, 455.29),
    ('digits', 1797, 64, 16, 1.0, 'diffprivlib', 2.407, 0.16, 10, 3.22),
    ('digits', 1797, 64, 16, 1.0, 'dplloyd', 2.201, 0.048, 10, 0.06),
    ('digits', 1797, 64, 16, 1.0, 'dplloyd_n', 2.204, 0.056, 10, 0.06),
    ('digits', 1797, 64, 16, 1.0, 'dplloyd_old_default', 3.241, 0.7, 10, 0.1),
    ('digits', 1797, 64, 16, 1.0, 'dplloyd_sphere', 2.204, 0.056, 10, 0.08),
    ('digits', 1797, 64, 16, 1.0, 'lsh_coreset', 1.966, 0.061, 5, 0.02),
    ('digits', 1797, 64, 16, 2.0, 'balcan', 1.792, 0.104, 5, 0.03),
    ('digits', 1797, 64, 16, 2.0, 'diffprivlib', 2.249, 0.067, 10, 1.86),
    ('digits', 1797, 64, 16, 2.0, 'dplloyd', 2.052, 0.077, 10, 0.07),
    ('digits', 1797, 64, 16, 2.0, 'dplloyd_n', 2.052, 0.077, 10, 0.07),
    ('digits', 1797, 64, 16, 2.0, 'dplloyd_old_default', 2.619, 0.545, 10, 0.08),
    ('digits', 1797, 64, 16, 2.0, 'dplloyd_sphere', 2.04, 0.098, 10, 0.07),
    ('digits', 1797, 64, 16, 2.0, 'lsh_coreset', 1.709, 0.069, 5, 0.03),
    ('digits', 1797, 64, 64, 0.5, 'balcan', 3.357, 0.04, 5, 0.04),
    ('digits', 1797, 64, 64, 0.5, 'diffprivlib', 6.097, 0.406, 10, 7.19),
    ('digits', 1797, 64, 64, 0.5, 'dplloyd', 5.035, 1.641, 10, 0.11),
    ('digits', 1797, 64, 64, 0.5, 'dplloyd_n', 4.185, 0.534, 10, 0.14),
    ('digits', 1797, 64, 64, 0.5, 'dplloyd_old_default', 6.728, 0.602, 10, 0.1),
    ('digits', 1797, 64, 64, 0.5, 'dplloyd_sphere', 4.185, 0.534, 10, 0.11),
    ('digits', 1797, 64, 64, 0.5, 'lsh_coreset', 3.42, 0.174, 5, 0.02),
    ('digits', 1797, 64, 64, 1.0, 'balcan', 2.997, 0.185, 5, 0.04),
    ('digits', 1797, 64, 64, 1.0, 'diffprivlib', 4.299, 0.919, 10, 6.2),
    ('digits', 1797, 64, 64, 1.0, 'dplloyd', 3.569, 0.226, 10, 0.1),
    ('digits', 1797, 64, 64, 1.0, 'dplloyd_n', 3.449, 0.099, 10, 0.13),
    ('digits', 1797, 64, 64, 1.0, 'dplloyd_old_default', 4.807, 1.061, 10, 0.08),
    ('digits', 1797, 64, 64, 1.0, 'dplloyd_sphere', 3.449, 0.099, 10, 0.1),
    ('digits', 1797, 64, 64, 1.0, 'lsh_coreset', 2.964, 0.139, 5, 0.02),
    ('digits', 1797, 64, 64, 2.0, 'balcan', 2.533, 0.074, 5, 0.07),
    ('digits', 1797, 64, 64, 2.0, 'diffprivlib', 3.398, 0.133, 10, 4.07),
    ('digits', 1797, 64, 64, 2.0, 'dplloyd', 3.086, 0.087, 10, 0.12),
    ('digits', 1797, 64, 64, 2.0, 'dplloyd_n', 3.086, 0.087, 10, 0.13),
    ('digits', 1797, 64, 64, 2.0, 'dplloyd_old_default', 4.381, 0.718, 10, 0.12),
    ('digits', 1797, 64, 64, 2.0, 'dplloyd_sphere', 3.027, 0.134, 10, 0.2),
    ('digits', 1797, 64, 64, 2.0, 'lsh_coreset', 2.699, 0.061, 5, 0.04),
    ('letter', 20000, 16, 8, 0.5, 'balcan', 1.199, 0.074, 5, 0.67),
    ('letter', 20000, 16, 8, 0.5, 'ckm', 1.555, 0.052, 5, 15.96),
    ('letter', 20000, 16, 8, 0.5, 'diffprivlib', 1.422, 0.112, 10, 2.2),
    ('letter', 20000, 16, 8, 0.5, 'dplloyd', 1.183, 0.036, 10, 0.19),
    ('letter', 20000, 16, 8, 0.5, 'dplloyd_n', 1.183, 0.036, 10, 0.14),
    ('letter', 20000, 16, 8, 0.5, 'dplloyd_old_default', 1.501, 0.124, 10, 0.32),
    ('letter', 20000, 16, 8, 0.5, 'dplloyd_sphere', 1.335, 0.119, 10, 0.2),
    ('letter', 20000, 16, 8, 0.5, 'lsh_coreset', 1.174, 0.017, 5, 0.23),
    ('letter', 20000, 16, 8, 1.0, 'balcan', 1.127, 0.055, 5, 2.22),
    ('letter', 20000, 16, 8, 1.0, 'ckm', 1.352, 0.03, 5, 19.5),
    ('letter', 20000, 16, 8, 1.0, 'diffprivlib', 1.306, 0.039, 10, 0.76),
    ('letter', 20000, 16, 8, 1.0, 'dplloyd', 1.124, 0.021, 10, 0.07),
    ('letter', 20000, 16, 8, 1.0, 'dplloyd_n', 1.124, 0.021, 10, 0.13),
    ('letter', 20000, 16, 8, 1.0, 'dplloyd_old_default', 1.342, 0.079, 10, 0.09),
    ('letter', 20000, 16, 8, 1.0, 'dplloyd_sphere', 1.246, 0.045, 10, 0.07),
    ('letter', 20000, 16, 8, 1.0, 'lsh_coreset', 1.131, 0.019, 5, 0.19),
    ('letter', 20000, 16, 8, 2.0, 'balcan', 1.085, 0.032, 5, 4.05),
    ('letter', 20000, 16, 8, 2.0, 'ckm', 1.264, 0.059, 5, 28.04),
    ('letter', 20000, 16, 8, 2.0, 'diffprivlib', 1.244, 0.103, 10, 1.76),
    ('letter', 20000, 16, 8, 2.0, 'dplloyd', 1.108, 0.032, 10, 0.35),
    ('letter', 20000, 16, 8, 2.0, 'dplloyd_n', 1.108, 0.032, 10, 0.17),
    ('letter', 20000, 16, 8, 2.0, 'dplloyd_old_default', 1.216, 0.044, 10, 0.31),
    ('letter', 20000, 16, 8, 2.0, 'dplloyd_sphere', 1.256, 0.106, 10, 0.28),
    ('letter', 20000, 16, 8, 2.0, 'lsh_coreset', 1.119, 0.046, 5, 0.41),
    ('letter', 20000, 16, 16, 0.5, 'balcan', 1.507, 0.188, 5, 3.26),
    ('letter', 20000, 16, 16, 0.5, 'ckm', 2.061, 0.067, 5, 67.39),
    ('letter', 20000, 16, 16, 0.5, 'diffprivlib', 1.769, 0.051, 10, 3.01),
    ('letter', 20000, 16, 16, 0.5, 'dplloyd', 1.403, 0.085, 10, 1.07),
    ('letter', 20000, 16, 16, 0.5, 'dplloyd_n', 1.403, 0.085, 10, 0.18),
    ('letter', 20000, 16, 16, 0.5, 'dplloyd_old_default', 1.863, 0.133, 10, 0.17),
    ('letter', 20000, 16, 16, 0.5, 'dplloyd_sphere', 1.537, 0.069, 10, 0.3),
    ('letter', 20000, 16, 16, 0.5, 'lsh_coreset', 1.437, 0.044, 5, 1.56),
    ('letter', 20000, 16, 16, 1.0, 'balcan', 1.34, 0.057, 5, 3.4),
    ('letter', 20000, 16, 16, 1.0, 'ckm', 1.755, 0.074, 5, 64.32),
    ('letter', 20000, 16, 16, 1.0, 'diffprivlib', 1.571, 0.064, 10, 2.3),
    ('letter', 20000, 16, 16, 1.0, 'dplloyd', 1.237, 0.045, 10, 0.12),
    ('letter', 20000, 16, 16, 1.0, 'dplloyd_n', 1.237, 0.045, 10, 0.24),
    ('letter', 20000, 16, 16, 1.0, 'dplloyd_old_default', 1.647, 0.068, 10, 0.21),
    ('letter', 20000, 16, 16, 1.0, 'dplloyd_sphere', 1.431, 0.068, 10, 0.15),
    ('letter', 20000, 16, 16, 1.0, 'lsh_coreset', 1.265, 0.037, 5, 0.74),
    ('letter', 20000, 16, 16, 2.0, 'balcan', 1.278, 0.082, 5, 2.48),
    ('letter', 20000, 16, 16, 2.0, 'ckm', 1.501, 0.033, 5, 61.81),
    ('letter', 20000, 16, 16, 2.0, 'diffprivlib', 1.467, 0.092, 10, 1.12),
    ('letter', 20000, 16, 16, 2.0, 'dplloyd', 1.185, 0.023, 10, 0.09),
    ('letter', 20000, 16, 16, 2.0, 'dplloyd_n', 1.185, 0.023, 10, 0.19),
    ('letter', 20000, 16, 16, 2.0, 'dplloyd_old_default', 1.456, 0.087, 10, 0.18),
    ('letter', 20000, 16, 16, 2.0, 'dplloyd_sphere', 1.386, 0.082, 10, 0.12),
    ('letter', 20000, 16, 16, 2.0, 'lsh_coreset', 1.193, 0.035, 5, 0.53),
    ('letter', 20000, 16, 64, 0.5, 'balcan', 2.094, 0.053, 5, 2.41),
    ('letter', 20000, 16, 64, 0.5, 'diffprivlib', 3.031, 0.108, 10, 5.5),
    ('letter', 20000, 16, 64, 0.5, 'dplloyd', 2.249, 0.055, 10, 0.24),
    ('letter', 20000, 16, 64, 0.5, 'dplloyd_n', 2.249, 0.055, 10, 0.43),
    ('letter', 20000, 16, 64, 0.5, 'dplloyd_old_default', 3.13, 0.262, 10, 2.78),
    ('letter', 20000, 16, 64, 0.5, 'dplloyd_sphere', 2.489, 0.095, 10, 0.25),
    ('letter', 20000, 16, 64, 0.5, 'lsh_coreset', 2.049, 0.056, 5, 0.47),
    ('letter', 20000, 16, 64, 1.0, 'balcan', 1.766, 0.073, 5, 0.72),
    ('letter', 20000, 16, 64, 1.0, 'diffprivlib', 2.535, 0.088, 10, 10.42),
    ('letter', 20000, 16, 64, 1.0, 'dplloyd', 1.898, 0.05, 10, 0.36),
    ('letter', 20000, 16, 64, 1.0, 'dplloyd_n', 1.898, 0.05, 10, 0.39),
    ('letter', 20000, 16, 64, 1.0, 'dplloyd_old_default', 2.713, 0.166, 10, 0.46),
    ('letter', 20000, 16, 64, 1.0, 'dplloyd_sphere', 2.107, 0.121, 10, 0.33),
    ('letter', 20000, 16, 64, 1.0, 'lsh_coreset', 1.889, 0.037, 5, 0.1),
    ('letter', 20000, 16, 64, 2.0, 'balcan', 1.515, 0.089, 5, 0.73),
    ('letter', 20000, 16, 64, 2.0, 'diffprivlib', 2.243, 0.103, 10, 7.6),
    ('letter', 20000, 16, 64, 2.0, 'dplloyd', 1.592, 0.028, 10, 0.43),
    ('letter', 20000, 16, 64, 2.0, 'dplloyd_n', 1.592, 0.028, 10, 0.47),
    ('letter', 20000, 16, 64, 2.0, 'dplloyd_old_default', 2.313, 0.104, 10, 0.68),
    ('letter', 20000, 16, 64, 2.0, 'dplloyd_sphere', 1.958, 0.089, 10, 0.42),
    ('letter', 20000, 16, 64, 2.0, 'lsh_coreset', 1.655, 0.045, 5, 0.07),
    ('yaleb', 2432, 224, 8, 0.5, 'balcan', 3.562, 0.194, 5, 0.05),
    ('yaleb', 2432, 224, 8, 0.5, 'diffprivlib', 6.591, 1.325, 10, 9.68),
    ('yaleb', 2432, 224, 8, 0.5, 'dplloyd', 7.05, 0.604, 10, 0.11),
    ('yaleb', 2432, 224, 8, 0.5, 'dplloyd_n', 6.683, 0.729, 10, 0.1),
    ('yaleb', 2432, 224, 8, 0.5, 'dplloyd_old_default', 11.477, 1.117, 10, 0.18),
    ('yaleb', 2432, 224, 8, 0.5, 'dplloyd_sphere', 6.683, 0.729, 10, 0.1),
    ('yaleb', 2432, 224, 8, 0.5, 'lsh_coreset', 3.247, 0.346, 5, 0.02),
    ('yaleb', 2432, 224, 8, 1.0, 'balcan', 2.769, 0.554, 5, 0.04),
    ('yaleb', 2432, 224, 8, 1.0, 'diffprivlib', 4.933, 0.822, 10, 7.02),
    ('yaleb', 2432, 224, 8, 1.0, 'dplloyd', 4.706, 0.465, 10, 0.11),
    ('yaleb', 2432, 224, 8, 1.0, 'dplloyd_n', 4.584, 0.443, 10, 0.12),
    ('yaleb', 2432, 224, 8, 1.0, 'dplloyd_old_default', 8.345, 1.483, 10, 0.15),
    ('yaleb', 2432, 224, 8, 1.0, 'dplloyd_sphere', 4.584, 0.443, 10, 0.12),
    ('yaleb', 2432, 224, 8, 1.0, 'lsh_coreset', 2.51, 0.274, 5, 0.03),
    ('yaleb', 2432, 224, 8, 2.0, 'balcan', 1.754, 0.154, 5, 0.04),
    ('yaleb', 2432, 224, 8, 2.0, 'diffprivlib', 4.004, 0.613, 10, 8.23),
    ('yaleb', 2432, 224, 8, 2.0, 'dplloyd', 3.536, 0.105, 10, 0.26),
    ('yaleb', 2432, 224, 8, 2.0, 'dplloyd_n', 3.406, 0.13, 10, 0.12),
    ('yaleb', 2432, 224, 8, 2.0, 'dplloyd_old_default', 4.618, 0.267, 10, 0.22),
    ('yaleb', 2432, 224, 8, 2.0, 'dplloyd_sphere', 3.406, 0.13, 10, 0.18),
    ('yaleb', 2432, 224, 8, 2.0, 'lsh_coreset', 1.917, 0.091, 5, 0.02),
    ('yaleb', 2432, 224, 16, 0.5, 'balcan', 4.456, 0.053, 5, 0.05),
    ('yaleb', 2432, 224, 16, 0.5, 'diffprivlib', 7.477, 0.916, 10, 10.53),
    ('yaleb', 2432, 224, 16, 0.5, 'dplloyd', 9.176, 0.56, 10, 0.08),
    ('yaleb', 2432, 224, 16, 0.5, 'dplloyd_n', 8.96, 0.597, 10, 0.13),
    ('yaleb', 2432, 224, 16, 0.5, 'dplloyd_old_default', 14.24, 2.786, 10, 0.16),
    ('yaleb', 2432, 224, 16, 0.5, 'dplloyd_sphere', 8.96, 0.597, 10, 0.11),
    ('yaleb', 2432, 224, 16, 0.5, 'lsh_coreset', 3.9, 0.197, 5, 0.03),
    ('yaleb', 2432, 224, 16, 1.0, 'balcan', 3.041, 0.158, 5, 0.06),
    ('yaleb', 2432, 224, 16, 1.0, 'diffprivlib', 6.415, 0.597, 10, 18.83),
    ('yaleb', 2432, 224, 16, 1.0, 'dplloyd', 6.627, 0.567, 10, 0.36),
    ('yaleb', 2432, 224, 16, 1.0, 'dplloyd_n', 6.316, 1.172, 10, 0.14),
    ('yaleb', 2432, 224, 16, 1.0, 'dplloyd_old_default', 10.299, 1.799, 10, 0.17),
    ('yaleb', 2432, 224, 16, 1.0, 'dplloyd_sphere', 6.316, 1.172, 10, 0.17),
    ('yaleb', 2432, 224, 16, 1.0, 'lsh_coreset', 3.367, 0.328, 5, 0.04),
    ('yaleb', 2432, 224, 16, 2.0, 'balcan', 2.194, 0.174, 5, 0.06),
    ('yaleb', 2432, 224, 16, 2.0, 'diffprivlib', 5.179, 0.843, 10, 12.7),
    ('yaleb', 2432, 224, 16, 2.0, 'dplloyd', 4.53, 0.241, 10, 0.13),
    ('yaleb', 2432, 224, 16, 2.0, 'dplloyd_n', 4.464, 0.256, 10, 0.4),
    ('yaleb', 2432, 224, 16, 2.0, 'dplloyd_old_default', 6.522, 0.928, 10, 0.15),
    ('yaleb', 2432, 224, 16, 2.0, 'dplloyd_sphere', 4.464, 0.256, 10, 0.11),
    ('yaleb', 2432, 224, 16, 2.0, 'lsh_coreset', 2.64, 0.237, 5, 0.05),
    ('yaleb', 2432, 224, 64, 0.5, 'balcan', 6.321, 0.315, 5, 0.06),
    ('yaleb', 2432, 224, 64, 0.5, 'dplloyd_n', 13.701, 0.815, 10, 0.29),
    ('yaleb', 2432, 224, 64, 0.5, 'lsh_coreset', 6.473, 0.539, 5, 0.02),
    ('yaleb', 2432, 224, 64, 1.0, 'balcan', 4.965, 0.948, 5, 0.07),
    ('yaleb', 2432, 224, 64, 1.0, 'diffprivlib', 7.921, 0.341, 5, 27.26),
    ('yaleb', 2432, 224, 64, 1.0, 'dplloyd', 12.031, 2.578, 5, 0.11),
    ('yaleb', 2432, 224, 64, 1.0, 'dplloyd_n', 10.158, 2.273, 10, 0.26),
    ('yaleb', 2432, 224, 64, 1.0, 'dplloyd_old_default', 15.911, 2.174, 5, 0.2),
    ('yaleb', 2432, 224, 64, 1.0, 'dplloyd_sphere', 11.523, 2.613, 5, 0.1),
    ('yaleb', 2432, 224, 64, 1.0, 'lsh_coreset', 5.174, 0.298, 5, 0.03),
    ('yaleb', 2432, 224, 64, 2.0, 'balcan', 3.213, 0.111, 5, 0.08),
    ('yaleb', 2432, 224, 64, 2.0, 'dplloyd_n', 6.701, 0.237, 10, 0.21),
    ('yaleb', 2432, 224, 64, 2.0, 'lsh_coreset', 4.339, 0.127, 5, 0.04),
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
    return math.fsum(math.log(a / b) ** 2 for a, b in ((row[1], n), (row[2], d), (row[3], k),
                                                       (row[4], epsilon)))


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
    method = min(scores, key=lambda m: (sum(s[0] for s in scores[m]) / len(scores[m]),
                                        sum(s[2] for s in scores[m])))
    name, params = ESTIMATORS[method]
    params = {**params, "epsilon": epsilon, "neighbouring": relation}
    if name == "DPLloyd" and relation == "add_remove":
        params["expected_n_samples"] = n
    used = tuple(r for cell in nearest for r in cells[cell])
    expected = sum(s[1] for s in scores[method]) / len(scores[method])
    where = "; ".join(f"{c[0]} (n={c[1]}, d={c[2]}, k={c[3]}, eps={c[4]:g})" for c in nearest)
    return KMeansRecommendation(name, params, expected,
                                f"lowest relative SSE on the nearest measured cells: {where}",
                                used)
