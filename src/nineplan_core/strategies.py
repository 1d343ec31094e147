"""Hypothesis strategies for what agents send nineplan, and a clock a test moves by hand (the
public test kit, `testing`, draws on them). Import it from tests only: it needs hypothesis."""

import datetime as dt

from hypothesis import strategies as st

from nineplan_core.model import Position

#: Arbitrary text an agent might send: any unicode but NUL and surrogates, header-like lines included.
free_text = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
    max_size=200,
) | st.sampled_from(["# Goal", "\\# Notes", "# Notes\n# Context", "line\r\nline", "", "\n\n"])

#: Text that is not blank: for required fields.
required_text = free_text.filter(lambda text: bool(text.strip()))

positions = st.sampled_from([Position.FRONT, Position.BACK])

#: Worker names as agents give them: 1-40 characters of [a-z0-9._-], a letter or digit first.
worker_names = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,39}", fullmatch=True)


@st.composite
def plan_contents(draw: st.DrawFn) -> dict[str, str]:
    """Keyword arguments for `NinePlan.add_plan`: four required fields, two optional."""
    return {
        "context": draw(required_text),
        "goal": draw(required_text),
        "approach": draw(required_text),
        "success_criteria": draw(required_text),
        "inputs": draw(free_text),
        "outputs": draw(free_text),
    }


class ManualClock:
    """A Clock port that says what it is told; `advance` moves it (to the millisecond, what
    storage keeps)."""

    def __init__(self, now: dt.datetime = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)) -> None:
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, milliseconds: int) -> None:
        self.now += dt.timedelta(milliseconds=milliseconds)
