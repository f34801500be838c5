"""Training code for learned schedulers (stable-baselines3 / sb3-contrib); see
docs/notes/agents.md."""
