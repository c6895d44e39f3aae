"""Independent oracles for the native condition engine.

`durable` compiles decision tables to durable-rules rulesets and evaluates them through a guarded
wrapper; tests run it beside the native evaluator and require the same fired rows. durable-rules
is a test extra: nothing here imports it until a backend is built, and the library never needs it.
"""
