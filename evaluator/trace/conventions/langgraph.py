"""LangChain / LangGraph through Langfuse's `CallbackHandler`, recognised by the `langgraph_*` metadata
LangGraph puts on every run inside a graph.

Langfuse types these runs by a name heuristic (AGENT when "agent" is in the run name, else CHAIN), so
the types are ignored here; the graph's structure decides. `langgraph_checkpoint_ns` names each node
invocation ("supervisor:<id>|agent:<id>" is the `agent` node of the `supervisor` sub-graph); the
outermost runs of a namespace are the node's runs (more than one when LangGraph ran the node again:
a `RetryPolicy` retry, or a resume after `interrupt()`).

- Agents: nodes that run a sub-graph (`create_react_agent(name=...)`, `create_agent(name=...)` added
  as nodes, or invoked inside a hand-built node) or that call a model (hand-built `StateGraph` nodes)
  in any of their runs, named after the node; a Functional API `@entrypoint` whose tasks do so; and
  named prebuilt agent graphs invoked elsewhere (a sub-agent called from a tool), named by their
  graph name.
- Plumbing, never agents: the prebuilt agent's inner nodes (`agent`, `model`, `tools`, hooks), runs
  inside a node (`call_agent` wrappers, `call_model`, routers such as `should_continue`, prompts,
  parsers), Functional API `@task` runs (an entrypoint's steps, such as its model call),
  `__start__`/`__end__`, and the unnamed `LangGraph` root.
- Tools: the tool runs (TOOL observations), named by the tool.
- Entry agent: the graph's start node when it is an orchestrator: control comes back to it after
  another agent (a supervisor), or it routes to another agent node, as its recorded choice shows (a
  router: its output a `Command(goto=...)`, or its conditional edge's routing function answering
  with the node). A pipeline's first stage (a plain edge) is not one. A swarm's agents hand over for
  good, through their hand-off tools, so their hand-offs make none of them a router here; but the
  first agent whose model is offered hand-off tools (a swarm's default agent, langgraph-supervisor's
  supervisor) is the entry agent by a rule of every convention (`build`), as the first agent of an
  OpenAI Agents SDK workflow is, whether or not it hands over in the run.
"""

from __future__ import annotations

from evaluator.trace.conventions._tree import Tree
from evaluator.trace.conventions.base import Role, Roles
from evaluator.trace.model import GENERATION, TOOL, Observation

__all__ = ["LangGraph"]

NODE = "langgraph_node"
NAMESPACE = "langgraph_checkpoint_ns"
PREBUILT_NODES = frozenset(
    {
        "agent",
        "model",
        "tools",
        "call_model",
        "pre_model_hook",
        "post_model_hook",
        "generate_structured_response",
    }
)
_GRAPH_ENDS = frozenset({"__start__", "__end__"})
_MIDDLEWARE_HOOKS = frozenset({"before_agent", "before_model", "after_model", "after_agent"})
_UNNAMED_GRAPH = "LangGraph"


class LangGraph:
    name = "langgraph"

    def detect(self, tree: Tree) -> bool:
        return any(NODE in o.metadata for o in tree.ordered)

    def roles(self, tree: Tree) -> Roles:
        node_runs = _node_runs(tree)
        roles: dict[str, Role | None] = {o.id: None for o in tree.ordered if NODE in o.metadata}
        for obs in tree.ordered:
            if obs.type == TOOL:
                roles[obs.id] = Role(kind="tool", name=obs.name)
        tasks = _task_namespaces(tree, node_runs)
        entrypoints = {_parent_ns(ns) for ns in tasks}
        prebuilt_graphs = _prebuilt_graph_runs(tree, node_runs, entrypoints)
        nodes = {_node_name(runs[0], ns) for ns, runs in node_runs.items()}
        for namespace, runs in node_runs.items():
            node = _node_name(runs[0], namespace)
            if namespace in tasks or (
                namespace not in entrypoints and _is_plumbing(tree, node, runs[0], prebuilt_graphs)
            ):
                continue
            if _runs_subgraph(namespace, node_runs, tasks) or any(
                _calls_model(tree, run, nodes) for run in runs
            ):
                roles.update((run.id, Role(kind="agent", name=node)) for run in runs)
        for graph in _named_prebuilt_graphs(tree, node_runs, roles, prebuilt_graphs):
            roles[graph.id] = Role(kind="agent", name=graph.name)
        return roles

    def entry_agents(self, tree: Tree, agents: list[tuple[str, str]]) -> set[str]:
        top = [(i, n) for i, n in agents if "|" not in str(tree.by_id[i].metadata.get(NAMESPACE, "|"))]
        if len(top) < 2:
            return set()
        first_id, first_name = top[0]
        others = [name != first_name for _, name in top[1:]]
        if not any(others):
            return set()
        comes_back = any(others[:-1]) and any(name == first_name for _, name in top[2:])
        routes = _routes_to(tree, tree.by_id[first_id], {n for _, n in top if n != first_name})
        return {i for i, n in top if n == first_name} if comes_back or routes else set()


