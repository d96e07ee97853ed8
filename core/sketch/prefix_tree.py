"""A private prefix tree over data-independent hash bits: noisy counts decide, level by level,
which buckets are refined (the LSH coreset of Chang & Kamath 2021 and DPHD's private partition,
Balcan et al. 2017).

Each record carries L public-function hash bits (drawn independently of the data); its bucket at
level l is its first l bits. Level 0 is the root. At each level the two children of every
branching bucket get a noisy count, including children that hold no record, so which buckets
exist never depends on the data except through noisy counts. A record sits in exactly one bucket
per level, so each level's count vector has sensitivity 1 (L1 and L2) under add/remove and 2
(L1) or sqrt(2) (L2) under replace-one; levels compose. Children below ``keep`` are pruned;
kept children at or above ``branch`` are refined; the others are leaves (and so is a branching
bucket whose children were all pruned). Leaves are disjoint, so one record is in at most one.

With Gaussian noise all levels (and any further Gaussian release of the same fit) compose
exactly as mu-GDP, mu^2 = sum of mu_i^2 (Dong, Roth & Su 2022, Cor. 3.3), converted to
(epsilon, delta) by the Gaussian's exact privacy curve (Balle & Wang 2018, Thm. 8).

References
----------
Chang, A. and Kamath, P. (2021). Practical differentially private clustering. Google Research
    (the LSH prefix tree and its noisy counts).
Balcan, M.-F., Dick, T., Liang, Y., Mou, W. and Zhang, H. (2017). Differentially private
    clustering in high-dimensional Euclidean spaces. ICML 2017, Sec. 3 (the private partition).
Dong, J., Roth, A. and Su, W. J. (2022). Gaussian differential privacy. J. R. Stat. Soc. B 84(1),
    3-37, Cor. 3.3 (composition of Gaussian mechanisms).
"""

from dataclasses import dataclass

import numpy as np

from ..privacy import analytic_gaussian_sigma
from ..privacy._validation import check_rng, check_size

NOISES = ("gaussian", "laplace")


def gdp_mu(epsilon, delta):
    """The mu of the mu-GDP (Gaussian, sensitivity 1, sigma = 1/mu) mechanism that is exactly
    (epsilon, delta)-DP.

    References
    ----------
    Balle, B. and Wang, Y.-X. (2018). Improving the Gaussian mechanism for differential privacy:
        analytical calibration and optimal denoising. ICML 2018, Thm. 8.
    Dong, J., Roth, A. and Su, W. J. (2022). Gaussian differential privacy. J. R. Stat. Soc. B
        84(1), 3-37, Cor. 2.13 (mu-GDP and its (epsilon, delta) curve).
    """
    return 1.0 / analytic_gaussian_sigma(epsilon, delta, 1.0)


def noisy_counts(groups, n_groups, scale, noise, rng, size=None):
    """Counts of ``groups`` labels in [0, n_groups) (label -1 ignored) plus i.i.d. Gaussian
    (``scale`` = sigma) or Laplace (``scale`` = b) noise on every group, empty ones included.
    ``size=N`` prepends a batch axis (N independent releases, for audits)."""
    rng = check_rng(rng)
    g = np.asarray(groups)
    counts = np.bincount(g[g >= 0], minlength=n_groups).astype(np.float64)
    return add_noise(counts, scale, noise, rng, size)


def add_noise(values, scale, noise, rng, size=None):
    """``values`` plus i.i.d. Gaussian (``scale`` = sigma) or Laplace (``scale`` = b) noise;
    ``size=N`` prepends a batch axis."""
    shape = check_size(size) + np.shape(values)
    draw = rng.normal if noise == "gaussian" else rng.laplace
    return values + draw(0.0, scale, size=shape)


def children(node, bits, pos):
    """Each record's child bucket at the next level: ``2 pos[node] + bit`` for records whose
    bucket ``node`` branches (``pos``: index among the branching buckets, -1 if it does not),
    -1 for the others."""
    child = np.full(node.shape[0], -1, dtype=np.int64)
    inside = node >= 0
    child[inside] = pos[node[inside]]
    ok = child >= 0
    child[ok] = 2 * child[ok] + bits[ok]
    return child


def kept(child, renum):
    """Each record's bucket among the kept children (``renum``: child -> kept index or -1)."""
    node = np.full(child.shape[0], -1, dtype=np.int64)
    ok = child >= 0
    node[ok] = renum[child[ok]]
    return node


def leaf_ids(history, is_leaf):
    """Each record's leaf id (in the order of :attr:`PrivateTree.leaves`; -1 when its bucket
    was pruned) from its bucket at every level (``history``)."""
    n = history[0].shape[0]
    record_leaf = np.full(n, -1, dtype=np.int64)
    start = 0
    for node, leaf in zip(history, is_leaf, strict=False):
        ids = np.full(len(leaf), -1, dtype=np.int64)
        ids[leaf] = start + np.arange(int(leaf.sum()))
        start += int(leaf.sum())
        mine = node >= 0
        hit = np.full(n, -1, dtype=np.int64)
        hit[mine] = ids[node[mine]]
        record_leaf = np.where(hit >= 0, hit, record_leaf)
    return record_leaf


