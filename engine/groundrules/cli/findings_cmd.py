"""`groundrules serve` (the MCP server over stdio) and `groundrules findings …` (the ledger, for people).

Both are thin: `serve` hands every call to the registry as the operator on the command line;
the `findings` commands are tool calls with their flags as arguments.
"""
from __future__ import annotations

import argparse

from ..api import TOOLS
from ..core.errors import echo
from .io import emit_envelope, usage_error
from .session import add_caller_args, call_once, caller_from, close, rulebook_from, service_from


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("serve", help="serve every groundrules tool over MCP (stdio, or HTTP for many agents)",
                       description="Run the MCP server on stdin/stdout as the operator named here, or with --http "
                                   "one server at /mcp for many agents, each calling as its bearer token's principal "
                                   "(--tokens). Tools, as each role may call them: " + ", ".join(TOOLS) + ".")
    add_caller_args(s, ledger=True)
    s.add_argument("--tools", metavar="NAME[,NAME…]", type=lambda text: [n for n in text.split(",") if n],
                   help="serve only these tools: findings, evidence, stateless (the parts with no ledger), a role "
                        "(what it may call) or tool names, comma-separated (default: every tool)")
    s.add_argument("--toolsets", metavar="NAME[,NAME…]", type=lambda text: [n for n in text.split(",") if n],
                   help="the toolsets (rules/toolsets.yaml) an MCP session lists from its start, comma-separated, "
                        "or all (default: its role's defaults); list_toolsets and enable_toolset are always listed "
                        "and add the rest. Within --tools, which must then serve enable_toolset")
    s.add_argument("--lang", metavar="LANG", default=argparse.SUPPRESS,
                   help="the language of answers whose call names none (a tools/call's _meta \"groundrules/lang\", "
                        "an HTTP request's Accept-Language): one of rules/messages.yaml's languages (default: its "
                        "first, zh); the same as the global --lang")
    s.add_argument("--config", metavar="FILE", help="a YAML file of settings: any option of this command (and "
                   "--rules) by its name with underscores, e.g. 'grace: 10'; each may also be set as an "
                   "environment variable (GROUNDRULES_GRACE=10). The command line wins over the environment, "
                   "the environment over the file")
    http = s.add_argument_group("shared server (MCP Streamable HTTP)")
    http.add_argument("--http", metavar="HOST:PORT", help="serve over HTTP at http://HOST:PORT/mcp instead of stdio; "
                      "--project, --operator and --role are then ignored: each token names its caller")
    http.add_argument("--tokens", metavar="FILE", help="the tokens file (YAML: sha256, principal, role, projects per "
                      "token); re-read on SIGHUP")
    http.add_argument("--allowed-host", action="append", default=[], metavar="HOST[:PORT]",
                      help="a Host header clients may send (repeatable; 'name:*' for any port); default: the "
                           "loopback names, required when HOST is not a loopback address")
    from ..transports.settings import add_options
    add_options(http)
    oauth = s.add_argument_group("OAuth 2.1 resource server (--http --auth oauth; docs/oauth.md)")
    oauth.add_argument("--auth", choices=("tokens", "oauth"), default="tokens",
                       help="who may call: the bearer tokens of --tokens (default), or access tokens an OAuth "
                            "authorization server issues (JWT), mapped to callers by rules/oauth_claims.yaml")
    oauth.add_argument("--issuer", action="append", default=[], metavar="URL",
                       help="an authorization server whose tokens are accepted, exactly as its tokens' iss "
                            "(repeatable); named in the protected resource metadata")
    oauth.add_argument("--resource", metavar="URL", help="this server's URL as clients reach it: the audience "
                       "(aud) every token must name (default: http://HOST:PORT/mcp)")
    oauth.add_argument("--jwks", metavar="URL|FILE", help="the issuer's signing keys (a JWKS URL or file); "
                       "default: the jwks_uri of the issuer's metadata")
    s.set_defaults(func=run_serve)

    f = sub.add_parser("findings", help="read the finding ledger and decide rule proposals",
                       description="The finding ledger for people: list and show findings, approve or reject "
                                   "the rules agents proposed. The caller is a reviewer unless --role says otherwise.")
    fsub = f.add_subparsers(dest="findings_command", metavar="ACTION", required=True)
    ls = fsub.add_parser("list", help="list current findings (query_findings)")
    add_caller_args(ls, role="reviewer", ledger=True)
    ls.add_argument("--keyword", help="keyword, Chinese or not (all whitespace-separated terms must match)")
    ls.add_argument("--tag", action="append", dest="tags", metavar="TAG", help="required tag (repeatable)")
    ls.add_argument("--state", action="append", dest="states", metavar="STATE",
                    help="epistemic state to keep (repeatable)")
    ls.add_argument("--history", action="store_true", help="include superseded, withdrawn and archived findings")
    ls.add_argument("--limit", type=int, help="at most this many (default and cap: see the vocabulary table)")
    ls.set_defaults(func=run_list)
    show = fsub.add_parser("show", help="show one finding with full excerpts (get_finding)")
    add_caller_args(show, role="reviewer", ledger=True)
    show.add_argument("finding_id", metavar="FINDING_ID")
    show.set_defaults(func=run_show)
    for tool, command, help_text in (
            ("approve_rule", "approve-rule", "approve a proposal: append its rule to the target document under --root"),
            ("reject_rule", "reject-rule", "reject a proposal (recorded; no file changes)")):
        p = fsub.add_parser(command, help=help_text, description=help_text + "; the decider recorded is --operator.")
        add_caller_args(p, role="reviewer", ledger=True)
        p.add_argument("proposal_id", metavar="PROPOSAL_ID")
        p.add_argument("--note", default="", help="why (recorded)")
        p.set_defaults(func=run_decide, tool=tool)


