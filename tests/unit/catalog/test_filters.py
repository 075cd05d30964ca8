from __future__ import annotations

import pytest

from mcp_sidecar.catalog.filters import allowed, matches


@pytest.mark.parametrize(
    ("name", "globs", "expected"),
    [
        ("get_user", ["get_*"], True),
        ("get_user", ["*_user"], True),
        ("get_user", ["get"], False),
        ("a.b", ["a?b"], False),  # only `*` is special
        ("a?b", ["a?b"], True),
        ("x[1]", ["x[1]"], True),
        ("anything", ["*"], True),
    ],
)
def test_star_is_the_only_wildcard(name: str, globs: list[str], expected: bool) -> None:
    assert matches(name, globs) is expected


def test_include_none_exposes_all_and_empty_include_exposes_none() -> None:
    assert allowed("t", None, ())
    assert not allowed("t", [], ())


def test_exclude_applies_after_include() -> None:
    assert allowed("get_a", ["get_*"], ["get_b"])
    assert not allowed("get_b", ["get_*"], ["get_b"])
    assert not allowed("set_a", ["get_*"], [])
