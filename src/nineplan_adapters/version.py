"""The installed version of nineplan (light to import: the CLI asks for it at every start)."""

from importlib.metadata import PackageNotFoundError, version


def package_version() -> str:
    try:
        return version("nineplan")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0"
