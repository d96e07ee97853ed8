"""Plan before you spend: predict each private algorithm's utility at each epsilon from public
facts alone, on a synthetic twin of the data.

The planner never sees the private records. It takes :class:`PublicFacts` -- the number of
records (declared by the owner, or public under the replace-one unit), the number of features,
the number of clusters (and the subspace dimension, the column clusters, the ball size, as the
family needs), the public bounds, the algorithm settings and, optionally, a public sample the
owner supplies -- and builds a *twin* with the generators of the four papers
(:mod:`privclust.core.data.synthetic`):

==============  ===========================================  =================================
family          twin                                          algorithms (utility)
==============  ===========================================  =================================
``kmeans``      Gaussian mixture (Schellekens et al., SPARS   CKM, DPLloyd, improved DPLloyd,
                2019, Fig. 1) mapped into the public box, or  LSH coreset, Balcan et al.
                a bootstrap of the public sample              (relative SSE to k-means on the
                                                              twin; lower is better)
``subspace``    union of subspaces (Wang, Wang & Singh,       Gibbs (short chains), SuLQ,
                NIPS 2015, Sec. 5)                            sample-and-aggregate + TSC
                                                              (Wasserstein distance to the
                                                              twin's subspaces; lower)
``onecluster``  planted ball (Nissim, Stemmer & Vadhan,       1-cluster (centre error, radius,
                PODS 2016, which has no experiments; our      coverage of the planted points)
                benchmark)
``cocluster``   latent-block multinomial counts               DP-tauCC (NMI of the released
                                                              row labels; higher)
==============  ===========================================  =================================

The public facts do not say how hard the data are (cluster separation, noise, block signal), so
with ``prior="papers"`` the plan is an *ensemble*: every twin draws its difficulty parameters from a stated
prior, :data:`PRIORS` -- the papers' experimental settings widened by a factor of two (Wang,
Wang & Singh, NIPS 2015, Sec. 5; Schellekens et al., SPARS 2019, Sec. IV; the customary
benchmark for Nissim, Stemmer & Vadhan, PODS 2016; the latent-block twin for Battaglia & Pensa,
SDM 2025) -- and the interval is taken over twins and trials; the recommendation then asks the
pessimistic end of the interval to reach the target. ``prior=None`` (the default, for
backward compatibility) keeps one fixed twin.
Each algorithm runs at every epsilon of the grid on every twin, through
:func:`privclust.core.experiments.sweep.run_sweep` (seeded per trial, joblib optional); the
non-private baseline runs once per twin. The result gives, per algorithm and epsilon, the
median and the 10-90 % quantiles of every metric, and, where a paper gives one, an analytic
predictor beside it: the sketch SNR of Schellekens et al. (Eq. 4) for CKM, the Laplace noise
scale of DPLloyd's centres (Su et al. 2016) and the relative SSE it implies, the noise
multiplier of sample-and-aggregate (Nissim, Raskhodnikova & Smith, STOC 2007, as used by
Wang, Wang & Singh, Alg. 1), and GoodRadius's coverage guarantee t - 4 Gamma.

The twin is public, so seeds are fine here: a plan with the same ``random_state`` is
reproducible. :meth:`PlanResult.recommend` turns a utility target into the smallest epsilon per
algorithm and the cheapest algorithm, with caveats. ``progress(done, total)`` and
``should_stop()`` make it usable from a dashboard thread.

Modules: :mod:`.facts` (:class:`PublicFacts`), :mod:`.twins` (priors, bootstraps,
:func:`build_twin`), :mod:`.scoring` (the algorithms, baselines, scores and analytic
predictors), :mod:`.targets`, :mod:`.result` (:class:`PlanResult`) and :mod:`.run`
(:func:`plan_utility`).
"""

from .facts import DEFAULT_EPSILONS, FAMILIES, PublicFacts
from .result import QUANTILES, PlanResult
from .run import plan_utility
from .scoring import PRIMARY, makers
from .targets import Target, parse_target
from .twins import PRIORS, SAMPLE_RULE, build_twin, draw_structure, smoothing_bandwidth

__all__ = [
    "PublicFacts",
    "Target",
    "PlanResult",
    "plan_utility",
    "build_twin",
    "FAMILIES",
    "makers",
    "parse_target",
    "PRIORS",
    "draw_structure",
    "smoothing_bandwidth",
    "SAMPLE_RULE",
    "PRIMARY",
    "QUANTILES",
    "DEFAULT_EPSILONS",
]
