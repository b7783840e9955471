"""Model providers: the offline built-in one (default) and OpenAI-compatible endpoints."""
