"""`tests/unit/` mirrors `sidecar/mcp_sidecar/`: a unit test of `mcp_sidecar/X/y.py` lives in
`tests/unit/X/` (CONTRIBUTING, "Where tests go"). Every folder here names a package folder there,
so the two trees cannot drift; and, as there are no `__init__.py` files, pytest imports each test
by its file name, which must be unique across `tests/`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

UNIT = Path(__file__).resolve().parent
TESTS = UNIT.parent
PACKAGE = TESTS.parent / "sidecar" / "mcp_sidecar"


def folders(root: Path) -> list[Path]:
    """Every folder under `root` that holds a file, relative to `root`; caches (`__pycache__`,
    `.pytest_cache`) and what is left of a folder only in them do not count."""
    files = (path.relative_to(root) for path in root.rglob("*") if path.is_file())
    kept = [path for path in files if not any(part.startswith(("_", ".")) for part in path.parts)]
    return sorted({parent for path in kept for parent in path.parents if parent != Path()})


def strays(unit: Path, package: Path) -> list[str]:
    """The folders under `unit` that name no folder of Python modules under `package`."""
    return [str(folder) for folder in folders(unit) if not any((package / folder).glob("*.py"))]


def test_the_check_finds_a_folder_that_names_no_package_folder(tmp_path: Path) -> None:
    package, unit = tmp_path / "package", tmp_path / "unit"
    (package / "services").mkdir(parents=True)
    (package / "services" / "discovery.py").write_text("", encoding="utf-8")
    (package / "empty").mkdir()
    for folder in ("services", "service", "empty", "services/nested", "gone/__pycache__"):
        (unit / folder).mkdir(parents=True)
        (unit / folder / "test_x.py").write_text("", encoding="utf-8")
    assert strays(unit, package) == ["empty", "service", "services/nested"]


def test_every_folder_of_unit_tests_names_a_package_folder() -> None:
    assert folders(UNIT), "tests/unit has no folders: the tests no longer mirror the package"
    assert strays(UNIT, PACKAGE) == [], "a unit test of mcp_sidecar/X/y.py goes in tests/unit/X/"


def test_test_file_names_are_unique_across_the_tests() -> None:
    names = Counter(path.name for path in TESTS.rglob("test_*.py") if "node_modules" not in path.parts)
    assert [name for name, count in names.items() if count > 1] == []