def walk(bits, kept_root, steps):
    """Every record's bucket at each level of a grown tree: ``steps`` holds, per level below
    the root, (pos, renum) as in :func:`children` and :func:`kept`. Returns the list of
    (n,) bucket arrays, the root's first."""
    node = np.full(bits.shape[0], 0 if kept_root else -1, dtype=np.int64)
    history = [node]
    for level, (pos, renum) in enumerate(steps, start=1):
        node = kept(children(node, bits[:, level - 1], pos), renum)
        history.append(node)
    return history


class RecordPrefixes:
    """Exact bucket counts of records whose hash bits ((n, L) bool) are in memory: what
    :func:`grow_tree` reads (a Dask data set has its own counter, with the same methods)."""

    def __init__(self, bits):
        self.bits = np.asarray(bits)
        self.depth = self.bits.shape[1]
        self.history = []
        self._child = None

    def root_count(self):
        return np.array([float(self.bits.shape[0])])

    def start(self, kept_root):
        self.history = [np.full(self.bits.shape[0], 0 if kept_root else -1, dtype=np.int64)]

    def child_counts(self, level, pos, n_children):
        self._child = children(self.history[-1], self.bits[:, level - 1], pos)
        c = self._child
        return np.bincount(c[c >= 0], minlength=n_children).astype(np.float64)

    def keep(self, pos, renum):
        self.history.append(kept(self._child, renum))

    def record_leaf(self, is_leaf):
        return leaf_ids(self.history, is_leaf)


@dataclass
class PrivateTree:
    """The released tree: per level, each kept bucket's parent (index into the previous level),
    its last bit and its noisy count, and whether it is a leaf; plus, not released, each
    record's leaf (-1 when its bucket was pruned), for the leaves' noisy sums."""

    parents: list
    bits: list
    counts: list
    is_leaf: list
    record_leaf: np.ndarray

    @property
    def leaves(self):
        """(level, index) of every leaf, in the order of the leaf ids of ``record_leaf``."""
        return [(lv, int(i)) for lv, mask in enumerate(self.is_leaf) for i in np.flatnonzero(mask)]

    @property
    def leaf_counts(self):
        return np.concatenate([c[m] for c, m in zip(self.counts, self.is_leaf, strict=True)])


def grow_tree(bits, count_scale, noise, keep, branch, rng):
    """Grow the private prefix tree of the records' hash ``bits`` ((n, L) bool).

    ``keep`` (float) and ``branch`` (callable of the root's noisy count -> float) are public
    thresholds on noisy counts; ``count_scale`` is the per-level noise scale (Gaussian sigma or
    Laplace b, ``noise``). Returns a :class:`PrivateTree`. Only noisy counts decide its shape.
    """
    return grow_from_counts(RecordPrefixes(bits), count_scale, noise, keep, branch, rng)


def grow_from_counts(prefixes, count_scale, noise, keep, branch, rng):
    """:func:`grow_tree` reading the records only through ``prefixes`` (a
    :class:`RecordPrefixes`, or a Dask data set's counter): the exact counts of the root and of
    the children of each level's branching buckets; every noise draw is made here, in order.
    ``record_leaf`` is None when ``prefixes`` cannot return it (the records stay on Dask)."""
    depth = prefixes.depth
    root = add_noise(prefixes.root_count(), count_scale, noise, rng)
    branch_at = float(branch(float(root[0])))
    parents, bit_list, counts = [np.array([-1])], [np.array([0])], [root]
    kept_root = bool(root[0] >= keep)
    prefixes.start(kept_root)
    branched = [np.array([kept_root and depth > 0 and root[0] >= branch_at])]
    is_leaf = [np.array([kept_root and not branched[0][0]])]
    for level in range(1, depth + 1):
        split = np.flatnonzero(branched[-1])
        if split.size == 0:
            break
        pos = np.full(len(counts[-1]), -1)
        pos[split] = np.arange(split.size)
        c = add_noise(prefixes.child_counts(level, pos, 2 * split.size), count_scale, noise, rng)
        kept_ = np.flatnonzero(c >= keep)
        has_child = np.zeros(split.size, dtype=bool)
        has_child[kept_ // 2] = True
        is_leaf[-1][split[~has_child]] = True  # all its children pruned: it stays a leaf
        renum = np.full(2 * split.size, -1)
        renum[kept_] = np.arange(kept_.size)
        prefixes.keep(pos, renum)
        parents.append(split[kept_ // 2])
        bit_list.append(kept_ % 2)
        counts.append(c[kept_])
        br = (c[kept_] >= branch_at) & (level < depth)
        branched.append(br)
        is_leaf.append(~br)
    return PrivateTree(parents, bit_list, counts, is_leaf, prefixes.record_leaf(is_leaf))
