"""Who makes a call, as one value a way in builds and hands down (docs/agents.md, "Many
agents on one session")."""

import attrs

from nineplan_core.journal import Actor
from nineplan_core.workers import Unnamed, Worker, worker_name


@attrs.frozen(kw_only=True)
class Caller:
    """Who makes a call, as a way in read it: the worker (or `UNNAMED` when the call named
    none), the actor, and the client's `request_id` (None when it gave none)."""

    worker: Worker | Unnamed
    actor: Actor = Actor.AGENT
    request_id: str | None = None

    @property
    def holder(self) -> Worker:
        """The worker the call acts for (`main` when it named none)."""
        return worker_name(self.worker)
