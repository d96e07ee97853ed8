"""Neighbouring data sets for the 1-cluster audits (GoodRadius, RecConcave): 30 distinct grid
points in [0, 0.63]; the neighbour moves one of them (index 23) to the far end, 63/64."""

import numpy as np

GRID_POINTS = [8, 11, 9, 28, 13, 39, 4, 2, 26, 23, 27, 32, 14, 34, 0]
GRID_POINTS += [15, 25, 6, 12, 22, 3, 20, 16, 19, 7, 29, 17, 38, 35, 40]
X = np.array(GRID_POINTS, dtype=float)[:, None] / 64
XP = X.copy()
XP[23] = 63 / 64
