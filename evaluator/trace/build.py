"""From observations (any order, any source) to the normalized Trace, through the trace conventions.

Rules that hold under every convention (DESIGN.md, Trace model):
- Order: start time; on a tie, ancestors before descendants, then the call that ended first.
- Tool calls: tool runs; runs of one tool with the same tool-call id are one call (a tool resumed
  after LangGraph's `interrupt()` runs again from its start), made when the first run began, when
  they belong to one agent run, or the earlier run stopped short in an earlier run of the same agent
  (the resumed graph); two agent runs' calls that share an id (a scripted model's fixed ids) are two.
- A tool directly inside a tool of the same name (plain spans between count as direct) is one call
  traced twice (a framework's tool whose function is also `@observe(as_type="tool")`), unless that
  tool has several of its name beneath it (a tool calling itself) or the two carry different call ids.
- Hand-offs: a tool call whose name is a hand-off pattern (`transfer_to_<agent>`, ...), or whose call
  ran another agent (delegation: a sub-agent as a tool), is a hand-off, not a tool.
- Entry agents: declared in the rules; known from the framework (`TraceConvention.entry_agents`); the
  one top-level agent that encloses every other agent; or the first top-level agent when its own model
  was offered hand-off tools (langgraph-supervisor's supervisor, a swarm's default agent): a router by
  construction, so it is the orchestrator in a run where it answers without handing over too.
  Sibling agents under a plain span are not. An agent that delegates through ordinary tools (sub-agents
  as tools) shows it is an orchestrator only when it delegates: declare it (`entry_agents`) to exempt
  it in runs where it answers alone.
- An agent directly inside an agent of the same name is the same call recorded twice (a framework
  span inside a team's own wrapper) and counts once, unless the name is a method name such as `run`.
- Ambiguity: agents or tools named like methods (`run`, `execute`, ...) that ran as several calls, or
  nested in one another, give a warning saying how to name them.
- Guardrails: an agent run inside a guardrail (a GUARDRAIL observation) checks the workflow's input
  or output; it is an agent for include/exclude, always expected under strict checks (it runs on
  every input, by configuration), and never the flow nor an entry agent.
- Flow: the `flow` metadata of the earliest observation that has one, else the first agent that is
  neither an entry agent nor a guardrail's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from evaluator._json import loads_or
from evaluator.trace.conventions import (
    DEFAULT_RULES,
    Role,
    TraceConvention,
    TraceRules,
    Tree,
    conventions_for,
    forced_convention_warnings,
)
from evaluator.trace.conventions.detect import assign_roles
from evaluator.trace.model import (
    ERROR_LEVEL,
    FLOW_KEY,
    GENERATION,
    GUARDRAIL,
    AgentCall,
    Handoff,
    Observation,
    ToolCall,
    Trace,
    normalize_name,
)
from evaluator.trace.naming import ambiguity_warnings, offered_tools, parse_arguments, tool_call_id

__all__ = ["build_trace"]

_GENERIC_NAMES = frozenset({"run", "arun", "execute", "invoke", "ainvoke", "call", "__call__", "main"})


def build_trace(
    trace_id: str,
    observations: Iterable[Observation],
    *,
    name: str | None = None,
    output: Any = None,
    rules: TraceRules = DEFAULT_RULES,
) -> Trace:
    """Normalize observations into a Trace, reading agents, tools and hand-offs by convention."""
    tree = Tree.of(observations)
    conventions = conventions_for(tree, rules)
    roles = _merge_repeats(tree, assign_roles(tree, conventions, rules))
    nearest = _nearest_agents(tree, roles)
    agents = _agents(tree, roles, nearest)
    tools, handoffs, tool_order = _tools_and_handoffs(tree, roles, nearest, rules, agents)
    entry_ids = _entry_ids(tree, conventions, rules, agents, nearest)
    guardrail_ids = _guardrail_ids(tree, agents)
    agents = [
        replace(a, entry=a.id in entry_ids and a.id not in guardrail_ids, guardrail=a.id in guardrail_ids)
        for a in agents
    ]
    ordered = tree.ordered
    roots = tree.roots
    return Trace(
        id=trace_id,
        name=name if name is not None else (roots[0].name if roots else None),
        agents=tuple(agents),
        tools=tuple(tools),
        flow=_flow(ordered, agents),
        reported=_reported(ordered, rules.state_keys),
        output=output if output is not None else (roots[0].output if roots else None),
        errors=tuple(f"{o.name}: {o.status_message or 'error'}" for o in ordered if o.level == ERROR_LEVEL),
        prompts=tuple(
            dict.fromkeys(
                (o.prompt_name, o.prompt_version) for o in ordered if o.prompt_name and o.prompt_version
            )
        ),
        start_time=min((o.start_time for o in ordered if o.start_time is not None), default=None),
        end_time=max((o.end_time for o in ordered if o.end_time is not None), default=None),
        observation_count=len(ordered),
        handoffs=tuple(handoffs),
        tool_order=tuple(tool_order),
        names=frozenset(
            {o.name for o in ordered}
            | {a.name for a in agents}
            | {t.name for t in tools}
            | {h.target for h in handoffs}
            | {h.via for h in handoffs}
        ),
        convention="+".join(c.name for c in conventions),
        warnings=(
            *ambiguity_warnings(tree, roles, nearest, _GENERIC_NAMES),
            *forced_convention_warnings(tree, rules),
        ),
    )


def _merge_repeats(tree: Tree, roles: dict[str, Role]) -> dict[str, Role]:
    """Drop an agent or a tool whose nearest ancestor with a role is one of its kind with the same
    (non-generic) name: one call, two spans (a team's wrapper around a framework's agent span; a
    framework's tool whose function is also traced with `@observe(as_type="tool")`, with plain spans
    between them or none). A tool stays a call of its own when the tool above it has other tools of
    its name beneath it (a tool that calls itself twice: two calls, not one recorded three times) or
    when both carry tool-call ids that differ. A tool that calls itself once, with no ids to tell,
    reads as one call: the trace cannot tell it from a call traced twice."""
    merged = dict(roles)
    with_roles = [o for o in tree.ordered if o.id in roles]
    above = {o.id: next((a for a in tree.ancestors(o) if a.id in roles), None) for o in with_roles}
    alike = Counter(
        (parent.id, roles[obs_id].name)
        for obs_id, parent in above.items()
        if parent is not None and roles[obs_id].kind == "tool"
    )
    for obs in with_roles:
        role, parent = roles[obs.id], above[obs.id]
        if parent is None or role.name in _GENERIC_NAMES or roles[parent.id] != role:
            continue
        if role.kind == "tool" and (alike[(parent.id, role.name)] > 1 or _other_call(obs, parent)):
            continue
        del merged[obs.id]
    return merged


def _other_call(obs: Observation, above: Observation) -> bool:
    """Whether the two runs carry tool-call ids, and different ones: two calls of the model's."""
    ids = (tool_call_id(obs), tool_call_id(above))
    return None not in ids and ids[0] != ids[1]


