"""The `groundrules` command: one module per part, each registering its subcommands."""
