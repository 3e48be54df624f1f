"""Configuration: `evaluator.toml` (found in the working folder or a parent) plus the environment.

    [targets.research]                      # or: research = "demo_agents.research:run"
    entry = "demo_agents.research:run"
    agents = ["orchestrator", "research", "clarification"]   # optional: lets lint catch typos
    tools = ["pdf_retrieval", "web_search"]
    convention = "auto"                     # or langfuse, langgraph, genai, openinference
    entry_agents = ["orchestrator"]         # optional: declared orchestrators
    agent_observations = []                 # optional: observation names that are agents
    agent_pattern = "(?P<name>.+)_agent"    # optional: the same, as a regex
    handoff_patterns = ["^delegate_to_(?P<agent>.+)$"]       # optional: more hand-off tools
    tool_schemas = "tools.json"             # optional: OpenAI function definitions (per-agent checks)
    [targets.research.agent_tools]          # optional: the tools each agent may use (per-agent checks)
    research = ["pdf_retrieval", "web_search"]

    [run]        concurrency = 4, timeout_seconds = 120
    [store]      path = ".evaluator/evaluator.db"
    [prompts]    dir = "prompts"
    [llm]        model = "gpt-4o-mini", targets = true   # offer the endpoint to targets
    [judge]      model = "gpt-4o-mini", concurrency = 8, timeout_seconds = 60, max_attempts = 4,
                 source_budget_chars = 12000, miss_phrases = [...], quality_prompt, correctness_prompt,
                 agent_prompt, per_agent = true   # the per-agent judge (where per-agent analysis is on)
                 input_price_per_million_tokens, output_price_per_million_tokens   # optional
    [langfuse]   flush_timeout_seconds = 30, delivery_deadline_seconds = 60, score_batch_size = 200,
                 read_deadline_seconds = 60, verify_deadline_seconds = 120
    [compare]    workflow_pass_rate_drop, full_workflow_drop, quality_drop, accuracy_drop,
                 latency_increase_percent (unset: each metric's own gate), latency_floor_ms = 50,
                 min_scenarios = 10, alpha = 0.05, thresholds = {figure = points or units}
    [metrics]    extra = ["module:metric"]   # metrics of your own, after the built-in ones
    [per_agent]  recommend_below = 0.7       # per-agent analysis: a score below it recommends
    [per_agent.weights]        conversation = 0.30, tool_use = 0.25, coordination = 0.20,
                               reasoning = 0.15, intent_drift = 0.10     # overall_score (the seed's)
    [per_agent.agent_weights]  tool_use = 0.35, reasoning = 0.25, handoff = 0.20,
                               response_quality = 0.20                   # each agent's score
    [datasets]   name = "scenarios", link_runs = true   # runs as Langfuse experiments

Secrets never live here: the OpenAI-compatible endpoint comes from OPENAI_API_KEY / OPENAI_BASE_URL, the
judges' from EVALUATOR_JUDGE_BASE_URL / EVALUATOR_JUDGE_API_KEY (else OPENAI_*), Langfuse from
LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY / LANGFUSE_BASE_URL. Relative paths are relative to the file.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from evaluator._problems import validation_problems
from evaluator.errors import ConfigError, Problem, did_you_mean

__all__ = [
    "DEFAULT_MISS_PHRASES",
    "MAX_SECONDS",
    "CompareConfig",
    "Config",
    "ConventionName",
    "DatasetsConfig",
    "JudgeConfig",
    "LLMConfig",
    "LLMEndpoint",
    "LangfuseConfig",
    "PerAgentConfig",
    "PromptsConfig",
    "RunConfig",
    "Settings",
    "StoreConfig",
    "TargetConfig",
    "check_base_url",
    "load_config",
    "shown_url",
]

CONFIG_FILE = "evaluator.toml"
NO_CONFIG_FIX = (  # for what only a configuration defines (targets), when none was found
    f"run from the project folder (the one with its {CONFIG_FILE}), or pass --config path/to/{CONFIG_FILE} "
    "(or set EVALUATOR_CONFIG)"
)


@dataclass(frozen=True, kw_only=True)
class LLMEndpoint:
    """An OpenAI-compatible endpoint. The key comes from the environment and is never printed."""

    base_url: str | None
    model: str
    api_key: SecretStr

    def __repr__(self) -> str:
        shown = shown_url(self.base_url) if self.base_url else None
        return f"LLMEndpoint(base_url={shown!r}, model={self.model!r})"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


ConventionName = Literal["auto", "langfuse", "langgraph", "genai", "openinference"]
StateKey = Literal["intent", "domain", "acts", "slots", "action"]  # what a dialogue turn reports


class TargetConfig(_Section):
    """A target, and what its traces cannot say about it (README, Tracing your system)."""

    entry: str
    agents: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    convention: ConventionName = "auto"  # how its traces name agents and tools; auto: detected per trace
    entry_agents: tuple[str, ...] = ()  # orchestrators: always expected
    agent_observations: tuple[str, ...] = ()  # observations (any type) with these names are agents
    agent_pattern: str | None = None  # regex; a full match is an agent, named by the group `name`
    handoff_patterns: tuple[str, ...] = ()  # regexes of hand-off tool names, with the group `agent`
    # Dialogues (README, Dialogues): the slots a guarded action needs (a scenario's `policy` replaces
    # it), the metadata keys its traces report the state under (intent, domain, acts, slots, action ->
    # its own name), and a JSON list of entity names (or of objects with a `name`), relative to this file.
    policy: dict[str, tuple[str, ...]] = {}
    state_keys: dict[StateKey, str] = {}
    entities: Path | None = None

    @field_validator("entry")
    @classmethod
    def _entry(cls, value: str) -> str:
        module, sep, attr = value.partition(":")
        if not (sep and module and attr):
            raise ValueError('not of the form module:callable. Fix: write it like "demo_agents.research:run"')
        return value

    @field_validator("policy")
    @classmethod
    def _policy(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        empty = [action for action, slots in value.items() if not slots]
        if empty:
            raise ValueError(f"policy {', '.join(empty)} names no slot; list the slots it needs")
        return value

    # Per-agent analysis (DESIGN.md): the tools each agent may use, and a file of the tools' schemas
    # (relative to the configuration) for those the traces record no definition of.
    agent_tools: dict[str, tuple[str, ...]] = {}
    tool_schemas: Path | None = None

    @field_validator("agent_pattern")
    @classmethod
    def _agent_pattern(cls, value: str | None) -> str | None:
        if value is not None:
            _compiled(value, "agent_pattern")
        return value

    @field_validator("handoff_patterns")
    @classmethod
    def _handoff_patterns(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in value:
            if "agent" not in _compiled(pattern, "handoff_patterns").groupindex:
                raise ValueError(
                    f"handoff pattern {pattern!r} has no group named agent; write it like "
                    "'^delegate_to_(?P<agent>.+)$'"
                )
        return value

    @model_validator(mode="after")
    def _agent_tools_known(self) -> TargetConfig:
        """`agent_tools` names only agents and tools the target declares (when it declares them)."""
        wrong = [
            *_unknown_names("agent", self.agent_tools, self.agents),
            *_unknown_names("tool", (t for tools in self.agent_tools.values() for t in tools), self.tools),
        ]
        if wrong:
            raise ValueError(
                "agent_tools: " + "; ".join(wrong) + ". Fix: name the target's agents and tools as its "
                "agents = [...] and tools = [...] declare them (or add the new ones there)"
            )
        return self


def _unknown_names(kind: str, names: Iterable[str], known: Collection[str]) -> list[str]:
    """'unknown agent "x" (did you mean "y"?)' for each name not in `known` (nothing when `known` is empty:
    not declared, not checked)."""
    if not known:
        return []
    return [f'unknown {kind} "{n}"{did_you_mean(n, known)}' for n in dict.fromkeys(names) if n not in known]


def _compiled(pattern: str, field: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"{field}: {pattern!r} is not a regular expression ({exc})") from None


# The longest timeout or deadline taken (a week): the operating system's waits refuse a much longer one
# (`inf` among them: "timestamp out of range"), which would end a run in a traceback, not a timeout.
MAX_SECONDS = 7 * 24 * 3600.0


class RunConfig(_Section):
    concurrency: int = Field(default=4, ge=1, le=256)
    timeout_seconds: float = Field(default=120.0, gt=0, le=MAX_SECONDS)


class StoreConfig(_Section):
    path: Path = Path(".evaluator/evaluator.db")


class PromptsConfig(_Section):
    dir: Path = Path("prompts")


class LLMConfig(_Section):
    model: str = "gpt-4o-mini"
    targets: bool = True  # offer the endpoint (when one is configured) to targets


# "I don't know" and its variants (seed crag-llm-judge-evaluator.md): an answer holding one is a miss.
DEFAULT_MISS_PHRASES = (
    "i don't know",
    "i do not know",
    "i don't have enough information",
    "i do not have enough information",
    "i cannot answer",
    "i can't answer",
    "i am unable to answer",
    "i'm unable to answer",
)


class JudgeConfig(_Section):
    """The LLM judges. Where the endpoint is and its key come from the environment only."""

    model: str = Field(default="gpt-4o-mini", min_length=1)
    concurrency: int = Field(default=8, ge=1, le=256)  # judge calls at once, apart from the targets'
    timeout_seconds: float = Field(default=60.0, gt=0, le=MAX_SECONDS)  # per request
    max_attempts: int = Field(default=4, ge=1, le=10)  # per request, retries included
    source_budget_chars: int = Field(default=12_000, ge=0)  # tool outputs shown to the quality judge
    miss_phrases: tuple[str, ...] = DEFAULT_MISS_PHRASES
    quality_prompt: str = "evaluation/quality"
    correctness_prompt: str = "evaluation/correctness"
    agent_prompt: str = "evaluation/agent"
    per_agent: bool = True  # the per-agent judge (one call per agent per trace) where the analysis is on
    input_price_per_million_tokens: float | None = Field(default=None, ge=0)  # for cost in Langfuse
    output_price_per_million_tokens: float | None = Field(default=None, ge=0)


class LangfuseConfig(_Section):
    """Bounds on talking to Langfuse; where it is and the keys come from the environment only."""

    flush_timeout_seconds: float = Field(default=30.0, gt=0, le=MAX_SECONDS)
    delivery_deadline_seconds: float = Field(default=60.0, gt=0, le=MAX_SECONDS)
    # Scores per POST: 200 rather than 50 took the delivery thread's CPU from 0.26 to 0.12 ms a
    # scenario (benchmarks/bench_judges.py, exporting); a batch Langfuse refuses whole (a 400 or 413)
    # costs two more halvings to find its guilty scores.
    score_batch_size: int = Field(default=200, ge=1, le=500)
    # validate --trace-id, per trace; run --verify-langfuse, all traces
    read_deadline_seconds: float = Field(default=60.0, gt=0, le=MAX_SECONDS)
    verify_deadline_seconds: float = Field(default=120.0, gt=0, le=MAX_SECONDS)


class CompareConfig(_Section):
    """Regression thresholds of `evaluator compare`. Rates and means of 0-1 scores drop in points
    (0-100); quality in its own 0-1 units; latency rises in percent. A change *more than* a threshold
    is a regression; a change of exactly the threshold is not. A threshold left unset (None) is its
    metric's own (its gate's: the seed's regression table), so each default is spelled once, there."""

    workflow_pass_rate_drop: float | None = Field(default=None, ge=0)
    full_workflow_drop: float | None = Field(default=None, ge=0)
    quality_drop: float | None = Field(default=None, ge=0)
    accuracy_drop: float | None = Field(default=None, ge=0)
    latency_increase_percent: float | None = Field(default=None, ge=0)
    # A latency rise must also exceed this many milliseconds: on fast targets 20 % is timer noise.
    latency_floor_ms: float = Field(default=50.0, ge=0)
    min_scenarios: int = Field(default=10, ge=1)  # fewer paired scenarios: the verdict is flagged
    alpha: float = Field(default=0.05, gt=0, lt=1)  # "beyond the noise" when the paired test's p < alpha
    # Thresholds of other gated figures, by figure name (a metric's own default otherwise); a size of
    # change, as the *_drop keys are: a negative one made any change short of a gain of that size a
    # regression, NaN none at all.
    thresholds: dict[str, Annotated[float, Field(ge=0)]] = Field(default_factory=dict)


