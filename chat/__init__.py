"""The chat core every backend shares: conversations, history, injection, the turn loop."""
