"""Mergeable sketches: blocks, files, addition (a sketch is a sum over
records; Schellekens et al., SPARS 2019, Sec. II, Eq. (2))."""

import numpy as np
import pytest

from privclust.core.sketch import Sketch, SketchOperator


@pytest.fixture
def op():
    return SketchOperator.draw(3, 40, 2.0, random_state=0)


def test_sum_of_sketches_equals_sketch_of_union(rng, op):
    A, B = rng.normal(size=(700, 3)), rng.normal(size=(500, 3))
    union = Sketch.from_array(np.vstack([A, B]), op)
    merged = Sketch.from_array(A, op) + Sketch.from_array(B, op)
    assert merged.count == union.count == 1200
    assert np.allclose(merged.sum, union.sum, atol=1e-9)
    assert np.allclose(merged.mean, union.mean, atol=1e-12)


def test_subsampled_merge_is_exact_with_the_same_masks(rng, op):
    A, B = rng.normal(size=(300, 3)), rng.normal(size=(200, 3))
    one = Sketch(op, 1).update(A, random_state=10).update(B, random_state=11)
    a = Sketch(op, 1).update(A, random_state=10)
    b = Sketch(op, 1).update(B, random_state=11)
    assert np.array_equal((a + b).sum, one.sum)
    assert (a + b).alpha == 1 / 40


def test_merge_refuses_different_operators(rng, op):
    other = SketchOperator.draw(3, 40, 2.0, random_state=1)
    with pytest.raises(ValueError, match="operators"):
        Sketch(op) + Sketch(other)
    with pytest.raises(ValueError, match="measurements_per_record"):
        Sketch(op, 2) + Sketch(op, 3)


@pytest.mark.parametrize("r", [None, 1])
def test_file_chunks_equal_in_memory(tmp_path, rng, op, r):
    X = rng.normal(size=(1000, 3))
    np.save(tmp_path / "a.npy", X[:600])
    np.savetxt(tmp_path / "b.csv", X[600:], delimiter=",")
    files = Sketch.from_files(
        [tmp_path / "a.npy", tmp_path / "b.csv"], op, r, block_size=200, random_state=5
    )
    blocks = Sketch.from_blocks(
        [X[i : i + 200] for i in range(0, 1000, 200)], op, r, random_state=5
    )
    assert files.count == 1000
    assert np.allclose(files.sum, blocks.sum, atol=1e-9)


def test_bad_file_names_the_file(tmp_path, op):
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2,3\n4,x,6\n")
    with pytest.raises(ValueError, match="bad.csv"):
        Sketch.from_files(bad, op)


def test_empty_sketch_has_no_mean(op):
    with pytest.raises(ValueError, match="empty"):
        Sketch(op).mean  # noqa: B018 -- the access must raise
