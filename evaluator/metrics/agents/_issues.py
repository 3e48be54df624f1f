"""What a per-agent check finds: one issue of one tool call (DESIGN.md, Per-agent analysis)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

IssueKind = Literal[
    "unauthorized_tool", "hallucinated_parameter", "missing_parameter", "invalid_value", "tool_error"
]
Severity = Literal["high", "medium"]
ISSUE_KINDS: tuple[IssueKind, ...] = (
    "unauthorized_tool",
    "hallucinated_parameter",
    "missing_parameter",
    "invalid_value",
    "tool_error",
)
SEVERITY: dict[IssueKind, Severity] = {
    "unauthorized_tool": "high",
    "hallucinated_parameter": "medium",
    "missing_parameter": "medium",
    "invalid_value": "medium",
    "tool_error": "medium",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolIssue:
    """One thing wrong with one tool call. `agent` is the agent that made the call (None when no
    agent encloses it); `parameter` is None for the kinds about the whole call (unauthorized tool,
    tool error); `message` says what was expected."""

    kind: IssueKind
    agent: str | None
    tool: str
    parameter: str | None
    message: str
    observation_id: str

    @property
    def severity(self) -> Severity:
        return SEVERITY[self.kind]

    def to_json(self) -> dict[str, Any]:
        """The issue as the result object lists it under its agent (so without the agent)."""
        return {
            "kind": self.kind,
            "severity": self.severity,
            "tool": self.tool,
            "parameter": self.parameter,
            "message": self.message,
            "observation_id": self.observation_id,
        }
