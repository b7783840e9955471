"""Model providers: the offline built-in one (default), and Claude, OpenAI (or any
OpenAI-compatible endpoint) and Gemini through their vendors' SDKs."""