def _node_runs(tree: Tree) -> dict[str, list[Observation]]:
    """The outermost runs of each checkpoint namespace (start order), by namespace (start order of
    the first run): a run inside another run of its namespace is that run's inner step."""
    runs: dict[str, list[Observation]] = {}
    enclosing: dict[str, object] = {}  # by observation: the namespace of its nearest ancestor with one
    for obs in tree.ordered:  # ancestors first, so each looks at its parent only
        parent = tree.parent(obs)
        above = None if parent is None else parent.metadata.get(NAMESPACE, enclosing.get(parent.id))
        namespace = obs.metadata.get(NAMESPACE)
        enclosing[obs.id] = above
        if isinstance(namespace, str) and namespace and NODE in obs.metadata and above != namespace:
            runs.setdefault(namespace, []).append(obs)
    return runs


def _routes_to(tree: Tree, run: Observation, agents: set[str]) -> bool:
    """Whether the node's run routed to one of these agent nodes: its output is a `Command` whose
    `goto` names one, or a routing function of its conditional edges (a run right inside it, in its
    namespace) answered with one. A plain edge records no such choice: a pipeline's first stage is
    not a router."""
    return any(_destinations(step.output) & agents for step in (run, *_steps(tree, run)))


def _steps(tree: Tree, run: Observation) -> list[Observation]:
    """The runs right inside a node's run, in its namespace (its own calls and its edges' routing)."""
    namespace = run.metadata.get(NAMESPACE)
    return [c for c in tree.children.get(run.id, []) if c.metadata.get(NAMESPACE) == namespace]


def _destinations(value: object) -> set[str]:
    """The nodes a node's output or a routing function's answer sends to (a `Command`'s `goto`, a node
    name, a list of them, or `Send`s)."""
    if isinstance(value, dict) and "goto" in value:
        value = value["goto"]
    if isinstance(value, str):
        return {value}
    if isinstance(value, list):
        names = (v.get("node") if isinstance(v, dict) else v for v in value)
        return {name for name in names if isinstance(name, str)}
    return set()


def _node_name(run: Observation, namespace: str) -> str:
    last = namespace.rsplit("|", 1)[-1]
    return last.split(":", 1)[0] or str(run.metadata.get(NODE) or run.name)


def _is_plumbing(tree: Tree, node: str, run: Observation, prebuilt_graphs: set[str]) -> bool:
    """A graph's start and end, a `tools` node (a `ToolNode`: it runs the calls a model made), and every
    node of a prebuilt agent's graph. A prebuilt agent's other node names are plumbing only there: in
    a hand-built graph, a node named `agent` (LangGraph's Plan-and-Execute tutorial) is an agent when
    it runs a model, as any other node."""
    return node in _GRAPH_ENDS or node == "tools" or _graph_id(tree, run) in prebuilt_graphs


def _graph_id(tree: Tree, run: Observation) -> str | None:
    """The run of the graph a node run is a node of: the run right above it (the sub-graph node's
    own run, or the run of a graph invoked inside a node function or a tool)."""
    graph = tree.parent(run)
    return None if graph is None else graph.id


def _task_namespaces(tree: Tree, node_runs: dict[str, list[Observation]]) -> set[str]:
    """Functional API `@task` runs that are steps of their entrypoint (a model or tool call): runs
    right inside a node's own run, with no sub-graph run between (a sub-graph's nodes sit inside the
    sub-graph's run, which is inside the node's run). A task that runs a sub-graph (an agent) is an
    agent, as a node would be."""
    tasks = set()
    for namespace, runs in node_runs.items():
        enclosing = node_runs.get(_parent_ns(namespace), [])
        parent = tree.parent(runs[0])
        if parent is None or not any(parent.id == run.id for run in enclosing):
            continue
        if not any(other.startswith(namespace + "|") for other in node_runs):
            tasks.add(namespace)
    return tasks


