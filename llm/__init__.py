"""LLM providers behind one small interface (`ChatModel`): Anthropic, OpenAI-compatible, offline."""
