"""The resource URIs of a session, and links to them for tool results."""

import re

from mcp.types import ResourceLink

PLAN_URI = "nineplan://sessions/{session}/plans/{plan_id}"
STATE_URI = "nineplan://sessions/{session}/state"
LOG_URI = "nineplan://sessions/{session}/log"
#: What a plan resource holds: its plan file, in the plain-text plan format (a .txt file).
PLAN_MIME_TYPE = "text/plain"
#: The resource templates whose `session` variable names a session.
SESSION_TEMPLATES = (PLAN_URI, STATE_URI, LOG_URI)
_SESSION_URI = re.compile(
    r"nineplan://sessions/([a-z]+-[a-z]+-[a-z]+)/(?:state|log|plans/[0-9a-z]{5})"
)


def session_of(uri: str) -> str | None:
    """The session a nineplan resource URI belongs to, or None for any other URI."""
    match = _SESSION_URI.fullmatch(uri)
    return match.group(1) if match else None


def plan_link(session: str, plan_id: str, goal: str) -> ResourceLink:
    """A resource_link to a plan's resource, for tool results that hand a plan to the agent."""
    return ResourceLink(
        uri=PLAN_URI.format(session=session, plan_id=plan_id),
        name=f"plan {plan_id}",
        description=goal[:200],
        mime_type=PLAN_MIME_TYPE,
    )
