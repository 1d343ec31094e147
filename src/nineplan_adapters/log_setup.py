"""Structured logs as JSON lines on stderr; stdout belongs to the stdio transport."""

import datetime as dt
import json
import logging
import re
import sys
from typing import Any

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
# Attributes every LogRecord has; anything else on a record came from `extra=` (session, plan_id...).
# uvicorn adds `color_message`, the event again with ANSI colours: never in a JSON log.
_STANDARD = {
    *vars(logging.LogRecord("", 0, "", 0, "", None, None)),
    "message",
    "asctime",
    "taskName",
    "color_message",
}
#: Loggers that speak for every request or every file change: heard at debug only.
CHATTY = ("uvicorn.access", "watchfiles")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class JsonFormatter(logging.Formatter):
    """One JSON object per record: timestamp, level, logger, event, the `extra` context fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "timestamp": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(
                timespec="microseconds"
            ),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": _ANSI.sub("", record.getMessage()),
        }
        entry.update((key, value) for key, value in vars(record).items() if key not in _STANDARD)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


def configure_logging(level: str = "info") -> None:
    """Send every log record, the SDK's and uvicorn's included, to stderr as JSON lines.

    Call it before anything logs: the MCP SDK would otherwise install its own handler.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(LEVELS[level])
    # One line per HTTP request, and the file watcher's notices, only when asked for in detail.
    for chatty in CHATTY:
        logging.getLogger(chatty).setLevel(logging.NOTSET if level == "debug" else logging.WARNING)