def _nearest_agents(tree: Tree, roles: Mapping[str, Role]) -> dict[str, str | None]:
    """For every observation, the id of its nearest agent ancestor (None: there is none). O(n): the
    tree is in start order, ancestors first."""
    nearest: dict[str, str | None] = {}
    for obs in tree.ordered:
        parent = tree.parent(obs)
        if parent is None:
            nearest[obs.id] = None
            continue
        parent_role = roles.get(parent.id)
        if parent_role is not None and parent_role.kind == "agent":
            nearest[obs.id] = parent.id
        else:
            nearest[obs.id] = nearest.get(parent.id)
    return nearest


def _agents(tree: Tree, roles: Mapping[str, Role], nearest: Mapping[str, str | None]) -> list[AgentCall]:
    agents = []
    for obs in tree.ordered:
        role = roles.get(obs.id)
        if role is None or role.kind != "agent":
            continue
        parent_id = nearest[obs.id]
        agents.append(
            AgentCall(
                name=role.name,
                entry=False,
                start_time=obs.start_time,
                end_time=obs.end_time,
                error=_error(obs),
                id=obs.id,
                parent=roles[parent_id].name if parent_id is not None else None,
                input=obs.input,
                output=obs.output,
            )
        )
    return agents


def _tools_and_handoffs(
    tree: Tree,
    roles: Mapping[str, Role],
    nearest: Mapping[str, str | None],
    rules: TraceRules,
    agents: list[AgentCall],
) -> tuple[list[ToolCall], list[Handoff], list[int]]:
    """Tool calls and hand-offs in call order, and each tool's position among both."""
    by_normal_name = {normalize_name(a.name): a.name for a in agents}
    agent_ids = {a.id for a in agents}
    tools: list[ToolCall] = []
    handoffs: list[Handoff] = []
    order: list[int] = []
    for first, last in _tool_calls(tree, roles, nearest):
        name = roles[first.id].name
        source_id = nearest[first.id]
        source = roles[source_id].name if source_id is not None else None
        position = len(tools) + len(handoffs)
        found = (
            _handoff_target(
                tree,
                run,
                tool_name=name,
                rules=rules,
                agent_ids=agent_ids,
                roles=roles,
                by_normal_name=by_normal_name,
            )
            for run in ((first,) if last is first else (first, last))  # a resumed call: either run
        )
        target = next((t for t in found if t is not None), None)
        if target is not None:
            handoffs.append(
                Handoff(
                    via=name,
                    source=source,
                    target=target,
                    start_time=first.start_time,
                    order=position,
                    input=first.input,
                    id=first.id,
                    arguments=parse_arguments(first),
                )
            )
            continue
        order.append(position)
        tools.append(_tool_call(name, source, first, last))
    return tools, handoffs, order


