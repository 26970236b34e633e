"""Strict JSON for every output: non-finite floats become null and are named, finite data is json.dumps's own."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from vocabrisk.storage.outputs import json_text

LEAVES = (
    st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.floats(allow_nan=True, allow_infinity=True)
)
VALUES = st.recursive(
    LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
)


def invalid(constant: str) -> None:
    raise AssertionError(f"{constant} in the JSON")


def finite(value: object) -> object:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def has_non_finite(value: object) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(map(has_non_finite, value.values()))
    if isinstance(value, list):
        return any(map(has_non_finite, value))
    return False


@given(VALUES)
def test_json_text_is_strict_json_of_the_same_data_and_names_what_it_replaced(data):
    text = json_text(data, indent=1)
    parsed = json.loads(text, parse_constant=invalid)  # strict: no NaN, Infinity or -Infinity anywhere
    if not has_non_finite(data):
        assert text == json.dumps(data, allow_nan=False, indent=1)  # the same bytes as before the fast path
        return
    if isinstance(data, dict):
        assert parsed.pop("non_finite")["values"]
    assert parsed == json.loads(json.dumps(finite(data)))
