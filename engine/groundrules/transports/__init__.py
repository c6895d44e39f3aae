"""Transports: thin adapters that carry tool calls to `groundrules.api.Service.call` and back."""
