"""nineplan's pure domain: plans, the queue, the plan-file format, invariants and use cases."""

from nineplan_core.errors import NinePlanError
from nineplan_core.model import Plan, PlanContent, PlanStatus, Position
from nineplan_core.service import NinePlan

__all__ = ["NinePlan", "NinePlanError", "Plan", "PlanContent", "PlanStatus", "Position"]
