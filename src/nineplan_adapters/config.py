"""Settings: read once at the entry point from NINEPLAN_* variables, CLI flags on top."""

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, cast, get_args, get_origin

import attrs
import platformdirs

from nineplan_core.model import DEFAULT_LIMITS, LEASE_MINUTES, STUCK_DEFERS, Limits

Transport = Literal["stdio", "http"]
LogLevel = Literal["debug", "info", "warn", "error"]
Durability = Literal["full", "normal"]
#: NINEPLAN_VERDICTS (docs/configuration.md): what a complete without a verdict on every
#: criterion gets: a line naming them (`ask`), a refusal (`require`), or nothing (`off`).
VerdictPolicy = Literal["ask", "require", "off"]
Storage = Literal["sqlite", "memory"]


#: What every tool's name starts with unless NINEPLAN_TOOL_PREFIX says otherwise (the reference's
#: names); a prefix must match TOOL_PREFIX_PATTERN (a letter or digit first, `_` last).
DEFAULT_TOOL_PREFIX = "9plan_"
TOOL_PREFIX_PATTERN = re.compile(r"[a-z0-9][a-z0-9_]{0,15}_")

#: The variable Claude Code sets to the project folder in the environment of the servers it
#: starts (plugin servers may start in the plugin's cache folder or the home folder).
CLIENT_PROJECT_DIR = "CLAUDE_PROJECT_DIR"

#: Where `nineplan ui` listens unless --port says otherwise (the MCP server's default is 8080).
UI_PORT = 8765


class ConfigError(ValueError):
    """A setting has a bad value; the message names the variable."""

    def __init__(self, variable: str, problem: str) -> None:
        super().__init__(f"{variable}: {problem}")
        self.variable = variable


def default_sessions_path() -> Path:
    """The platform's user data folder for 9plan, plus `sessions`."""
    return Path(platformdirs.user_data_dir("9plan", appauthor=False)) / "sessions"


@attrs.frozen(kw_only=True)
class Settings:
    """Everything configurable, with defaults that suit one agent on one machine."""

    sessions_path: Path = attrs.field(factory=default_sessions_path)
    storage: Storage = "sqlite"
    log_level: LogLevel = "info"
    transport: Transport = "stdio"
    http_host: str = "127.0.0.1"
    http_port: int = 8080
    http_token: str | None = None
    http_allowed_hosts: tuple[str, ...] = ()
    http_allowed_origins: tuple[str, ...] = ()
    durability: Durability = "full"
    database_url: str | None = None
    tool_prefix: str = DEFAULT_TOOL_PREFIX
    #: NINEPLAN_MAX_TEXT_CHARS and NINEPLAN_MAX_QUEUE set two of them.
    limits: Limits = attrs.field(default=DEFAULT_LIMITS, metadata={"derived": True})
    stuck_defers: int = STUCK_DEFERS
    #: Minutes after a worker was last heard from that its active plan is stale (docs/architecture.md, "Workers and leases").
    lease_minutes: float = LEASE_MINUTES
    verdicts: VerdictPolicy = "ask"
    #: The folder a stdio server's new sessions belong to, before the client's roots and the
    #: working directory (entrypoints.workspace); one that is not usable is passed over.
    workspace: str | None = None
    #: The project folder the client set in its servers' environment (CLAUDE_PROJECT_DIR,
    #: from Claude Code): a workspace source after `workspace`, before the client's roots.
    client_project_dir: str | None = attrs.field(default=None, metadata={"derived": True})
    #: Where each setting that was given came from: "flag", or its NINEPLAN_* variable.
    origins: Mapping[str, str] = attrs.field(
        factory=dict, eq=False, repr=False, metadata={"derived": True}
    )

    @classmethod
    def load(
        cls,
        environ: Mapping[str, str],
        flag_names: Mapping[str, str] | None = None,
        **flags: Any,
    ) -> "Settings":
        """Settings from `environ` (NINEPLAN_* variables), then `flags` that are not None.

        `flag_names`: how a command line spells the flag of a setting (`http_port` -> `--port`),
        for the message of a bad value the flag gave.

        Raises:
            ConfigError: a value is not allowed; the message names the variable, or the flag
                when a flag gave it.
        """
        values: dict[str, Any] = {}
        origins: dict[str, str] = {}
        for name in setting_names():
            variable = f"NINEPLAN_{name.upper()}"
            raw = flags.get(name)
            origins[name] = "flag" if raw is not None else variable
            given_by = variable
            if raw is None and environ.get(variable, "").strip():
                raw = environ[variable].strip()
            elif raw is not None:
                given_by = (flag_names or {}).get(name, variable)
            if raw is not None:
                values[name] = _convert(given_by, name, raw)
        limits = {name: values.pop(name) for name in _LIMITS if name in values}
        return cls(
            **values,
            limits=attrs.evolve(DEFAULT_LIMITS, **limits),
            client_project_dir=environ.get(CLIENT_PROJECT_DIR),
            origins=origins,
        )

    def given_by(self, name: str, flag: str) -> str:
        """What set `name`, as the user would write it: `flag` or its NINEPLAN_* variable."""
        return flag if self.origins.get(name) == "flag" else f"NINEPLAN_{name.upper()}"


