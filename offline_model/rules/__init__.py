"""The offline model's rule-based behaviour (everything that is not the Messages API protocol).

Why apart from the protocol: the HTTP server, request validation, streaming, caching and faults
(``offline_model/``) emulate the API; these modules decide what the emulated model says:
``memory`` (facts and memory operations, built on ``segment`` -> ``clause`` -> ``predicates``),
``reply`` (chat answers from the injected notes), ``agent`` (the memory-tool policy),
``forget`` (the forget tool) and ``formats`` (the callers' extraction request formats).
"""