def _runs_subgraph(namespace: str, node_runs: dict[str, list[Observation]], tasks: set[str]) -> bool:
    """Whether a sub-graph ran inside the node (its tasks are the node's own steps)."""
    prefix = namespace + "|"
    return any(other.startswith(prefix) and other not in tasks for other in node_runs)


def _calls_model(tree: Tree, run: Observation, nodes: set[str]) -> bool:
    """Whether the node's own work called a model: not a routing function of its conditional edges (a
    run right inside it, in its namespace, answering with a node), whose model call (Agentic RAG's
    document grader after a `ToolNode`) is the edge's, not the node's."""
    routers = [s for s in _steps(tree, run) if s.type != GENERATION and _destinations(s.output) & nodes]
    routed = {d.id for router in routers for d in (router, *tree.descendants(router))}
    return any(d.type == GENERATION and d.id not in routed for d in tree.descendants(run))


def _parent_ns(namespace: str) -> str:
    """The namespace of the graph a node belongs to ("" for the top-level graph)."""
    return namespace.rsplit("|", 1)[0] if "|" in namespace else ""


def _prebuilt_graph_runs(
    tree: Tree, node_runs: dict[str, list[Observation]], entrypoints: set[str]
) -> set[str]:
    """Graphs (by the id of their run, one per invocation) that hold a prebuilt agent: a prebuilt
    agent's nodes ran in them (a `create_agent` stopped by its own middleware's `before_agent` hook ran
    that hook alone) and no node of a name of its own did, so all their nodes are plumbing. A
    hand-built graph may have a `tools` node too (a `ToolNode`, where `tools_condition` routes by
    default) beside its agent nodes. (A Functional API entrypoint may be called `agent` too: it is
    not a prebuilt agent's node.)"""
    names: dict[str | None, set[str]] = {}
    for ns, runs in node_runs.items():
        if ns not in entrypoints:
            names.setdefault(_graph_id(tree, runs[0]), set()).add(_node_name(runs[0], ns))
    return {
        graph
        for graph, nodes in names.items()
        if graph is not None
        and any(_is_agent_node(node) for node in nodes)
        and all(_is_prebuilt_node(node) for node in nodes)
    }


def _is_prebuilt_node(node: str) -> bool:
    """A node a prebuilt agent's graph has: its own, a graph end, or a `create_agent` middleware's hook
    (`<middleware>.before_model` and the like)."""
    return _is_agent_node(node) or node in _GRAPH_ENDS


def _is_agent_node(node: str) -> bool:
    """A node that shows a prebuilt agent ran in its graph: one of its own, or one of its middleware's
    hooks (a `create_agent` stopped by its `before_agent` hook ran that alone)."""
    return node in PREBUILT_NODES or _is_hook(node)


def _is_hook(node: str) -> bool:
    """A `create_agent` middleware's hook: `<middleware>.before_agent` and the like."""
    middleware, dot, hook = node.rpartition(".")
    return bool(middleware and dot) and hook in _MIDDLEWARE_HOOKS


def _named_prebuilt_graphs(
    tree: Tree, node_runs: dict[str, list[Observation]], roles: dict[str, Role | None], prebuilt: set[str]
) -> list[Observation]:
    """Named prebuilt agent graphs whose enclosing node is not an agent already: the run above a
    prebuilt node, when it has a name of its own (a sub-agent invoked from a tool, or a named agent
    invoked at the top). Inside an agent node (a supervisor's worker) the node is the agent."""
    graphs: dict[str, Observation] = {}
    for namespace, runs in node_runs.items():
        graph = tree.parent(runs[0])
        node = _node_name(runs[0], namespace)
        if not _is_agent_node(node) or _graph_id(tree, runs[0]) not in prebuilt:
            continue
        if graph is None or graph.id in graphs or graph.name in (_UNNAMED_GRAPH, *PREBUILT_NODES):
            continue
        enclosing = node_runs.get(_parent_ns(namespace), [])
        if any(roles.get(run.id) is not None for run in enclosing):
            continue
        graphs[graph.id] = graph
    return list(graphs.values())
