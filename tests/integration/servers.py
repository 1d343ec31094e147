"""Spawning real nineplan processes for integration tests."""

import os
import sys
from pathlib import Path

from mcp import StdioServerParameters

from nineplan_adapters.demo import server_command

PROJECT = Path(__file__).resolve().parents[2]


def stdio_server(sessions_path: Path, **env: str) -> StdioServerParameters:
    """`nineplan serve` over stdio on `sessions_path`, with extra NINEPLAN_* variables."""
    params = server_command(sessions_path)
    params.env = {**(params.env or {}), **env}
    params.cwd = PROJECT
    return params


def child_env(sessions_path: Path, **extra: str) -> dict[str, str]:
    """The environment for a plain subprocess (a script, the CLI) on `sessions_path`."""
    keep = ("PATH", "HOME", "COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")
    return {
        **{k: os.environ[k] for k in keep if k in os.environ},
        "NINEPLAN_SESSIONS_PATH": str(sessions_path),
        **extra,
    }


PYTHON = sys.executable
