"""The `concierge` demo system: `demo_agents.concierge:run` is the target entry point.

A multi-agent hotel and restaurant booking assistant called once per user turn of a dialogue. See
README.md beside this file for the agents, the database, the state it reports and its known flaws.
"""

from demo_agents.concierge.agents import run
from demo_agents.concierge.model import ScriptedConciergeModel

__all__ = ["ScriptedConciergeModel", "run"]
