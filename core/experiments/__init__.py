"""Privacy-utility experiments: generic utility-versus-epsilon sweeps (spec algorithms.md 7).

Used by the dashboard's trade-off view, the notebooks and benchmarks/. UI-agnostic: progress
and cancellation are plain callables.
"""
from .planner import PlanResult, PublicFacts, Target, parse_target, plan_utility
from .sweep import run_sweep, summarise, trial_seeds

__all__ = ["run_sweep", "summarise", "trial_seeds", "plan_utility", "PublicFacts", "Target",
           "PlanResult", "parse_target"]
