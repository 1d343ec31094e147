"""The public embedding API: open nineplan on a folder in one line."""

import os
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from nineplan_adapters.config import Settings, setting_names
from nineplan_core.service import NinePlan


def open_nineplan(
    sessions_path: str | Path | None = None, **settings: Any
) -> AbstractAsyncContextManager[NinePlan]:
    """Open nineplan and yield its use cases; everything is closed on exit.

    Args:
        sessions_path: the folder that holds the sessions; by default NINEPLAN_SESSIONS_PATH
            or the platform's data folder.
        **settings: any other Settings field (`storage="memory"`, `durability="normal"`, ...).

    Example:
        async with open_nineplan("./sessions") as nineplan:
            state = await nineplan.create_session("write the report")
            await nineplan.add_plan(state.session.name, context=..., goal=..., approach=...,
                                    success_criteria=...)

    Raises:
        TypeError: a keyword that is not a setting (the message names it).
        ConfigError: a setting has a bad value.
    """
    known = set(setting_names())
    if unknown := sorted(set(settings) - known):
        raise TypeError(
            f"open_nineplan() got an unexpected keyword argument {unknown[0]!r}; "
            f"settings are {', '.join(sorted(known))}"
        )
    return _opened(Settings.load(os.environ, sessions_path=sessions_path, **settings))


@asynccontextmanager
async def _opened(config: Settings) -> AsyncIterator[NinePlan]:
    from nineplan_adapters.container import build_container, running  # noqa: PLC0415 - keeps `import nineplan_adapters` light

    async with running(build_container(config)) as service:
        yield service
