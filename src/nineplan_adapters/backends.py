"""The storage backends by name: which one the settings choose, and where its parts are.

Each backend is a folder of nineplan_adapters.storage; its parts are imported only when asked
for, so that `nineplan prime` loads one primer and nothing of the container, the MCP SDK or
aiosqlite. The container picks its storage by the same choice. Adding a backend: a folder,
a line here, a storage container in nineplan_adapters.container (docs/architecture.md).
"""

import importlib
from typing import TYPE_CHECKING, Literal

import attrs

from nineplan_adapters.config import Settings

if TYPE_CHECKING:
    from nineplan_adapters.storage.priming import Primer, PrimerFactory
    from nineplan_core.ports import SessionCatalog

BackendName = Literal["sqlite", "postgres", "memory"]


@attrs.frozen
class Backend:
    """A storage backend: its name and its folder (a package with a `primer` module)."""

    name: BackendName
    package: str

    def primer(self, settings: Settings, catalog: "SessionCatalog | None" = None) -> "Primer":
        """The backend's read for `nineplan prime`. `catalog`: an open catalog of this backend,
        which a backend that keeps nothing on disk (memory) reads; the others read the
        sessions' databases and files."""
        factory: PrimerFactory = importlib.import_module(f"{self.package}.primer").primer
        return factory(settings, catalog)


BACKENDS: dict[BackendName, Backend] = {
    "sqlite": Backend("sqlite", "nineplan_adapters.storage.sqlite"),
    "postgres": Backend("postgres", "nineplan_adapters.storage.postgres"),
    "memory": Backend("memory", "nineplan_adapters.storage.memory"),
}


def chosen(settings: Settings) -> Backend:
    """The backend the settings choose: PostgreSQL with a database URL, else their storage."""
    if settings.database_url:
        return BACKENDS["postgres"]
    return BACKENDS["memory" if settings.storage == "memory" else "sqlite"]
