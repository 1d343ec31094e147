"""Who holds what: workers, and a worker's hold on its active plan, the one place the lease
rules live (docs/agents.md, "Many agents on one
session")."""

import datetime as dt
import re
from typing import Final, NewType

import attrs

from nineplan_core.errors import InvalidInputError

#: A worker's hold on its active plan lapses this many minutes after it was last heard from
#: (NINEPLAN_LEASE_MINUTES in docs/configuration.md): the plan is then stale (`Hold`).
LEASE_MINUTES = 30.0

_WORKER = re.compile(r"[a-z0-9][a-z0-9._-]{0,39}")

#: A worker name that has the checked shape: only `check_worker` (or a store reading back a
#: name it wrote) makes one, so code below the ways in never checks it again.
Worker = NewType("Worker", str)

#: The worker of a lone agent, and of a call that names no worker.
MAIN: Final = Worker("main")


@attrs.frozen
class Unnamed:
    """A call that named no worker. The decisions treat it as `main`; the fact that no name
    was given is kept, so a rule can tell it from a call that passed worker="main"."""

    @property
    def name(self) -> Worker:
        return MAIN


#: The one value of `Unnamed`.
UNNAMED: Final = Unnamed()


#: What a worker name must be, in words (every way in says it so, never with the pattern).
WORKER_RULE = (
    "must be 1 to 40 characters of lowercase letters, digits, '.', '_' or '-', "
    "starting with a letter or digit"
)


def check_worker(worker: str | None, field: str = "worker") -> Worker | Unnamed:
    """The worker a way in read from a call: `worker`, or `UNNAMED` when it gave none.

    Raises:
        InvalidInputError: not 1-40 characters of [a-z0-9._-] starting with a letter or digit.
    """
    if worker is None:
        return UNNAMED
    if not isinstance(worker, str):
        raise InvalidInputError(field, f"must be text, not {type(worker).__name__}")
    if not _WORKER.fullmatch(worker):
        raise InvalidInputError(field, WORKER_RULE)
    return Worker(worker)


def worker_name(worker: Worker | Unnamed) -> Worker:
    """The worker a call belongs to: `main` for one that named none."""
    return worker.name if isinstance(worker, Unnamed) else worker


def stored_worker(worker: str | None) -> Worker:
    """The worker a stored active plan belongs to (rows from before workers hold none: `main`)."""
    return MAIN if worker is None else Worker(worker)


@attrs.frozen(kw_only=True)
class Hold:
    """A worker's hold on its active plan: a lease, renewed each time the worker is heard from.

    A hold is stale once its worker has not been heard from for longer than the lease; it is
    judged when someone looks, never by a timer, and a stale plan stays its worker's until
    another worker takes it over. A hold never heard from (`last_seen` None: a plan pulled
    before leases were kept) never lapses.
    """

    worker: Worker
    #: When the worker got the plan (its pull or take-over), when known.
    pulled_at: dt.datetime | None = None
    last_seen: dt.datetime | None = None

    def lapses_at(self, lease: dt.timedelta) -> dt.datetime | None:
        """When the lease lapses (None: it never does)."""
        return None if self.last_seen is None else self.last_seen + lease

    def stale(self, now: dt.datetime, lease: dt.timedelta) -> bool:
        """Whether the lease had lapsed at `now`."""
        lapses = self.lapses_at(lease)
        return lapses is not None and now > lapses

    def idle(self, now: dt.datetime) -> dt.timedelta:
        """How long the worker has been silent at `now` (nothing when never heard from)."""
        return dt.timedelta(0) if self.last_seen is None else now - self.last_seen
