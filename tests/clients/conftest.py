"""The real clients' tests (`make clients`): each test has a world of its own."""

from pathlib import Path

import pytest

from tests.clients.harness import World


@pytest.fixture
def world(tmp_path: Path) -> World:
    """A fresh home, project, sessions folder and PATH for one client run."""
    return World.make(tmp_path)
