"""The issue catalogue (`rules/verify_issues.yaml`): observation or reported code -> issue -> error.

Every code, category, stage, error mapping, repairability and message lives in the table. The
order of `issues` is the order issues are listed in; the order of `errors` is precedence: when a
candidate has issues of several errors, the first error in the table is the one returned.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.errors import capped_details, did_you_mean, echo
from ..core.messages import Messages, compile_localized
from .observations import OBSERVATIONS, MUST_FAIL, Observation, Reported

if TYPE_CHECKING:
    from ..core.tables import CompileContext
    from ..results import Issue

KIND = "verify_issue_catalogue"


@dataclass(frozen=True)
class IssueSpec:
    code: str
    order: int
    category: str
    stage: str
    error: str | None          # None: a warning, never an error
    repairable: bool
    detects: str | None        # the observation key, or None for a code the model reports


@dataclass(frozen=True)
class ErrorSpec:
    code: str
    stage: str | None          # None: the stage of the error's first issue
    partial_result: bool


@dataclass(frozen=True)
class Catalogue:
    kind: str
    id: str
    file: str
    categories: tuple
    errors: tuple              # ErrorSpec, in precedence order
    issues: dict               # code -> IssueSpec
    by_observation: dict           # observation key -> IssueSpec
    messages: Messages             # issue or error code -> its message, in the bound language

    def error_message(self, code: str) -> str:
        return self.messages[code].render({})

    def spec(self, code: str) -> IssueSpec | None:
        return self.issues.get(code)

    def reportable(self, code: Any) -> IssueSpec | None:
        """The spec of a code a candidate may report itself, else None."""
        spec = self.issues.get(code) if isinstance(code, str) else None
        return spec if spec is not None and spec.detects is None else None

    def issue(self, item: Observation | Reported) -> tuple[IssueSpec, Issue]:
        """The catalogue entry and the public issue object {code, category, path, message}. The
        candidate wrote the path, the parameters and a reported message: each is cut to an echo
        (errors.capped_details) before it is repeated."""
        if isinstance(item, Reported):
            spec = self.issues[item.code]
            message = echo(item.message)
        else:
            spec = self.by_observation[item.key]
            message = self.messages[spec.code].render({}, capped_details(item.params)) if spec.code in self.messages else ""
        return spec, {"code": spec.code, "category": spec.category, "path": echo(item.path),
                      "message": message}


def compile_catalogue(data: dict, ctx: CompileContext) -> Catalogue | None:
    categories = tuple(data["categories"])
    errors = tuple(ErrorSpec(code, e.get("stage"), e.get("partial_result", False))
                   for code, e in data["errors"].items())
    messages: dict = {}
    for code, e in data["errors"].items():
        localized = compile_localized(e["message"], ("errors", code, "message"), ctx.faults)
        if localized is not None:
            messages[code] = localized
    error_codes = [e.code for e in errors]
    issues: dict[str, IssueSpec] = {}
    by_observation: dict[str, IssueSpec] = {}
    for order, (code, raw) in enumerate(data["issues"].items()):
        where = ("issues", code)
        spec = _issue(code, order, raw, where, categories, error_codes, ctx, messages)
        if spec is None:
            continue
        if spec.detects is not None:
            if spec.detects in by_observation:
                ctx.fault("duplicate-observation", f"observation '{spec.detects}' is already mapped to "
                          f"'{by_observation[spec.detects].code}'", where + ("detects",),
                          "map every observation to exactly one code")
                continue
            by_observation[spec.detects] = spec
        issues[code] = spec
    for key in OBSERVATIONS:
        if key not in by_observation:
            ctx.fault("unmapped-observation", f"observation '{key}' has no issue code", ("issues",),
                      f"add an entry with 'detects: {key}'")
    for key in MUST_FAIL:
        if key in by_observation and by_observation[key].error is None:
            ctx.fault("must-fail", f"observation '{key}' leaves nothing to verify, so its issue needs an "
                      "error", ("issues", by_observation[key].code, "error"), "map it to an error code")
    for err in errors:
        mine = [s for s in issues.values() if s.error == err.code]
        if len({s.repairable for s in mine}) > 1:
            ctx.fault("mixed-repairable", f"issues of error '{err.code}' disagree on 'repairable'",
                      ("errors", err.code), "an error is repairable only if all of its issues are")
        if not mine:
            ctx.fault("unused-error", f"no issue maps to error '{err.code}'", ("errors", err.code),
                      severity="warning")
    if any(f.severity == "error" for f in ctx.faults):
        return None
    return Catalogue(KIND, data["id"], ctx.source.file, categories, errors, issues, by_observation,
                     Messages(messages))


def _issue(code, order, raw, where, categories, error_codes, ctx: CompileContext, messages: dict
           ) -> IssueSpec | None:
    before = len(ctx.faults)
    detects = raw.get("detects")
    if (detects is None) == (raw.get("reported_by") is None):
        ctx.fault("bad-issue", f"issue '{code}' needs exactly one of 'detects' and 'reported_by'",
                  where, "use detects: <finding> for a verifier check, reported_by: model otherwise")
    elif detects is not None and detects not in OBSERVATIONS:
        ctx.fault("unknown-finding", f"'{detects}' is not a finding the verifier reports",
                  where + ("detects",), did_you_mean(detects, OBSERVATIONS))
    if raw["category"] not in categories:
        ctx.fault("unknown-category", f"category '{raw['category']}' is not declared under "
                  "'categories'", where + ("category",), did_you_mean(raw["category"], categories))
    error = raw["error"]
    if error is not None and error not in error_codes:
        ctx.fault("unknown-error", f"error '{error}' is not declared under 'errors'",
                  where + ("error",), did_you_mean(error, error_codes))
    if "message" in raw:
        params = OBSERVATIONS.get(detects, ())
        localized = compile_localized(raw["message"], where + ("message",), ctx.faults,
                                      names=lambda n: n in params, name_choices=params)
        if localized is not None:
            messages[code] = localized
    elif detects is not None:
        ctx.fault("missing-key", f"issue '{code}' detected by the verifier needs a 'message'",
                  where, "write a one-sentence message template")
    if len(ctx.faults) != before:
        return None
    return IssueSpec(code, order, raw["category"], raw["stage"], error, raw["repairable"], detects)
