"""What runs a session: the agent loop, tools, providers, settings, workspaces."""
