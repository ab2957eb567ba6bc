"""Shared paths for the tests of the Python package (run from anywhere: `python -m pytest python/tests`)."""

from pathlib import Path

import pytest

#: The repository's root (the tests read its datasets).
REPO = Path(__file__).resolve().parents[2]
#: The tests' own data files.
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def data() -> Path:
    return DATA