def _tool_calls(
    tree: Tree, roles: Mapping[str, Role], nearest: Mapping[str, str | None]
) -> list[tuple[Observation, Observation]]:
    """Each tool call as (its first run, its last run), in call order. Runs of one tool that carry the
    same tool-call id are one call run again (`_runs_again`). Runs without an id are calls of their own."""
    calls: list[list[Observation]] = []
    by_id: dict[tuple[str, str], list[Observation]] = {}
    for obs in tree.ordered:
        role = roles.get(obs.id)
        if role is None or role.kind != "tool":
            continue
        call_id = tool_call_id(obs)
        runs = by_id.get((role.name, call_id)) if call_id is not None else None
        if runs is not None and _runs_again(runs[-1], obs, roles, nearest):
            runs.append(obs)
            continue
        calls.append([obs])
        if call_id is not None:
            by_id[(role.name, call_id)] = calls[-1]
    return [(runs[0], runs[-1]) for runs in calls]


def _runs_again(
    earlier: Observation, later: Observation, roles: Mapping[str, Role], nearest: Mapping[str, str | None]
) -> bool:
    """Whether `later`, a run of the tool with the tool-call id of `earlier`, is the same call run again:
    within the same agent run (a retried tool), or in a later run of the same agent after `earlier`
    stopped short, without an output or with an error (a LangGraph tool paused at `interrupt()`: the
    resumed graph is a new run of the agent, and the tool starts over). Otherwise it is another call
    that happens to share the id: a scripted model's fixed ids (pydantic-ai's TestModel names each
    call after its tool), whether another agent made it or another run of the same agent did."""
    before, after = nearest[earlier.id], nearest[later.id]
    if before == after:
        return True
    if before is None or after is None or roles[before].name != roles[after].name:
        return False
    return earlier.output is None or earlier.level == ERROR_LEVEL