class MetricsConfig(_Section):
    """Metrics of the project's own, each `module:attribute` naming a metric (or a class or function
    that makes one with no arguments), run, scored and reported after the built-in ones."""

    extra: list[str] = Field(default_factory=list)


class _Weights(_Section):
    @model_validator(mode="after")
    def _some_weight(self) -> _Weights:
        if not any(value > 0 for value in self.model_dump().values()):
            raise ValueError("every weight is 0; give at least one part a weight above 0")
        return self


class OverallWeightsConfig(_Weights):
    """The weights of a trace's `overall_score` (the seed's Overall Score Formula); `intent_drift`
    weighs 1 - intent_drift_score."""

    conversation: float = Field(default=0.30, ge=0)
    tool_use: float = Field(default=0.25, ge=0)
    coordination: float = Field(default=0.20, ge=0)
    reasoning: float = Field(default=0.15, ge=0)
    intent_drift: float = Field(default=0.10, ge=0)


class AgentWeightsConfig(_Weights):
    """The weights of an agent's `score` (the seed's Per-Agent Score Formula)."""

    tool_use: float = Field(default=0.35, ge=0)
    reasoning: float = Field(default=0.25, ge=0)
    handoff: float = Field(default=0.20, ge=0)
    response_quality: float = Field(default=0.20, ge=0)


