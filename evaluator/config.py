"""Configuration: `evaluator.toml` (found in the working folder or a parent) plus the environment.

    [targets.research]                      # or: research = "demo_agents.research:run"
    entry = "demo_agents.research:run"
    agents = ["orchestrator", "research", "clarification"]   # optional: lets lint catch typos
    tools = ["pdf_retrieval", "web_search"]

    [run]        concurrency = 4, timeout_seconds = 120
    [store]      path = ".evaluator/evaluator.db"
    [prompts]    dir = "prompts"
    [llm]        model = "gpt-4o-mini", targets = true   # offer the endpoint to targets
    [langfuse]   flush_timeout_seconds = 30, delivery_deadline_seconds = 60, score_batch_size = 50,
                 read_deadline_seconds = 60, verify_deadline_seconds = 120
    [compare]    workflow_pass_rate_drop = 2, full_workflow_drop = 3, quality_drop = 0.1,
                 accuracy_drop = 2, latency_increase_percent = 20, latency_floor_ms = 50,
                 min_scenarios = 10, alpha = 0.05
    [datasets]   name = "scenarios", link_runs = true   # runs as Langfuse dataset runs

Secrets never live here: the OpenAI-compatible endpoint comes from OPENAI_API_KEY / OPENAI_BASE_URL, Langfuse
from LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY / LANGFUSE_BASE_URL. Relative paths are relative to the file.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from evaluator._problems import validation_problems
from evaluator.errors import ConfigError

CONFIG_FILE = "evaluator.toml"


@dataclass(frozen=True, kw_only=True)
class LLMEndpoint:
    """An OpenAI-compatible endpoint. The key comes from the environment and is never printed."""

    base_url: str | None
    model: str
    api_key: SecretStr

    def __repr__(self) -> str:
        return f"LLMEndpoint(base_url={self.base_url!r}, model={self.model!r})"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TargetConfig(_Section):
    entry: str
    agents: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()


class RunConfig(_Section):
    concurrency: int = Field(default=4, ge=1, le=256)
    timeout_seconds: float = Field(default=120.0, gt=0)


class StoreConfig(_Section):
    path: Path = Path(".evaluator/evaluator.db")


class PromptsConfig(_Section):
    dir: Path = Path("prompts")


class LLMConfig(_Section):
    model: str = "gpt-4o-mini"
    targets: bool = True  # offer the endpoint (when one is configured) to targets


class LangfuseConfig(_Section):
    """Bounds on talking to Langfuse; where it is and the keys come from the environment only."""

    flush_timeout_seconds: float = Field(default=30.0, gt=0)
    delivery_deadline_seconds: float = Field(default=60.0, gt=0)
    score_batch_size: int = Field(default=50, ge=1, le=500)
    read_deadline_seconds: float = Field(default=60.0, gt=0)  # validate --trace-id, per trace
    verify_deadline_seconds: float = Field(default=120.0, gt=0)  # run --verify-langfuse, all traces


class CompareConfig(_Section):
    """Regression thresholds of `evaluator compare` (defaults: the seed's regression table). Rates and
    means of 0-1 scores drop in points (0-100); quality in its own 0-1 units; latency rises in percent.
    A change *more than* a threshold is a regression; a change of exactly the threshold is not."""

    workflow_pass_rate_drop: float = Field(default=2.0, ge=0)
    full_workflow_drop: float = Field(default=3.0, ge=0)
    quality_drop: float = Field(default=0.1, ge=0)
    accuracy_drop: float = Field(default=2.0, ge=0)
    latency_increase_percent: float = Field(default=20.0, ge=0)
    # A latency rise must also exceed this many milliseconds: on fast targets 20 % is timer noise.
    latency_floor_ms: float = Field(default=50.0, ge=0)
    min_scenarios: int = Field(default=10, ge=1)  # fewer paired scenarios: the verdict is flagged
    alpha: float = Field(default=0.05, gt=0, lt=1)  # "beyond the noise" when the paired test's p < alpha


class DatasetsConfig(_Section):
    """The Langfuse dataset a suite is pushed to, and whether connected runs link to it as dataset runs."""

    name: str = Field(default="scenarios", min_length=1, max_length=200)
    link_runs: bool = True


class Settings(_Section):
    targets: dict[str, TargetConfig] = {}
    run: RunConfig = RunConfig()
    store: StoreConfig = StoreConfig()
    prompts: PromptsConfig = PromptsConfig()
    llm: LLMConfig = LLMConfig()
    langfuse: LangfuseConfig = LangfuseConfig()
    compare: CompareConfig = CompareConfig()
    datasets: DatasetsConfig = DatasetsConfig()

    @field_validator("targets", mode="before")
    @classmethod
    def _shorthand(cls, value: object) -> object:
        if isinstance(value, Mapping):
            return {k: {"entry": v} if isinstance(v, str) else v for k, v in value.items()}
        return value


@dataclass(frozen=True, kw_only=True)
class Config:
    settings: Settings
    base_dir: Path
    source: Path | None

    def path(self, relative: Path) -> Path:
        return relative if relative.is_absolute() else self.base_dir / relative

    @property
    def store_path(self) -> Path:
        return self.path(self.settings.store.path)

    @property
    def prompts_dir(self) -> Path:
        return self.path(self.settings.prompts.dir)

    def llm_endpoint(self, env: Mapping[str, str] | None = None) -> LLMEndpoint | None:
        """The OpenAI-compatible endpoint, when OPENAI_API_KEY or OPENAI_BASE_URL is set."""
        env = os.environ if env is None else env
        key, base_url = env.get("OPENAI_API_KEY"), env.get("OPENAI_BASE_URL")
        if not key and not base_url:
            return None
        return LLMEndpoint(
            base_url=base_url or None,
            model=self.settings.llm.model,
            api_key=SecretStr(key or "not-needed"),
        )


def find_config(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / CONFIG_FILE
        if candidate.is_file():
            return candidate
    return None


def load_config(path: Path | None = None, *, cwd: Path | None = None) -> Config:
    """Read `path`, or $EVALUATOR_CONFIG, or the nearest evaluator.toml; defaults when there is none."""
    cwd = cwd or Path.cwd()
    env_path = os.environ.get("EVALUATOR_CONFIG")
    source = path or (Path(env_path) if env_path else None) or find_config(cwd)
    if source is None:
        return Config(settings=Settings(), base_dir=cwd, source=None)
    try:
        raw = tomllib.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(
            f"{source}: cannot read the configuration ({exc}). "
            "Fix: check the path given to --config or EVALUATOR_CONFIG."
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML ({exc}). Fix: correct the syntax.") from None
    try:
        settings = Settings.model_validate(raw)
    except ValidationError as exc:
        problems = validation_problems(
            exc, source=str(source), model=Settings, fix="see the configuration section of the README"
        )
        raise ConfigError("\n".join(str(p) for p in problems)) from None
    return Config(settings=settings, base_dir=source.parent.resolve(), source=source)
