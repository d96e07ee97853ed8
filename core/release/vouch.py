"""What the door vouches for: a request's estimator rebuilt from values it can check.

The Curator never runs an object the caller made. It reads the request's parameters, accepts
only exact built-in values (``bool``, ``int``, ``float``, ``str``, ``None``, exact tuples and
lists of them), exact ``numpy.ndarray`` of a numeric dtype (copied), numpy scalars (converted to
the built-in of the same value) and the exact privclust parameter classes (a named solver, the
1-cluster aggregator: rebuilt from their own vouched parameters), and builds a fresh estimator
of an exact trusted class from them. A subclass of ``float`` could compute its noise from
another value than the one the plan and the ledger record; a callable or another class could
read the records; neither passes.
"""

import inspect
from collections.abc import Collection
from typing import Any

import numpy as np

_BUILTINS = (bool, int, float, str, type(None))
_NUMERIC_KINDS = "biuf"


class PrivacyRefused(ValueError):
    """A request the curator refuses before anything is charged or run."""


class NotPrivate(PrivacyRefused):
    """A refused request whose plan is not private (a baseline, a Gibbs chain started from a
    non-private solution): it may run only in the data owner view."""


def vouch_value(value: Any, name: str) -> Any:
    """``value`` as an exact built-in (or a copied numeric ndarray, or a tuple/list of
    vouched values); PrivacyRefused naming ``name`` for anything else."""
    kind = type(value)
    if kind in _BUILTINS:
        return value
    if kind in (tuple, list):
        return kind(vouch_value(v, f"{name}[{i}]") for i, v in enumerate(value))
    if kind is np.ndarray:
        if value.dtype.kind not in _NUMERIC_KINDS:
            raise PrivacyRefused(
                f"parameter {name} is an array of dtype {value.dtype}: only "
                "numeric arrays are accepted"
            )
        return np.array(value, copy=True)
    if kind.__module__ == "numpy" and isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    raise PrivacyRefused(
        f"parameter {name} is a {kind.__module__}.{kind.__qualname__}: the curator accepts only "
        "exact built-in values (bool, int, float, str, None, tuples of them), numeric numpy "
        "arrays and privclust's named parameter classes"
    )


def vouch_params(
    params: dict[str, Any], parameter_classes: Collection[type], prefix: str = ""
) -> dict[str, Any]:
    """Every parameter of ``params`` vouched (see :func:`vouch_value`); an object of an exact
    class in ``parameter_classes`` is rebuilt from its own vouched ``get_params()``."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        name = prefix + key
        if type(value) in parameter_classes:
            out[key] = type(value)(
                **vouch_params(_init_params(value), parameter_classes, name + ".")
            )
        else:
            out[key] = vouch_value(value, name)
    return out


def _init_params(obj: Any) -> dict[str, Any]:
    """The constructor parameters of a parameter object, read from its attributes."""
    names = [p for p in inspect.signature(type(obj)).parameters if p not in ("args", "kwargs")]
    return {name: getattr(obj, name) for name in names}


def vouched_clone(
    estimator: Any, trusted: Collection[type], parameter_classes: Collection[type]
) -> Any:
    """A fresh estimator of ``estimator``'s exact class, built from its vouched parameters,
    with ``random_state=None`` (fresh OS entropy) and ``ledger=None`` (the curator pays).

    Raises :class:`PrivacyRefused` for a class outside ``trusted`` or a parameter the door
    cannot vouch for.
    """
    cls = type(estimator)
    if not callable(getattr(estimator, "public_plan", None)):
        raise NotPrivate(
            f"{cls.__name__} is not a private estimator: non-private baselines run only in the "
            "data owner view (Curator.owner_fit), marked NOT PRIVATE"
        )
    if cls not in trusted:
        raise PrivacyRefused(
            f"{cls.__module__}.{cls.__qualname__} is not one of privclust.core's private "
            "estimators: the curator runs only code the operator trusts (Curator(..., "
            "trusted=(YourClass,)) adds a class)"
        )
    params = {
        k: v
        for k, v in estimator.get_params(deep=False).items()
        if k not in ("random_state", "ledger")
    }
    return cls(**vouch_params(params, parameter_classes), random_state=None, ledger=None)
