"""The `research` demo system: `demo_agents.research:run` is the target entry point.

See README.md beside this file for the agents, the tools, the prompts and the scripted model's rules.
"""

from demo_agents.research.agents import run
from demo_agents.research.model import ScriptedChatModel
from demo_agents.research.openai_model import OpenAIChatModel

__all__ = ["OpenAIChatModel", "ScriptedChatModel", "run"]
