"""Plain Python with Langfuse's `@observe`: a `supervisor` agent delegates a task to a `writer` agent
through its `delegate(task)` tool; the writer makes one model call (a Langfuse generation with its
messages as input). `run_passing` gives the writer's model the task; `run_dropping` gives it a fixed
prompt instead (the task is lost across the hand-off)."""

from __future__ import annotations

from langfuse import get_client, observe

FIXED_PROMPT = "Write something helpful."


def _model_call(prompt: str) -> str:
    messages = [{"role": "system", "content": "You write short notes."}, {"role": "user", "content": prompt}]
    # the client of the moment, as `@observe` resolves it (a module-level one could be a stale default)
    with get_client().start_as_current_observation(
        as_type="generation", name="writer-llm", input=messages
    ) as gen:
        reply = f"Note: {prompt}"
        gen.update(output=reply)
    return reply


@observe(as_type="agent")
def writer(prompt: str) -> str:
    return _model_call(prompt)


@observe(as_type="tool")
def delegate(task: str, keep: bool) -> str:
    return writer(task if keep else FIXED_PROMPT)


@observe(as_type="agent")
def supervisor(question: str, keep: bool) -> str:
    return delegate(f"Summarise for the user: {question}", keep)


def run_passing(text: str) -> object:
    return supervisor(text, True)


def run_dropping(text: str) -> object:
    return supervisor(text, False)
