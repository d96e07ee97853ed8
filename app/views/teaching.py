"""Plain-words teaching text shown beside each view (what each view shows and what it
costs, for readers new to differential privacy). Static, trusted Markdown."""

DEMO_BANNER = (
    "**Demo data: nothing is spent.** These are public synthetic or bundled data; "
    "results follow the sliders and no privacy budget is used."
)

PRIVATE_BANNER = (
    "**PRIVATE data{name}.** Nothing runs until you press **Release**; each release "
    "is charged to this dataset's budget before it runs. Budget: spent "
    "ε {spent:g} of {total:g} (remaining {remaining:g})."
)

OWNER_WARNING = (
    "**Data owner view is on: plots marked _not private_ are computed on the raw "
    "data.** Never share them as private results."
)

CLUSTERS = """**What am I looking at?** Each dot is a record, drawn in two dimensions. On the
left is the private result, on the right the ordinary (non-private) one, on the same axes.
Crosses are cluster centres, circles are balls, coloured lines are subspace directions. The
smaller epsilon is, the more noise the private answer carries: watch the left plot drift away
from the right one as you move epsilon down. On private data without the data owner view only
the released result is drawn (no records), on fixed public axes."""

SUBSPACES = """**How to read it.** Each cell compares one private subspace (row) with one
reference subspace (column): 0 means the same subspace, larger means further apart (projector
distance). A good private result has one small number in each row. The Wasserstein distance
summarises the whole matching in one number (lower is better)."""

COCLUSTERS = """**How to read it.** The matrix is reordered so that rows of the same row cluster
and columns of the same column cluster sit together: a good co-clustering shows dark blocks.
DP-τCC releases a *noisy* contingency table (counts per row-cluster x column-cluster block):
compare it with the exact table to see how much noise epsilon adds. DP-τCC protects one cell of
the matrix, not a whole row."""

GIBBS = """**What is happening?** The Gibbs sampler draws subspaces from a distribution that
is epsilon-differentially private *in the limit*; several independent chains run at once.
When the chains have mixed, their traces overlap and R-hat approaches 1. The test statistic
falls towards 0 as a chain moves, but it is just as small for a chain stuck in a poor local
optimum (measured: benchmarks/results/subspace/stuck_chains.md); a stuck chain shows up as a
cost trace apart from the others and an R-hat well above 1.1. Only one chain, chosen
independently of the data, is released at the end; intermediate states are never released.
On private data without the data owner view you see progress only (cost and distance traces
are computed on the raw data)."""

TRADEOFF = """**The price of privacy.** Each point is the median over trials of the utility at
one epsilon (the band spans the middle half of the trials). Utility usually improves as epsilon
grows: pick the smallest epsilon whose utility you can live with. Sweeps run on demo data only
(on private data every point would spend budget)."""

REPORT = """**The report** states what was released, the privacy guarantee and the mechanisms
that spent the budget. Metrics marked *evaluation only* use the raw data and are not private;
downloads contain only released outputs and public settings. To save any plot as a PNG, use the
save button in the plot's toolbar (the plot is drawn in your browser: nothing is uploaded)."""
