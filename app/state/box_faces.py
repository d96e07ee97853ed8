"""Released centres on the faces of the public box: a free warning, computed from the release
alone (its centres and the public box it was asked with), never from the data.

A private estimator clips every record (and, for several, every centre) to the public box, so a
centre coordinate exactly on a face means the box cuts the data in that column (the records
beyond it were moved onto the face: a box suggested with a lower bound above most columns'
maxima gave 39 centre values all equal to it) or that the noise pushed the centre out of the box
and it was clipped back.
"""

import numpy as np

#: the released attributes holding centres, by estimator
CENTRE_ATTRIBUTES = ("cluster_centers_", "centers_", "center_")
#: a coordinate within this share of the column's width of a face counts as on it
RELATIVE_TOLERANCE = 1e-6


def released_centres(estimator):
    """The released centres of a result as a (k, d) array, or None (no centres, or a failed
    1-cluster release)."""
    for name in CENTRE_ATTRIBUTES:
        value = getattr(estimator, name, None)
        if value is not None:
            arr = np.asarray(value, dtype=float)
            return np.atleast_2d(arr) if arr.size else None
    return None


def on_faces(centres, lower, upper):
    """Boolean (k, d): which centre coordinates sit on a face of the box [lower, upper]."""
    centres = np.atleast_2d(np.asarray(centres, dtype=float))
    d = centres.shape[1]
    lo = np.broadcast_to(np.asarray(lower, dtype=float), (d,))
    hi = np.broadcast_to(np.asarray(upper, dtype=float), (d,))
    tol = RELATIVE_TOLERANCE * (hi - lo)
    return (np.abs(centres - lo) <= tol) | (np.abs(centres - hi) <= tol)


def face_warning(result, column_name=lambda j: f"feature {j}"):
    """ " Warning: ..." when released centres of ``result`` sit on the faces of the box it was
    asked with ("" otherwise, or when it has no box or no centres). ``column_name(j)`` names the
    columns."""
    settings = result.settings or {}
    if "lower" not in settings or "upper" not in settings:
        return ""
    centres = released_centres(result.estimator)
    if centres is None or not np.all(np.isfinite(centres)):
        return ""
    try:
        faces = on_faces(centres, settings["lower"], settings["upper"])
    except ValueError:  # a box of another width than the centres: nothing to say
        return ""
    if not faces.any():
        return ""
    columns = np.flatnonzero(faces.any(axis=0))
    names = ", ".join(column_name(int(j)) for j in columns[:6]) + (
        ", ..." if len(columns) > 6 else ""
    )
    return (
        f"\n\nWarning: {int(faces.sum())} of {faces.size} released centre coordinates sit on "
        f"the public box's faces (columns: {names}): either the box cuts the data there "
        "(records beyond it were moved onto the face: widen it in those columns), or the "
        "noise pushed the centres out of the box and they were clipped back (spend more ε "
        "or use more records)."
    )
