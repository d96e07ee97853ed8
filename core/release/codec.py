"""A lossless JSON form of released values (numpy arrays, complex numbers, non-finite floats).

Downloads are this JSON. The release store keeps the same structure with every array moved out
into a ``.npy`` blob (``np.save(allow_pickle=False)``, read back with ``allow_pickle=False``):
neither form uses pickle, which would execute code from the store.
"""

import io
import json
import math
from typing import Any

import numpy as np

from .._npy_headers import load_npy_bytes


def encode(value: Any, arrays: list[bytes] | None = None) -> Any:
    """A JSON-compatible structure for ``value``; :func:`decode` inverts it exactly.

    With ``arrays`` (a list), every numeric array is appended to it as ``.npy`` bytes and
    encoded as ``{"__npy__": its index}``; :func:`decode` needs the same list back.
    """
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufc":
            raise TypeError(f"cannot store an array of dtype {value.dtype}")
        if arrays is not None:
            buffer = io.BytesIO()
            np.save(buffer, value, allow_pickle=False)
            arrays.append(buffer.getvalue())
            return {"__npy__": len(arrays) - 1}
        if value.dtype.kind == "c":
            return {
                "__ndarray__": "complex",
                "dtype": value.dtype.str,
                "shape": list(value.shape),
                "real": [_float(x) for x in value.real.ravel()],
                "imag": [_float(x) for x in value.imag.ravel()],
            }
        if value.dtype.kind == "b":
            return {
                "__ndarray__": "bool",
                "shape": list(value.shape),
                "data": [bool(x) for x in value.ravel()],
            }
        if value.dtype.kind in "iu":
            return {
                "__ndarray__": "int",
                "dtype": value.dtype.str,
                "shape": list(value.shape),
                "data": [int(x) for x in value.ravel()],
            }
        return {
            "__ndarray__": "float",
            "dtype": value.dtype.str,
            "shape": list(value.shape),
            "data": [_float(x) for x in value.ravel()],
        }
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _float(value)
    if isinstance(value, (complex, np.complexfloating)):
        return {"__complex__": [_float(value.real), _float(value.imag)]}
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        return {"__dict__": [[encode(k, arrays), encode(v, arrays)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return {
            "__seq__": "tuple" if isinstance(value, tuple) else "list",
            "items": [encode(v, arrays) for v in value],
        }
    to_public = getattr(value, "to_public", None)
    if callable(to_public):
        return encode(to_public(), arrays)
    raise TypeError(f"cannot store a value of type {type(value).__name__}")


def _float(x: Any) -> float | dict[str, str]:
    x = float(x)
    return x if math.isfinite(x) else {"__float__": repr(x)}


def _read_only(arr: np.ndarray) -> np.ndarray:
    # over immutable bytes: the read-only flag cannot be switched back on
    return np.frombuffer(arr.tobytes(), dtype=arr.dtype).reshape(arr.shape)


def decode(obj: Any, arrays: list[bytes] | None = None) -> Any:
    """The value :func:`encode` was given (arrays come back read-only); ``arrays`` are the
    ``.npy`` blobs an encoding with ``arrays`` produced."""
    if isinstance(obj, list):
        return [decode(v, arrays) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if "__npy__" in obj:
        if arrays is None:
            raise ValueError("an array stored as a .npy blob needs its blobs to be decoded")
        return _read_only(load_npy_bytes(arrays[obj["__npy__"]]))
    if "__float__" in obj:
        return float(obj["__float__"])
    if "__complex__" in obj:
        re, im = (decode(v) for v in obj["__complex__"])
        return complex(re, im)
    if "__ndarray__" in obj:
        kind, shape = obj["__ndarray__"], tuple(obj["shape"])
        if kind == "complex":
            # set the parts separately: re + 1j * im turns an infinite im into a NaN re
            arr = np.empty(len(obj["real"]), dtype=obj.get("dtype", complex))
            arr.real = [decode(v) for v in obj["real"]]
            arr.imag = [decode(v) for v in obj["imag"]]
        else:
            dtype = obj.get("dtype") or {"bool": bool, "int": np.int64, "float": np.float64}[kind]
            arr = np.array([decode(v) for v in obj["data"]], dtype=dtype)
        return _read_only(arr.reshape(shape))
    if "__seq__" in obj:
        items = [decode(v, arrays) for v in obj["items"]]
        return tuple(items) if obj["__seq__"] == "tuple" else items
    if "__dict__" in obj:
        return {_key(decode(k, arrays)): decode(v, arrays) for k, v in obj["__dict__"]}
    raise ValueError(f"not an encoded value: {sorted(obj)}")


def _key(k: Any) -> Any:
    return tuple(k) if isinstance(k, list) else k


def describe_params(params: dict[str, Any]) -> dict[str, Any]:
    """Estimator parameters as storable values: objects that :func:`encode` cannot store (an
    aggregator, a solver instance) become ``{"class": name, "params": {...}}`` of their own
    public parameters (``get_params()`` or their non-underscore attributes)."""

    def plain(value: Any, depth: int = 0) -> Any:
        try:
            encode(value)
            return value
        except TypeError:
            pass
        if depth > 3:
            raise TypeError(f"cannot describe a parameter of type {type(value).__name__}")
        get = getattr(value, "get_params", None)
        inner = (
            get(deep=False)
            if callable(get)
            else {
                k: v
                for k, v in vars(value).items()
                if not k.startswith("_") and not k.endswith("_")
            }
        )
        return {
            "class": type(value).__qualname__,
            "params": {k: plain(v, depth + 1) for k, v in sorted(inner.items())},
        }

    return {k: plain(v) for k, v in params.items()}


def dumps(value: Any) -> str:
    """``encode`` then compact JSON text."""
    return json.dumps(encode(value), separators=(",", ":"), allow_nan=False)


def loads(text: str) -> Any:
    """Inverse of :func:`dumps`."""
    return decode(json.loads(text))
