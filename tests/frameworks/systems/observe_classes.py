"""`@observe` on class methods, as teams often write it: every agent's method is `run`, so every agent
is named "run" unless the author names it."""

from __future__ import annotations

from typing import Any

from langfuse import observe


class ResearchAgent:
    @observe(as_type="tool")
    def execute(self, query: str) -> str:
        return f"papers about {query}"

    @observe(as_type="agent")
    def run(self, question: str) -> str:
        return self.execute(question)


class WriterAgent:
    @observe(as_type="agent")
    def run(self, notes: str) -> str:
        return f"Summary: {notes}"


class NamedWriterAgent:
    @observe(name="writer", as_type="agent")
    def run(self, notes: str) -> str:
        return f"Summary: {notes}"


def run(request: Any) -> object:
    notes = ResearchAgent().run(request.input)
    writer = NamedWriterAgent() if "named" in request.input else WriterAgent()
    return writer.run(notes)