class PerAgentConfig(_Section):
    """How the per-agent analysis rolls up (README, Per-agent analysis): the weights (re-normalised over
    the parts that were measured) and the score below which a recommendation is made."""

    weights: OverallWeightsConfig = OverallWeightsConfig()
    agent_weights: AgentWeightsConfig = AgentWeightsConfig()
    recommend_below: float = Field(default=0.7, ge=0, le=1)


class DatasetsConfig(_Section):
    """The Langfuse dataset a suite is pushed to, and whether connected runs are experiments on it."""

    name: str = Field(default="scenarios", min_length=1, max_length=200)
    link_runs: bool = True


class Settings(_Section):
    targets: dict[str, TargetConfig] = {}
    run: RunConfig = RunConfig()
    store: StoreConfig = StoreConfig()
    prompts: PromptsConfig = PromptsConfig()
    llm: LLMConfig = LLMConfig()
    judge: JudgeConfig = JudgeConfig()
    langfuse: LangfuseConfig = LangfuseConfig()
    compare: CompareConfig = CompareConfig()
    metrics: MetricsConfig = MetricsConfig()
    datasets: DatasetsConfig = DatasetsConfig()
    per_agent: PerAgentConfig = PerAgentConfig()

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

    @property
    def not_found(self) -> str:
        """Where the configuration was looked for when none was found (every setting then has its
        default, and no target is configured); empty when one was used."""
        if self.source is not None:
            return ""
        return f"no {CONFIG_FILE} was found in {self.base_dir} or a folder above it"

    def path(self, relative: Path) -> Path:
        return relative if relative.is_absolute() else self.base_dir / relative

    @property
    def store_path(self) -> Path:
        return self.path(self.settings.store.path)

    @property
    def prompts_dir(self) -> Path:
        return self.path(self.settings.prompts.dir)

    def prompts_dir_problems(self) -> list[Problem]:
        """A `[prompts] dir` the file names that is no folder: each prompt a target asks for would be
        unknown, an error per scenario. The default, `prompts/`, may be absent (a project without)."""
        if "dir" not in self.settings.prompts.model_fields_set or self.prompts_dir.is_dir():
            return []
        fix = f"correct the path (relative to {self.base_dir}), or remove dir (default: prompts)"
        found = f"{self.prompts_dir} is not a folder"
        return [Problem(source=str(self.source or CONFIG_FILE), field="[prompts] dir", found=found, fix=fix)]

    def llm_endpoint(self, env: Mapping[str, str] | None = None) -> LLMEndpoint | None:
        """The OpenAI-compatible endpoint, when OPENAI_API_KEY or OPENAI_BASE_URL is set (ConfigError
        when the base URL is no http:// or https:// URL: `check_base_url`)."""
        env = os.environ if env is None else env
        key, base_url = env.get("OPENAI_API_KEY"), env.get("OPENAI_BASE_URL")
        if not key and not base_url:
            return None
        return LLMEndpoint(
            base_url=_endpoint_url("OPENAI_BASE_URL", base_url),
            model=self.settings.llm.model,
            api_key=SecretStr(key or "not-needed"),
        )

    def judge_endpoint(self, env: Mapping[str, str] | None = None) -> LLMEndpoint | None:
        """The judges' endpoint: EVALUATOR_JUDGE_BASE_URL / EVALUATOR_JUDGE_API_KEY, else OPENAI_*.

        A judge base URL of its own never receives OPENAI_API_KEY (a local server such as Ollama
        needs no key, and the OpenAI key must not travel to another host). None: no endpoint, the
        judges do not run. ConfigError when the base URL is no http:// or https:// URL (`check_base_url`).
        """
        env = os.environ if env is None else env
        key, base_url = env.get("EVALUATOR_JUDGE_API_KEY"), env.get("EVALUATOR_JUDGE_BASE_URL")
        variable = "EVALUATOR_JUDGE_BASE_URL"
        if not base_url:
            key, base_url = key or env.get("OPENAI_API_KEY"), env.get("OPENAI_BASE_URL")
            variable = "OPENAI_BASE_URL"
        if not key and not base_url:
            return None
        return LLMEndpoint(
            base_url=_endpoint_url(variable, base_url, judges_borrow=variable == "OPENAI_BASE_URL"),
            model=self.settings.judge.model,
            api_key=SecretStr(key or "not-needed"),
        )