def setting_names() -> list[str]:
    """The settings a user can give (by variable, flag or keyword), two of them Limits."""
    own = [field.name for field in attrs.fields(Settings) if not field.metadata.get("derived")]
    return [*own, *_LIMITS]


_LIMITS = ("max_text_chars", "max_queue")  # the Limits that settings may change
_RANGES = {
    "http_port": (0, 65535),
    "max_text_chars": (1, 10_000_000),
    "max_queue": (1, 1_000_000),
    "stuck_defers": (1, 1_000),
}
#: A variable in a client's config that the client did not expand (`${NINEPLAN_TOOL_PREFIX:-x_}`).
_UNEXPANDED = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(:?-[^}]*)?\}")
_CHOICES: dict[str, tuple[str, ...]] = {
    field.name: get_args(field.type)
    for field in attrs.fields(Settings)
    if get_origin(field.type) is Literal
}


def _convert(variable: str, name: str, raw: object) -> object:
    if name == "database_url":
        if not str(raw).startswith(("postgresql://", "postgres://")):
            raise ConfigError(
                variable, "must be a postgresql://user:password@host:port/database URL"
            )
        return raw
    if name == "tool_prefix":
        if _UNEXPANDED.fullmatch(str(raw)):  # a client that left its config's `${...}` as is
            return DEFAULT_TOOL_PREFIX
        if not TOOL_PREFIX_PATTERN.fullmatch(str(raw)):
            raise ConfigError(
                variable,
                f"must match ^{TOOL_PREFIX_PATTERN.pattern}$ (lowercase letters, digits and _, "
                f"ending in _, e.g. nineplan_), not {raw!r}",
            )
        return raw
    if name in {"http_allowed_hosts", "http_allowed_origins"}:
        items = raw.split(",") if isinstance(raw, str) else list(cast("list[str]", raw))
        return tuple(item.strip() for item in items if item.strip())
    if name == "sessions_path":
        return Path(cast("str", raw)).expanduser()
    if name == "lease_minutes":
        return _minutes(variable, raw)
    if name in _RANGES:
        low, high = _RANGES[name]
        return _integer(variable, raw, low=low, high=high)
    value = raw
    if name == "log_level" and isinstance(raw, str):  # any case; `warning` as Python spells it
        value = {"warning": "warn"}.get(raw.lower(), raw.lower())
    if name in _CHOICES and value not in _CHOICES[name]:
        raise ConfigError(variable, f"must be one of {', '.join(_CHOICES[name])}, not {raw!r}")
    return value


def _minutes(variable: str, raw: object) -> float:
    """A positive, finite number of minutes (fractions allowed: 0.05 is three seconds)."""
    try:
        value = float(cast("str", raw))
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ConfigError(variable, f"must be a positive number of minutes, not {raw!r}")
    return value


def _integer(variable: str, raw: object, *, low: int, high: int) -> int:
    try:
        value = int(cast("str", raw))
    except ValueError:
        raise ConfigError(variable, f"must be a whole number, not {raw!r}") from None
    if not low <= value <= high:
        raise ConfigError(variable, f"must be between {low} and {high}, not {value}")
    return value