def _tool_call(name: str, agent: str | None, first: Observation, last: Observation) -> ToolCall:
    """One call from its runs: made when the first began, with the outcome of the last."""
    return ToolCall(
        name=name,
        agent=agent,
        input=first.input,
        output=last.output,
        start_time=first.start_time,
        end_time=last.end_time,
        error=_error(last),
        arguments=parse_arguments(first),
        id=first.id,
    )


def _handoff_target(
    tree: Tree,
    obs: Observation,
    *,
    tool_name: str,
    rules: TraceRules,
    agent_ids: set[str],
    roles: Mapping[str, Role],
    by_normal_name: Mapping[str, str],
) -> str | None:
    """The agent a tool call hands over to: by pattern (resolved to an agent of the trace when one
    matches, `transfer_to_english_agent` -> "English agent"), or the first agent its call ran."""
    named = rules.handoff_target(tool_name)
    if named is not None:
        return by_normal_name.get(normalize_name(named), named)
    ran = next((d for d in tree.descendants(obs) if d.id in agent_ids), None)
    return roles[ran.id].name if ran is not None else None


def _entry_ids(
    tree: Tree,
    conventions: list[TraceConvention],
    rules: TraceRules,
    agents: list[AgentCall],
    nearest: Mapping[str, str | None],
) -> set[str]:
    found = [(a.id, a.name) for a in agents]
    entry = {a.id for a in agents if a.name in rules.entry_agents}
    for convention in conventions:
        entry |= convention.entry_agents(tree, found)
    top = [a for a in agents if a.parent is None]
    if len({a.name for a in top}) == 1 and len(top) < len(agents):
        entry |= {a.id for a in top}  # one agent encloses all the others
    if top and _offered_handoffs(tree, top[0].id, rules, nearest):
        entry |= {a.id for a in top if a.name == top[0].name}  # a router, whether it routed or not
    return entry


def _offered_handoffs(
    tree: Tree, agent_id: str, rules: TraceRules, nearest: Mapping[str, str | None]
) -> bool:
    """Whether a model call of this agent's own (not of an agent inside it) was offered a hand-off tool.
    (A scan of the ordered observations, not of the agent's descendants: a parent cycle in bad input is
    cut there, not in the child links.)"""
    return any(
        o.type == GENERATION
        and nearest.get(o.id) == agent_id
        and any(rules.handoff_target(name) is not None for name in offered_tools(o))
        for o in tree.ordered
    )


def _guardrail_ids(tree: Tree, agents: list[AgentCall]) -> set[str]:
    """Agents run inside a guardrail (a GUARDRAIL observation: the OpenAI Agents SDK's guardrail spans,
    `as_type="guardrail"`): the guardrail's checking agent, never an orchestrator nor the flow."""
    return {a.id for a in agents if any(o.type == GUARDRAIL for o in tree.ancestors(tree.by_id[a.id]))}


def _error(obs: Observation) -> str | None:
    return (obs.status_message or "error") if obs.level == ERROR_LEVEL else None


def _reported(ordered: Iterable[Observation], keys: tuple[str, ...]) -> dict[str, Any]:
    """Per key, the metadata value of the last observation by end time that carries it (an observation
    without an end time counts as ending first; ties keep the later one in `ordered`). A string that
    parses as a JSON object or list is parsed: the SDK stores nested metadata as JSON text."""
    found: dict[str, tuple[float, Any]] = {}
    for obs in ordered:
        ended = obs.end_time if obs.end_time is not None else float("-inf")
        for key in keys:
            if key in obs.metadata and (key not in found or ended >= found[key][0]):
                found[key] = (ended, obs.metadata[key])
    return {key: _parsed(value) for key, (_, value) in found.items()}


def _parsed(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("{", "["):
        return loads_or(value, value)
    return value


def _flow(ordered: Iterable[Observation], agents: list[AgentCall]) -> str | None:
    for obs in ordered:
        value = obs.metadata.get(FLOW_KEY)
        if value is not None and value != "":
            return str(value)
    return next((a.name for a in agents if not a.entry and not a.guardrail), None)
