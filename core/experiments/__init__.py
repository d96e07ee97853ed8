"""Privacy-utility experiments: generic utility-versus-epsilon sweeps (the
privacy-utility figures of the four papers: Wang, Wang & Singh, NIPS 2015, Fig. 2; Schellekens et
al., SPARS 2019, Fig. 1; Battaglia & Pensa, SDM 2025, Fig. 2; and our 1-cluster benchmark).

Used by the dashboard's trade-off view, the notebooks and benchmarks/. UI-agnostic: progress
and cancellation are plain callables.
"""

from .planner import PlanResult, PublicFacts, Target, parse_target, plan_utility
from .sweep import run_sweep, summarise, trial_seeds

__all__ = [
    "run_sweep",
    "summarise",
    "trial_seeds",
    "plan_utility",
    "PublicFacts",
    "Target",
    "PlanResult",
    "parse_target",
]
