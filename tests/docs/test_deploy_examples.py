"""docs/deploy/'s systemd unit and config file are what `groundrules serve` accepts, and they mean
what docs/operators.md says: the unit's command line and environment over the file. (The nginx
example runs as written in tests/http/test_balancer.py.)"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

from groundrules.cli.config import expand
from groundrules.cli.main import build_parser

DEPLOY = Path(__file__).resolve().parents[2] / "docs" / "deploy"


def _unit(port: str) -> tuple[list[str], dict[str, str]]:
    """The unit's `groundrules …` arguments and environment, for instance `port`."""
    text = (DEPLOY / "groundrules@.service").read_text(encoding="utf-8").replace("%i", port)
    command = shlex.split(re.search(r"^ExecStart=(.+)$", text, re.M).group(1))
    environ = dict(line.split("=", 1) for line in re.findall(r"^Environment=(.+)$", text, re.M))
    return command[1:], environ


def test_the_unit_and_its_config_file_start_a_stateless_http_server():
    argv, environ = _unit("8702")
    assert argv[:3] == ["serve", "--config", "/etc/groundrules/groundrules.yaml"]
    argv[2] = str(DEPLOY / "groundrules.yaml")              # the example stands for /etc/groundrules/
    parser = build_parser("serve")
    args = parser.parse_args(expand(argv, parser, environ=environ))
    assert args.http == "127.0.0.1:8702"                    # the instance's port, from the unit's environment
    assert args.db.startswith("postgresql://") and args.setting_stateless is True
    assert args.setting_log_format == "json" and args.allowed_host == ["mcp.example.internal", "mcp.example.internal:443"]


def test_the_command_line_wins_over_the_environment_and_the_environment_over_the_file():
    parser = build_parser("serve")
    config = str(DEPLOY / "groundrules.yaml")
    from_file = parser.parse_args(expand(["serve", "--config", config], parser, environ={}))
    from_env = parser.parse_args(expand(["serve", "--config", config], parser, environ={"GROUNDRULES_GRACE": "7"}))
    given = parser.parse_args(expand(["serve", "--config", config, "--grace", "3"], parser,
                                     environ={"GROUNDRULES_GRACE": "7"}))
    assert (from_file.setting_grace_s, from_env.setting_grace_s, given.setting_grace_s) == (10.0, 7.0, 3.0)
