"""One connected Langfuse project, split by role: tracing, scores (`ScoreSink`), span re-sending
(`SpanSender`), trace read-back (`TraceReader`), prompt management (`PromptRegistry`), datasets and
run-level experiment scores (`LangfuseDatasets`) and score read-back (`LangfuseScoreHistory`). Consumers
depend on the role protocols they declare, never on this class.
"""

from __future__ import annotations

from collections.abc import Mapping

from langfuse import Langfuse

from evaluator.errors import LangfuseAuthError
from evaluator.langfuse._http import LangfuseApi
from evaluator.langfuse.datasets import LangfuseDatasets
from evaluator.langfuse.experiments import experiment_url
from evaluator.langfuse.prompts import LangfusePrompts
from evaluator.langfuse.score_history import LangfuseScoreHistory
from evaluator.langfuse.scores import LangfuseScores
from evaluator.langfuse.settings import LangfuseSettings
from evaluator.langfuse.span_outbox import SpanResender
from evaluator.langfuse.traces import LangfuseTraces
from evaluator.langfuse.tracing import Tracing

__all__ = ["LangfuseConnection"]


class LangfuseConnection:
    """The roles of one project, sharing one SDK client and the keys from the environment."""

    def __init__(self, settings: LangfuseSettings) -> None:
        self.settings = settings
        self.tracing = Tracing.connected(settings)
        api = LangfuseApi(self.tracing.client, settings)
        self._api = api
        self.scores = LangfuseScores(api)
        self.spans = SpanResender(api)
        self.traces = LangfuseTraces(api)
        self.prompts = LangfusePrompts(api)
        self.datasets = LangfuseDatasets(api)
        self.score_history = LangfuseScoreHistory(api)
        self._project_id: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LangfuseConnection | None:
        """The project the environment names; None in the embedded mode (no keys)."""
        settings = LangfuseSettings.from_env(env)
        return cls(settings) if settings is not None else None

    @property
    def client(self) -> Langfuse:
        return self.tracing.client

    @property
    def destination(self) -> str:
        return self.settings.destination

    def project_id(self) -> str:
        """The keys' project (checks the keys too: a wrong key raises LangfuseAuthError)."""
        if self._project_id is None:
            projects = self._api.call("checking the keys", self._api.client.api.projects.get)
            if not projects.data:
                raise LangfuseAuthError(
                    "Langfuse accepted the keys but shows no project for them. "
                    "Fix: use a project-scoped API key."
                )
            self._project_id = str(projects.data[0].id)
        return self._project_id

    def shutdown(self, timeout_seconds: float) -> bool:
        """The SDK's flush and shutdown (bounded), then our connection pool."""
        done = self.tracing.shutdown(timeout_seconds)
        self._api.close()
        return done

    def end_of_run(self, timeout_seconds: float, *, at_exit_seconds: float) -> bool:
        """The SDK's flush (bounded; its shutdown only in a command: `Tracing.end_of_run`), then our
        connection pool."""
        done = self.tracing.end_of_run(timeout_seconds, at_exit_seconds=at_exit_seconds)
        self._api.close()
        return done

    def trace_url(self, trace_id: str) -> str | None:
        """The trace's page in the Langfuse UI, once the project is known."""
        if self._project_id is None:
            return None
        return f"{self.settings.base_url}/project/{self._project_id}/traces/{trace_id}"

    def experiment_url(self, experiment_id: str) -> str | None:
        """The experiment's results page in the Langfuse UI, once the project is known."""
        if self._project_id is None:
            return None
        return experiment_url(self.settings.base_url, self._project_id, experiment_id)