def check_base_url(variable: str, value: str, *, example: str) -> str:
    """`value`, the base URL the environment variable `variable` gives, when it is an http:// or
    https:// URL with a host; ConfigError otherwise, with `example` as the fix where the value does not
    say what was meant. Without its scheme ("127.0.0.1:3000"), a client takes the host for a scheme or
    a path, and every request fails as if the server were down. A user:password in it is not shown."""
    try:
        parts = urlsplit(value)
        port_ok = parts.port is None or parts.port >= 0  # ValueError for a port that is no number
        if parts.scheme in ("http", "https") and parts.hostname and port_ok:
            return value
    except ValueError:  # an unclosed [ of an IPv6 host; a port that is no number ("user:pa/ss@host")
        pass
    shown = _masked(value)
    if "://" not in value and not value.lower().startswith(("http:", "https:")):
        fix = f"write the scheme too: {variable}=http://{shown} (or https:// where the server has TLS)"
    elif "@" in value:
        fix = "percent-encode the user and password in it (a / ? # or @ in them as %2F %3F %23 %40)"
    else:
        fix = f"give the whole URL, e.g. {variable}={example}"
    raise ConfigError(f'{variable}="{shown}" is not an http:// or https:// URL with a host. Fix: {fix}.')


def shown_url(url: str) -> str:
    """`url` as messages show it: a user:password in it (a proxy's, say) as ***, never the secret (the
    host follows the last @ of the URL's authority, as clients read it: a password may hold an @), and
    the value of a query parameter that holds a credential (`?api-key=***`, `&sig=***`) too."""
    parts = urlsplit(url)
    if "@" not in parts.netloc and parts.query == _masked_query(parts.query):
        return url
    netloc = "***@" + parts.netloc.rpartition("@")[2] if "@" in parts.netloc else parts.netloc
    return urlunsplit(parts._replace(netloc=netloc, query=_masked_query(parts.query)))