def run_serve(args: argparse.Namespace) -> int:
    oauth_options = args.issuer or args.resource or args.jwks
    if args.http is None and (args.tokens or args.allowed_host or args.auth != "tokens" or oauth_options):
        raise usage_error("usage.serve_http_only")
    host, port = _host_port(args.http) if args.http is not None else (None, None)
    if args.http is not None and args.auth == "tokens" and (not args.tokens or oauth_options):
        raise usage_error("usage.serve_http_needs_tokens")
    if args.auth == "oauth" and args.tokens:
        raise usage_error("usage.serve_oauth_no_tokens")
    from ..transports.settings import from_options
    settings = from_options(args)
    book = rulebook_from(args)
    caller = caller_from(args, book) if args.http is None else None     # over HTTP each token names its caller
    service = service_from(args, book=book)
    try:
        from ..transports.mcp_tools import select_tools, select_toolsets
        tools = None if args.tools is None else select_tools(service, args.tools)
        toolsets = None if args.toolsets is None else select_toolsets(service, args.toolsets)
        if toolsets is not None and tools is not None and "enable_toolset" not in tools:
            raise usage_error("usage.toolsets_need_enable")
        if args.http is None:
            assert caller is not None, "named above for a server without --http"
            from ..transports.mcp_tools import serve_stdio
            serve_stdio(service, caller, tools=tools, toolsets=toolsets, grace_s=settings.grace_s, settings=settings)
        else:
            from ..transports.mcp_http import serve_http
            assert host is not None and port is not None, "parsed above from --http"
            oauth = None
            if args.auth == "oauth":
                from ..transports.oauth import OAuthVerifier
                oauth = OAuthVerifier.configured(service.book, issuers=args.issuer, jwks=args.jwks,
                                                 resource=args.resource or _url(host, port))
            serve_http(service, args.tokens, host=host, port=port, allowed_hosts=args.allowed_host,
                       settings=settings, rules_root=args.rules, tools=tools, toolsets=toolsets, oauth=oauth)
    finally:
        close(service)
    return 0


def _host_port(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise usage_error("usage.serve_http_address", value=echo(text))
    return host, int(port)


def _url(host: str, port: int) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/mcp"


def run_list(args: argparse.Namespace) -> int:
    query = {"include_history": args.history}
    for key, value in (("keyword", args.keyword), ("tags", args.tags), ("epistemic_state", args.states),
                       ("limit", args.limit)):
        if value is not None:
            query[key] = value
    return emit_envelope(call_once(args, "query_findings", query, read_only=True))


def run_show(args: argparse.Namespace) -> int:
    arguments = {"finding_id": args.finding_id, "full_excerpts": True}
    return emit_envelope(call_once(args, "get_finding", arguments, read_only=True))


def run_decide(args: argparse.Namespace) -> int:
    arguments = {"proposal_id": args.proposal_id, "note": args.note}
    return emit_envelope(call_once(args, args.tool, arguments))
