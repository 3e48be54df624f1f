"""LangChain / LangGraph through Langfuse's `CallbackHandler`, recognised by the `langgraph_*` metadata
LangGraph puts on every run inside a graph.

Langfuse types these runs by a name heuristic (AGENT when "agent" is in the run name, else CHAIN), so
the types are ignored here; the graph's structure decides. `langgraph_checkpoint_ns` names each node
invocation ("supervisor:<id>|agent:<id>" is the `agent` node of the `supervisor` sub-graph); the
outermost run of a namespace is the node's run.

- Agents: node runs that run a sub-graph (`create_react_agent(name=...)`, `create_agent(name=...)`
  added as nodes, or invoked inside a hand-built node) or that call a model (hand-built `StateGraph`
  nodes), named after the node; and named prebuilt agent graphs invoked elsewhere (a sub-agent called
  from a tool), named by their graph name.
- Plumbing, never agents: the prebuilt agent's inner nodes (`agent`, `model`, `tools`, hooks), runs
  inside a node (`call_agent` wrappers, `call_model`, routers such as `should_continue`, prompts,
  parsers), `__start__`/`__end__`, and the unnamed `LangGraph` root.
- Tools: the tool runs (TOOL observations), named by the tool.
- Entry agent: the first top-level agent node when control comes back to it after another agent (a
  supervisor); a swarm's agents hand over for good, so none of them is an entry agent.
"""

from __future__ import annotations

from evaluator.trace.conventions._tree import Tree
from evaluator.trace.conventions.base import Role, Roles
from evaluator.trace.model import GENERATION, TOOL, Observation

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
        prebuilt_graphs = _prebuilt_graph_namespaces(node_runs)
        for namespace, run in node_runs.items():
            node = _node_name(run, namespace)
            if node in PREBUILT_NODES or node in _GRAPH_ENDS or _parent_ns(namespace) in prebuilt_graphs:
                continue
            if _runs_subgraph(namespace, node_runs) or _calls_model(tree, run):
                roles[run.id] = Role(kind="agent", name=node)
        for graph in _named_prebuilt_graphs(tree, node_runs, roles):
            roles[graph.id] = Role(kind="agent", name=graph.name)
        return roles

    def entry_agents(self, tree: Tree, agents: list[tuple[str, str]]) -> set[str]:
        top = [(i, n) for i, n in agents if "|" not in str(tree.by_id[i].metadata.get(NAMESPACE, "|"))]
        if len(top) < 3:
            return set()
        first_id, first_name = top[0]
        others_between = any(name != first_name for _, name in top[1:-1])
        comes_back = any(name == first_name for _, name in top[2:])
        return {first_id} if others_between and comes_back else set()


def _node_runs(tree: Tree) -> dict[str, Observation]:
    """The outermost run of each checkpoint namespace, by namespace (start order)."""
    runs: dict[str, Observation] = {}
    for obs in tree.ordered:
        namespace = obs.metadata.get(NAMESPACE)
        if isinstance(namespace, str) and namespace and NODE in obs.metadata and namespace not in runs:
            runs[namespace] = obs
    return runs


def _node_name(run: Observation, namespace: str) -> str:
    last = namespace.rsplit("|", 1)[-1]
    return last.split(":", 1)[0] or str(run.metadata.get(NODE) or run.name)


def _runs_subgraph(namespace: str, node_runs: dict[str, Observation]) -> bool:
    prefix = namespace + "|"
    return any(other.startswith(prefix) for other in node_runs)


def _calls_model(tree: Tree, run: Observation) -> bool:
    return any(d.type == GENERATION for d in tree.descendants(run))


def _parent_ns(namespace: str) -> str:
    """The namespace of the graph a node belongs to ("" for the top-level graph)."""
    return namespace.rsplit("|", 1)[0] if "|" in namespace else ""


def _prebuilt_graph_namespaces(node_runs: dict[str, Observation]) -> set[str]:
    """Graphs (by namespace) that hold a prebuilt agent's nodes: all their nodes are plumbing."""
    return {_parent_ns(ns) for ns, run in node_runs.items() if _node_name(run, ns) in PREBUILT_NODES}


def _named_prebuilt_graphs(
    tree: Tree, node_runs: dict[str, Observation], roles: dict[str, Role | None]
) -> list[Observation]:
    """Named prebuilt agent graphs whose enclosing node is not an agent already: the run above a
    prebuilt node, when it has a name of its own (a sub-agent invoked from a tool, or a named agent
    invoked at the top). Inside an agent node (a supervisor's worker) the node is the agent."""
    graphs: dict[str, Observation] = {}
    for namespace, run in node_runs.items():
        if _node_name(run, namespace) not in PREBUILT_NODES:
            continue
        graph = tree.parent(run)
        if graph is None or graph.id in graphs or graph.name in (_UNNAMED_GRAPH, *PREBUILT_NODES):
            continue
        enclosing = node_runs.get(_parent_ns(namespace))
        if enclosing is not None and roles.get(enclosing.id) is not None:
            continue
        graphs[graph.id] = graph
    return list(graphs.values())
