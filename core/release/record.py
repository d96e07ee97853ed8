"""The frozen record of one release: what left the curator, what it cost, and when."""

from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from ..privacy.accounting.guarantee import Guarantee
from .codec import decode, encode


@dataclass(frozen=True, repr=False)
class Release:
    """One private release, immutable and free of references to the data or the estimator.

    The released fitted attributes are also readable as attributes
    (``release.cluster_centers_``).

    Attributes
    ----------
    estimator : str
        The estimator's class name.
    params : dict
        Its public parameters (no seed, no ledger).
    attributes : mapping
        The released fitted attributes (read-only copies).
    guarantee : Guarantee
        The guarantee of the fit.
    cost : tuple of float
        The (epsilon, delta) charged in the ledger's unit ``unit``.
    unit : str
        The ledger's unit.
    charge_id : int or None
        The ledger entry that paid for it.
    time : datetime
        When it was made (UTC).
    key : str
        What makes two requests identical (:func:`~privclust.core.release.store.request_key`).
    id : int or None
        Its number in the release store.
    from_store : bool
        True when this request was answered from the store at no charge.
    randomness : str
        Where its noise came from (always fresh OS entropy).
    notes : tuple of str
        Remarks attached when it was made.

    References
    ----------
    See docs/algorithms.md, section 1 (relations, kinds and ledger units).

    Examples
    --------
    >>> from privclust.core import Curator, DPLloyd, Ledger
    >>> from privclust.core.data import make_gaussian_mixture
    >>> data = make_gaussian_mixture(n_samples=2000, n_features=2, n_clusters=3, random_state=0)
    >>> release = Curator(data.X, Ledger(epsilon=1.0)).release(
    ...     DPLloyd(n_clusters=3, epsilon=0.5, bounds=(-10, 10)))
    >>> release.estimator, release.attributes.keys()
    ('DPLloyd', dict_keys(['cluster_centers_']))
    >>> print(release.guarantee.summary())
    0.5-DP, pure, add/remove-one neighbours
    >>> release.to_dict()["cost"]
    [1.0, 0.0]
    """

    estimator: str
    params: dict[str, Any]
    attributes: MappingProxyType[str, Any]
    guarantee: Guarantee
    cost: tuple[float, float]
    unit: str
    charge_id: int | None
    time: datetime
    key: str
    id: int | None = None
    from_store: bool = False
    randomness: str = "fresh OS entropy (numpy default_rng(None)); any seed was ignored"
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __getattr__(self, name: str) -> Any:
        attributes = object.__getattribute__(self, "attributes")
        if name in attributes:
            return attributes[name]
        raise AttributeError(
            f"release of {object.__getattribute__(self, 'estimator')} has no "
            f"released attribute {name!r}"
        )

    def __repr__(self) -> str:
        names = ", ".join(self.attributes)
        store = ", from the store" if self.from_store else ""
        return (
            f"<Release #{self.id} {self.summary}; {self.time:%Y-%m-%d %H:%M:%S} UTC; "
            f"attributes: {names}{store}>"
        )

    @property
    def summary(self) -> str:
        """One line: what, guarantee, cost."""
        eps, delta = self.cost
        cost = f"epsilon={eps:g}" + (f", delta={delta:g}" if delta else "")
        return f"{self.estimator}: {self.guarantee.summary()}; charged {cost} ({self.unit} unit)"

    def to_dict(self, arrays: list[bytes] | None = None) -> dict[str, Any]:
        """Everything in the release as a JSON-compatible dict (see :mod:`.codec`); with
        ``arrays`` (a list, as the store keeps it) its arrays go there as ``.npy`` blobs."""
        return {
            "estimator": self.estimator,
            "params": encode(self.params, arrays),
            "attributes": encode(dict(self.attributes), arrays),
            "guarantee": self.guarantee.to_dict(),
            "cost": list(self.cost),
            "unit": self.unit,
            "charge_id": self.charge_id,
            "time": self.time.isoformat(),
            "key": self.key,
            "id": self.id,
            "randomness": self.randomness,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(
        cls,
        d: dict[str, Any],
        id: int | None = None,
        from_store: bool = False,
        arrays: list[bytes] | None = None,
    ) -> "Release":
        """Rebuild a release from :meth:`to_dict` (as stored, with its ``arrays``)."""
        g = dict(d["guarantee"])
        for name in ("epsilon", "delta"):
            if isinstance(g[name], str):
                g[name] = float(g[name])
        return cls(
            estimator=d["estimator"],
            params=decode(d["params"], arrays),
            attributes=MappingProxyType(decode(d["attributes"], arrays)),
            guarantee=Guarantee(**g),
            cost=tuple(d["cost"]),
            unit=d["unit"],
            charge_id=d["charge_id"],
            time=datetime.fromisoformat(d["time"]),
            key=d["key"],
            id=d["id"] if id is None else id,
            from_store=from_store,
            randomness=d.get("randomness", cls.randomness),
            notes=tuple(d.get("notes", ())),
        )
