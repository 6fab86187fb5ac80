"""Comparing case outputs: nested lists, dicts and arrays, structure included."""

import numpy as np


def assert_tree_close(actual, desired, rtol=1e-9, atol=1e-12, path="output"):
    """``actual`` has ``desired``'s structure and its numbers within the tolerances.

    The tolerances allow a different but legitimate order of floating-point operations.
    Where ``desired`` holds booleans or integers (masks, token ids) the values must be
    equal, as the old tests required.
    """
    if isinstance(desired, dict):
        assert isinstance(actual, dict), f"{path}: expected a dict, got {type(actual).__name__}"
        assert sorted(actual) == sorted(desired), f"{path}: keys {sorted(actual)} != {sorted(desired)}"
        for key in desired:
            assert_tree_close(actual[key], desired[key], rtol, atol, f"{path}[{key!r}]")
    elif isinstance(desired, list):
        assert isinstance(actual, list), f"{path}: expected a list, got {type(actual).__name__}"
        assert len(actual) == len(desired), f"{path}: {len(actual)} items, expected {len(desired)}"
        for index, (a, d) in enumerate(zip(actual, desired)):
            assert_tree_close(a, d, rtol, atol, f"{path}[{index}]")
    elif isinstance(desired, str) or desired is None:
        assert actual == desired, f"{path}: {actual!r} != {desired!r}"
    else:
        desired_array = np.asarray(desired)
        actual_array = np.asarray(actual)
        assert actual_array.dtype.kind in "biuf", f"{path}: not numbers: {actual!r:.200}"
        assert actual_array.shape == desired_array.shape, (
            f"{path}: shape {actual_array.shape} != {desired_array.shape}"
        )
        if desired_array.dtype.kind in "biu":
            np.testing.assert_array_equal(actual_array, desired_array, err_msg=path)
        else:
            np.testing.assert_allclose(actual_array, desired_array, rtol=rtol, atol=atol, err_msg=path)
