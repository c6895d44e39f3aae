"""`groundrules serve` settings from a config file and the environment, as well as from options.

Every option of `serve` (and the global `--rules`) may also be given as a key of the YAML file
named by `--config FILE` (the option's name with underscores: `sessions_per_principal: 64`) or as
an environment variable (`GROUNDRULES_SESSIONS_PER_PRINCIPAL=64`). One precedence: the command
line over the environment over the file over the defaults; for a repeatable option the first of
them that gives it gives all its values. A file's unknown key or wrong value type fails the start
with one line naming file:line:col.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Mapping

from ..core.errors import GroundrulesError, closest, echo
from ..core.yamlparse import parse
from ..core.yamlsrc import YamlProblem
from .io import reason, usage_error

ENV_PREFIX = "GROUNDRULES_"
CONFIG = "--config"
GLOBAL = ("--rules",)           # options of the top-level parser a file may set too
# options whose GROUNDRULES_<NAME> already means something else: GROUNDRULES_DECISION_KEY is the
# decision key's material itself (decision_log.crypto), never a file for --decision-key (which would
# then echo the material in its "cannot read" error)
NOT_FROM_ENVIRONMENT = ("decision_key",)


def expand(argv: list[str], parser: argparse.ArgumentParser, environ: Mapping[str, str] | None = None) -> list[str]:
    """`argv` (`serve …`) with what the config file and the environment add, in precedence order."""
    environ = os.environ if environ is None else environ
    serve = _serve_parser(parser)
    options = {_key(o): (o, a) for a in serve._actions for o in a.option_strings
               if o.startswith("--") and o not in ("--help", CONFIG)}
    options.update({_key(o): (o, a) for a in parser._actions for o in a.option_strings if o in GLOBAL})
    at = argv.index("serve")
    before, command = argv[:at], argv[at + 1:]
    given_file = _value_of(command, CONFIG) or environ.get(ENV_PREFIX + "CONFIG")
    layers = [_from_file(given_file, options) if given_file else {},
              {key: value for key, value in ((k, environ.get(ENV_PREFIX + k.upper())) for k in options)
               if value is not None and key not in NOT_FROM_ENVIRONMENT},
              _given(before + command, options)]
    merged: dict = {}
    for layer in layers:                       # later layers win, whole per option
        merged.update(layer)
    head: list[str] = []
    tail: list[str] = []
    for key, value in merged.items():
        option, action = options[key]
        if key in layers[2]:
            continue                           # the command line's own words stay where they are
        words = _words(option, action, value)
        (head if option in GLOBAL else tail).extend(words)
    return [*head, *before, "serve", *_without(command, CONFIG), *tail]


def _serve_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["serve"]


def _key(option: str) -> str:
    return option.lstrip("-").replace("-", "_")


def _words(option: str, action: argparse.Action, value) -> list[str]:
    if action.nargs == 0:                      # a flag: true sets it, false leaves it off
        return [option] if _flag(value, option) else []
    values = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in values:
        out += [option, str(item)]
    return out if isinstance(action, argparse._AppendAction) or not out else out[-2:]


def _flag(value, option: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise usage_error("usage.config_flag", option=option, value=echo(str(value)))


def _given(argv: list[str], options: dict) -> dict:
    """The options the command line itself gives (their values do not matter here)."""
    named = {word.split("=", 1)[0] for word in argv if word.startswith("--")}
    return {key: True for key, (option, _) in options.items() if option in named}


def _value_of(argv: list[str], option: str) -> str | None:
    for i, word in enumerate(argv):
        if word == option and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith(option + "="):
            return word.split("=", 1)[1]
    return None


def _without(argv: list[str], option: str) -> list[str]:
    out, skip = [], False
    for word in argv:
        if skip:
            skip = False
        elif word == option:
            skip = True
        elif not word.startswith(option + "="):
            out.append(word)
    return out


def _from_file(path: str, options: dict) -> dict:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise usage_error("usage.config_missing", path=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise usage_error("usage.cannot_read", input=path, reason=reason(exc)) from None
    try:
        source = parse(text, path)
    except YamlProblem as exc:
        raise _bad(path, exc.line, exc.column, "usage.config_yaml", problem=exc.message) from None
    data = source.data if source.data is not None else {}
    if not isinstance(data, dict):
        raise _bad(path, 1, 1, "usage.config_not_mapping")
    out = {}
    for key, value in data.items():
        line, col = source.where((key,))
        if not isinstance(key, str) or key not in options:
            close = closest(str(key), list(options))
            raise _bad(path, line, col, "usage.config_unknown_close" if close else "usage.config_unknown",
                       key=echo(str(key)), closest=close, settings=sorted(options))
        if isinstance(value, (dict,)) or (isinstance(value, list) and not isinstance(options[key][1], argparse._AppendAction)):
            raise _bad(path, line, col, "usage.config_one_value", key=key)
        if value is None:
            continue
        out[key] = value
    return out


def _bad(path: str, line: int, col: int, name: str, **params) -> GroundrulesError:
    return usage_error(name, at=f"{path}:{line}:{col}", **params)
