"""The use cases: one async method per operation an agent or a person can ask for.

`NinePlan` is one class made of its jobs: the agent's commands (`commands`) and pulls
(`pulling`), a person's steering (`steering`, of prerequisites `waiting`, of verdicts `deciding`), completions with verdicts (`completing`), the reads (`queries`), the journal's reads
and change feed (`following`) and the session catalogue (`catalogue`), all over the one
envelope a change runs in (`envelope`), a decomposition added in one call (`batches`), with the input checks in `checks`.
"""

import attrs

from nineplan_core.results import Completion, Discarded, PlacedPlan
from nineplan_core.service.batches import Batches
from nineplan_core.service.catalogue import Catalogue
from nineplan_core.service.commands import Commands
from nineplan_core.service.deciding import Deciding
from nineplan_core.service.envelope import Applied
from nineplan_core.service.following import Following
from nineplan_core.service.pulling import Pulling
from nineplan_core.service.queries import Queries
from nineplan_core.service.steering import Steering
from nineplan_core.service.waiting import Waiting


@attrs.define
class NinePlan(
    Commands, Deciding, Batches, Pulling, Steering, Waiting, Queries, Following, Catalogue
):
    """nineplan's use cases over a session catalog.

    Every method validates its input before it touches storage and raises only
    NinePlanError subclasses. Mutations run in one transaction per call.
    """


__all__ = ["Applied", "Completion", "Discarded", "NinePlan", "PlacedPlan"]
