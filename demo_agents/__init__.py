"""Demo systems under test, bundled with the evaluator.

The evaluator never imports this package: configuration names a system as a target
(`demo_agents.research:run`) and the evaluator loads it like any user's system.
"""