def _masked(value: str) -> str:
    """A value that is not a valid URL as a message shows it: everything from after its scheme up to
    its last @ as *** (a user:password with a raw / ? or # in it leaves no authority to go by), and the
    credentials in its query as `shown_url` shows them."""
    value, mark, query = value.partition("?")
    value += mark + _masked_query(query)
    if "@" not in value:
        return value
    start = value.find("://")
    start = start + 3 if start >= 0 else 0
    return value[:start] + "***" + value[value.rfind("@") :]


# A query parameter whose name says it holds a credential: an API key, a token, a signature (Azure's SAS
# `sig`), a password or secret. Others (`api-version`) are shown as they are.
_CREDENTIAL = re.compile(r"key|token|secret|passw|pwd|auth|sig|credential|session", re.IGNORECASE)


def _masked_query(query: str) -> str:
    """`query` with the value of each parameter named like a credential as ***."""
    items = (item.partition("=") for item in query.split("&"))
    return "&".join(
        f"{name}{eq}***" if eq and _CREDENTIAL.search(name) else f"{name}{eq}{v}" for name, eq, v in items
    )


_REQUEST_PATH = "/chat/completions"
_AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com")


def _endpoint_url(variable: str, value: str | None, *, judges_borrow: bool = False) -> str | None:
    """An OpenAI-compatible endpoint's base URL from the environment (None: the OpenAI API's).
    ConfigError for a URL the `openai` client cannot call: it puts `chat/completions` after the base
    URL's path as it is, so a query (an Azure OpenAI deployment's `?api-version=`) comes out as
    `?api-version=...chat/completions`, and a base URL ending in /chat/completions asks for it twice.
    Other paths are the server's own (LiteLLM's `/openai/deployments/NAME` route, say) and taken.
    `judges_borrow`: the judges' endpoint is the agents' (OPENAI_BASE_URL, maybe set for another tool)."""
    if not value:
        return None
    url = check_base_url(variable, value, example="https://api.openai.com/v1")
    parts = urlsplit(url)
    base = urlunsplit((*parts[:3], "", "")).rstrip("/").removesuffix(_REQUEST_PATH)
    host = (parts.hostname or "").lower()
    if host.endswith(_AZURE_HOSTS) and ("/deployments/" in parts.path.lower() or parts.query):
        found = "an Azure OpenAI deployment's URL, which the OpenAI client cannot call"
        v1 = shown_url(f"{parts.scheme}://{parts.netloc}/openai/v1")
        fix = (
            f"use the resource's v1 API, {variable}={v1}, with the resource's key and the deployment name "
            "as the model ([judge] model, [llm] model)"
        )
    elif parts.query:
        found = "a URL with a query, which the client would put before the request's path"
        fix = f"give the base URL alone: {variable}={shown_url(base)}"
    elif parts.path.rstrip("/").endswith(_REQUEST_PATH):
        found = "a request's URL, not the base URL the client adds /chat/completions to"
        fix = f"leave {_REQUEST_PATH} out: {variable}={shown_url(base)}"
    else:
        return url
    if judges_borrow:
        fix += (
            "; or give the judges an endpoint of their own with EVALUATOR_JUDGE_BASE_URL (or pass --no-judge)"
        )
    raise ConfigError(f'{variable}="{shown_url(url)}" is {found}. Fix: {fix}.')


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
        raw = tomllib.loads(source.read_text(encoding="utf-8-sig"))  # a BOM (Windows editors) is no key
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{source}: line {line}: not UTF-8 text (byte {exc.object[exc.start]:#04x}). "
            "Fix: save the file as UTF-8 (TOML files are UTF-8)."
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"{source}: cannot read the configuration ({exc}). "
            "Fix: check the path given to --config or EVALUATOR_CONFIG."
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML ({exc}). Fix: correct the syntax.") from None
    except RecursionError:  # the parser is recursive: arrays or tables nested thousands of levels deep
        raise ConfigError(
            f"{source}: values nested too deeply to read. Fix: nest arrays and tables less deeply."
        ) from None
    try:
        settings = Settings.model_validate(raw)
    except ValidationError as exc:
        problems = validation_problems(
            exc, source=str(source), model=Settings, fix="see the configuration section of the README"
        )
        raise ConfigError("\n".join(str(p) for p in problems)) from None
    return Config(settings=settings, base_dir=source.parent.resolve(), source=source)
