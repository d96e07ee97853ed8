"""The operator's registry of large private data sets that live in shards (read on Dask).

The operator (trusted) registers a data set by its path and public box (``privclust serve
--dataset NAME=PATH --box LO,HI``, or a registry file). Registration is one streaming pass over
the shards (:meth:`~privclust.core.data.dask_dataset.DaskDataset.register`): every value is
validated (errors name the file, row and column), the budget key is computed, and the records
are counted. Its result is written to a registry file (JSON) named by the setting
``PRIVCLUST_DATASETS``; a server process lists those data sets as private data and rebuilds them
from the file without reading a record again (:func:`registered_datasets`).

An entry is ``{"name", "path", "box": [lo, hi] (numbers, or one list per side),
"n_features" (optional: else the first shard's header gives it), "n_samples" (optional: else the
registration's count, which the operator declares public: under replace-one neighbours the
number of records is public), "sparse" (optional), "description" (optional)}``.

References
----------
Rocklin, M. (2015). Dask: parallel computation with blocked algorithms and task scheduling.
    Proc. 14th Python in Science Conference (SciPy 2015), 130-136.
"""

import json
import os

from .._npy_headers import load_npz_arrays, open_npy
from .dask_dataset import DaskDataset

#: the environment setting naming the registry file of a server
REGISTRY_SETTING = "PRIVCLUST_DATASETS"
_KEYS = {"name", "path", "box", "n_features", "n_samples", "sparse", "description", "registration"}
_cache = {}  # (registry file, mtime) -> {name: DaskDataset}: the operator's, per process


def _check_entry(entry):
    if not isinstance(entry, dict):
        raise ValueError(f"a registry entry must be an object, got {entry!r}")
    unknown = set(entry) - _KEYS
    if unknown:
        raise ValueError(
            f"registry entry {entry.get('name')!r}: unknown key(s) {', '.join(sorted(unknown))}"
        )
    for key in ("name", "path", "box"):
        if key not in entry:
            raise ValueError(f"registry entry {entry.get('name')!r} needs {key!r}")
    name = entry["name"]
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a data set's name must be a non-empty text, got {name!r}")
    box = entry["box"]
    if not (isinstance(box, (list, tuple)) and len(box) == 2):
        raise ValueError(f"data set {name!r}: box must be [lo, hi], got {box!r}")
    return entry


def _shard_features(path):
    """Columns of the first shard, from its header (its layout, not a value)."""
    folder = os.fspath(path)
    files = sorted(f for f in os.listdir(folder)) if os.path.isdir(folder) else [folder]
    for f in files:
        full = os.path.join(folder, f) if os.path.isdir(folder) else f
        low = f.lower()
        if low.endswith(".npy"):
            return int(open_npy(full).shape[1])
        if low.endswith(".npz"):
            return int(load_npz_arrays(full, ["shape"])["shape"][1])
        if low.endswith((".csv", ".tsv", ".txt")):
            sep = "\t" if low.endswith(".tsv") else ","
            with open(full) as fh:
                for line in fh:
                    if line.strip() and not line.startswith("#"):
                        return len(line.split(sep))
    raise ValueError(
        f"{folder}: no .npy, .npz, .csv or .tsv shard to read the number of "
        "features from (give n_features)"
    )


def register_entry(entry, client=None):
    """Register one data set (the operator's validating pass) and return its registry record
    (the entry completed with what registration found). Raises ValueError (or
    :class:`~privclust.core.data.validation.DataFormatError` naming the file, row and column)."""
    entry = dict(_check_entry(entry))
    path = os.path.abspath(os.path.expanduser(entry["path"]))
    sparse = bool(entry.get("sparse", False))
    d = entry.get("n_features")
    d = _shard_features(path) if d is None else d
    n = entry.get("n_samples")
    ds = DaskDataset(
        path,
        n_features=d,
        box=tuple(entry["box"]),
        n_public=n is not None,
        n_samples=n,
        sparse=sparse,
        name=entry["name"],
        description=entry.get("description", ""),
    )
    registration = ds.register(client).registration()
    return dict(
        entry,
        path=path,
        n_features=int(d),
        sparse=sparse,
        n_samples=int(sum(registration["partition_rows"])),
        registration=registration,
    )


def write_registry(records, path):
    """Write registry ``records`` (from :func:`register_entry`) to the JSON file ``path``."""
    with open(path, "w") as f:
        json.dump({"datasets": list(records)}, f, indent=1)


def read_entries(path):
    """The entries of a registry file (a JSON object with a "datasets" list, or a list)."""
    with open(path) as f:
        data = json.load(f)
    entries = data.get("datasets") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise ValueError(
            f'{path}: a registry file holds a list of data sets (or {{"datasets": [...]}})'
        )
    names = [e.get("name") for e in entries if isinstance(e, dict)]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: a data set name is listed twice")
    return [_check_entry(e) for e in entries]


def registered_datasets():
    """{name: DaskDataset} of the registry file named by ``PRIVCLUST_DATASETS`` (one object per
    process and file version; no record is read: the file holds the registration)."""
    path = os.environ.get(REGISTRY_SETTING)
    if not path or not os.path.isfile(path):
        return {}
    key = (path, os.path.getmtime(path))
    if key not in _cache:
        out = {}
        for e in read_entries(path):
            if "registration" not in e:
                raise ValueError(
                    f"{path}: data set {e['name']!r} was never registered "
                    "(privclust serve --datasets registers it)"
                )
            out[e["name"]] = DaskDataset.registered_from(
                e["path"],
                e["registration"],
                n_features=e["n_features"],
                box=tuple(e["box"]),
                n_public=True,
                n_samples=e["n_samples"],
                sparse=bool(e.get("sparse", False)),
                name=e["name"],
                description=e.get("description", ""),
            )
        _cache.clear()
        _cache[key] = out
    return _cache[key]
