"""The import/export text of many plans (`nineplan import`, `export --format md`): fenced code
blocks are text, so a `---` or a `# Heading` inside one neither splits plans nor starts a
section."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nineplan_adapters.entrypoints.cli.bundle import join_plans, split_plans
from nineplan_core.errors import PlanFileFormatError
from nineplan_core.model import PlanContent
from nineplan_core.plan_file import PlanText

PLAN_TEXT = """# Context
the config file:
{fence}yaml
a: 1
---
# Goal
b: 2
{fence}

# Goal
fenced

# Approach
steps

# Success Criteria
done
"""


@pytest.mark.parametrize("fence", ["```", "~~~", "````"])
def test_a_separator_and_a_heading_inside_a_fence_are_text(fence: str):
    """A `---` line and a `# Goal` line inside a fenced block stay in the section's text: the
    file is one plan whose context holds the whole block."""
    [plan] = split_plans(PLAN_TEXT.format(fence=fence))
    assert (
        plan.content.context == f"the config file:\n{fence}yaml\na: 1\n---\n# Goal\nb: 2\n{fence}"
    )
    assert plan.content.goal == "fenced"


def test_a_separator_after_a_closed_fence_splits():
    """Once the fence closes, `---` separates plans again; a shorter or other marker does not
    close a fence."""
    text = PLAN_TEXT.format(fence="````").replace("b: 2\n", "b: 2\n```\n~~~~\n")
    assert len(split_plans(f"{text}\n---\n\n{PLAN_TEXT.format(fence='~~~')}")) == 2


def test_a_fence_left_open_is_refused_with_where_it_opened():
    """A fence that never closes would swallow the plans after it: it is refused, naming the
    line that opened it and what closes it."""
    text = PLAN_TEXT.format(fence="```").replace("b: 2\n```\n", "b: 2\n")
    with pytest.raises(PlanFileFormatError) as caught:
        split_plans(f"{text}\n---\n\n{text}")
    assert "the code fence '```' opened on line 3 is not closed" in caught.value.message
    assert "end the code with a line '```'" in caught.value.message


@pytest.mark.parametrize(
    "text", ["```", "```\n# Goal\n---\n```", "~~~~\n```\n~~~", "\\```", "x\n ```py\n# Notes"]
)
def test_an_export_with_fences_reads_back_as_the_same_plans(text: str):
    """Plans whose texts hold fences, closed or not, and lines that look like escaped fences,
    export and import back unchanged."""
    plan = PlanText(
        PlanContent(
            context=text, goal=f"g {text}", approach="a", success_criteria="s", inputs=text
        ),
        text,
    )
    assert split_plans(join_plans([plan, plan])) == [plan, plan]


_LINES = st.sampled_from(
    ["```", "~~~", "````", "``` py", "\\```", "\\\\~~~", "---", "\\---", "# Goal", "# Notes", "x"]
)
_TEXTS = st.lists(_LINES, min_size=1, max_size=8).map("\n".join)


@given(_TEXTS, _TEXTS, _TEXTS)
def test_any_fences_survive_an_export_and_an_import(context: str, goal: str, notes: str):
    """Texts made of fence lines, escaped fence lines, separators and headings, in any order
    and nesting, export and import back as the same plans."""
    content = PlanContent(context=context, goal=goal, approach="a", success_criteria="s")
    plan = PlanText(content, notes)
    assert split_plans(join_plans([plan, plan])) == [plan, plan]
