"""The finding tools (docs/spec/findings.md, the tools), each `(call, arguments) -> (data, warning facts)`.

Arguments arrive already checked against the tool's input schema; everything else (vocabulary,
states, versions, projects) is checked here, inside the call's one transaction.
"""
from __future__ import annotations

import copy
from typing import Sequence

from ..core import codes
from . import (applicability, arguments, contexts, events, evidence_items, evidence_links, finding_rows,
               independence, moves, new_finding, proposals, statement_edits, views)
from .call import Call
from .rule_files import safe_relative
from .write_warnings import needs

APPLICABILITY_TABLE = "applicability"
CHANGE_TABLE = "findings_material_change"

# --------------------------------------------------------------------------------- helpers


def _finding_facts(row: dict) -> dict:
    return {k: row[k] for k in ("claim_kind", "epistemic_state", "lifecycle_state", "scope", "tags") if k in row}


def _write_facts(call: Call, finding: dict, links: list[dict], *, to_state: str | None = None,
                 manual_exception: dict | None = None) -> dict:
    facts = {"tool": call.tool, "finding": finding,
             "evidence": [dict({k: l[k] for k in independence.FACTS if k in l}, source_kind=l["source_kind"],
                               reuse=l.get("reuse", "reused")) for l in links]}
    if to_state is not None:
        facts["to_state"] = to_state
    if manual_exception is not None:
        facts["manual_exception"] = manual_exception
    return facts


LINK_KEYS = ("evidence_id", "relation", "method", "source_kind", "finding_version", *independence.FACTS)


def _basis(links: list[dict]) -> list[dict]:
    """The facts of links a call wrote (what a guard and the answer read of them)."""
    return [{k: l[k] for k in LINK_KEYS if k in l} for l in links]


def _supports(call: Call, links: list[dict]) -> list[dict]:
    """Per link: whether it is independent support, the row of the table that said so, and (for links
    timed against the finding's demotions) whether it came after the last one."""
    return [independence.shown(link) for link in call.judge(links)]


def _transition_facts(row: dict, basis: list[dict], links: list[dict], a: dict, new_links: Sequence[dict] = (),
                      demoted: int = 0) -> dict:
    """The guards' facts: links marked by whether they came after the last demotion (version `demoted`)."""
    facts = {"finding": {"claim_kind": row["claim_kind"], "epistemic_state": row["epistemic_state"],
                         "lifecycle_state": row["lifecycle_state"]},
             "basis": moves.timed(basis, demoted), "links": moves.timed(links, demoted),
             "new_links": moves.timed(list(new_links), demoted), "reason": a.get("reason", "")}
    if a.get("manual_exception"):
        facts["manual_exception"] = a["manual_exception"]
    return facts


def _evidence(call: Call, seq: int, limit: int | None, relation: str | None = None, *,
              rows: list[dict] | None = None) -> list[dict]:
    """Evidence links as answers show them, each with its `support`: the independence row's word,
    and `after_demotion` (support needs links made after the finding's last demotion)."""
    rows = call.tx.linked_evidence(seq, relation) if rows is None else rows
    demoted = moves.last_demotion(call, seq) if rows else 0
    return [views.evidence(r, limit, dict(call.judge.support_of(r),
                                          after_demotion=r["finding_version"] > demoted)) for r in rows]


def add_relation(call: Call, from_seq: int, relation: str, to_seq: int, note: str = "") -> bool:
    """Insert from -relation-> to; an acyclic relation refuses a link that would close a cycle."""
    if call.vocab.finding_relations[relation]["acyclic"]:
        if from_seq == to_seq or call.tx.reaches(to_seq, relation, from_seq):
            raise call.refuse(codes.RELATION_CYCLE, "relation_cycle", relation=relation)
    elif from_seq == to_seq:
        raise call.refuse(codes.INVALID_ARGUMENT, "self_link")
    return call.tx.add_relation(from_seq, relation, to_seq, note, call.now)


def _state_list(call: Call, a: dict, key: str, machine: str) -> list[str] | None:
    value = a.get(key)
    if value is None:
        return None
    states = call.states.machine(machine).states
    values = [value] if isinstance(value, str) else list(value)
    return [arguments.choose(call, key, v, states) for v in values]


def _presentable(call: Call, row: dict) -> bool:
    """May this record be shown as current knowledge at all? Both its states must allow it
    (finding_states.yaml: superseded, withdrawn, archived and refuted say `current: false`)."""
    return (call.states.machine("lifecycle").is_current(row["lifecycle_state"])
            and call.states.machine("epistemic").is_current(row["epistemic_state"]))


def _conflict(call: Call, seq: int) -> dict:
    """Both sides' evidence, short excerpts: what a move into a conflict state answers with."""
    limit = call.vocab.limits["excerpt_chars"]
    return {"supporting": _evidence(call, seq, limit, call.names["support_relation"]),
            "contradicting": _evidence(call, seq, limit, call.names["refute_relation"])}


def _limit(call: Call, a: dict, key: str, default: int, cap: int) -> int:
    value = a.get(key, default)
    if value > cap:
        raise call.refuse(codes.INVALID_ARGUMENT, "limit_cap", field=key, max=cap)
    return value


# --------------------------------------------------------------------------------- reads


def query_findings(call: Call, a: dict) -> tuple[dict, None]:
    limits = call.vocab.limits
    limit = _limit(call, a, "limit", limits["query_default"], limits["query_max"])
    history = a.get("include_history", False)
    lifecycle_machine = call.states.machine("lifecycle")
    lifecycles = _state_list(call, a, "lifecycle_state", "lifecycle")
    if not history:
        old = [s for s in (lifecycles or []) if s != lifecycle_machine.initial]
        if old:
            raise call.refuse(codes.INVALID_ARGUMENT, "history_needed", field="lifecycle_state", states=old)
        lifecycles = [lifecycle_machine.initial]
    epistemic = _state_list(call, a, "epistemic_state", "epistemic")
    caller = contexts.caller_context(call, a)
    task = contexts.task_context(call, a, caller)
    rows = call.tx.search(call.project, keyword=a.get("keyword"), tags=list(a.get("tags", [])),
                          lifecycles=lifecycles, epistemic=epistemic)
    if rows is None:
        raise call.refuse(codes.INVALID_ARGUMENT, "keyword_empty", field="keyword")
    table = call.book.table(APPLICABILITY_TABLE)
    found: list[dict] = []
    truncated = False
    for row in rows:
        facts = applicability.facts(row["scope"], caller, call.vocab, row["lifecycle_state"],
                                    row["epistemic_state"], "scope_context" in a, task)
        verdict = applicability.verdict(table, facts, _presentable(call, row))
        if not history and not verdict["listed"]:
            continue
        if len(found) == limit:
            truncated = True
            break
        found.append(views.summary(row, call.tx.tags(row["seq"]), verdict))
    return {"findings": found, "count": len(found), "limit": limit, "truncated": truncated}, None


def get_finding(call: Call, a: dict) -> tuple[dict, None]:
    row = finding_rows.finding(call, a["finding_id"])
    limits = call.vocab.limits
    events_limit = _limit(call, a, "events_limit", limits["events_default"], limits["events_max"])
    excerpt_limit = None if a.get("full_excerpts", False) else limits["excerpt_chars"]
    seq = row["seq"]
    events, total = call.tx.events(seq, events_limit)
    evidence_limit = _limit(call, a, "evidence_limit", limits["evidence_default"], limits["evidence_max"])
    offset = a.get("evidence_offset", 0)
    page = call.tx.linked_evidence(seq, limit=evidence_limit, offset=offset)
    return {"finding": views.finding(row, call.tx.tags(seq)),
            "evidence": _evidence(call, seq, excerpt_limit, rows=page),
            "evidence_total": call.tx.evidence_links(seq), "evidence_offset": offset,
            "relations": [views.relation(r) for r in call.tx.relations(seq)],
            "events": [views.event(r) for r in events], "events_total": total,
            "documents": [views.document(r) for r in call.tx.documents(seq)],
            "rule_proposals": [views.proposal(r) for r in call.tx.proposals(seq)]}, None


# --------------------------------------------------------------------------------- writes


def log_finding(call: Call, a: dict) -> tuple[dict, dict]:
    body = arguments.check_body(call, a)
    resolved = evidence_items.resolve_all(call, body.get("evidence", []), "evidence")
    _seq, finding_id, attached = new_finding.create(call, body, resolved, validated_at=call.now if resolved else None)
    finding = _finding_facts(dict(body, lifecycle_state=call.states.machine("lifecycle").initial))
    facts = _write_facts(call, finding, attached, manual_exception=body.get("manual_exception"))
    ids = list(dict.fromkeys(e["evidence_id"] for e in attached))
    return {"finding_id": finding_id, "version": 1, "epistemic_state": body["epistemic_state"],
            "lifecycle_state": finding["lifecycle_state"], "evidence_count": len(ids), "evidence_ids": ids,
            "support": _supports(call, attached), "needs": needs(call, facts)}, facts


def add_evidence(call: Call, a: dict) -> tuple[dict, dict]:
    row = finding_rows.finding(call, a["finding_id"])
    finding_rows.expect_version(call, row, a.get("expected_version"))
    link = evidence_links.attach(call, row["seq"], evidence_items.resolve(call, a["evidence"], "evidence"),
                                 row["version"] + 1)
    version = row["version"]
    if link["linked"]:
        version = finding_rows.bump(call, row)
        events.record(call, row["seq"], version, payload={
            "evidence_id": link["evidence_id"], "relation": link["relation"], "method": link["method"]})
    return {"finding_id": row["id"], "version": version, "evidence_id": link["evidence_id"],
            "reused": link["reuse"] == "reused", "linked": link["linked"],
            "epistemic_state": row["epistemic_state"], "support": _supports(call, [link])}, \
        _write_facts(call, _finding_facts(row), [link])


def set_finding_state(call: Call, a: dict) -> tuple[dict, dict]:
    row = finding_rows.finding(call, a["finding_id"])
    reason = arguments.reason(call, a)
    targets = [(m, k) for m, k in (("epistemic", "epistemic_state"), ("lifecycle", "lifecycle_state")) if k in a]
    if len(targets) != 1:
        raise call.refuse(codes.INVALID_ARGUMENT, "one_state", field="epistemic_state")
    machine, column = targets[0]
    target = arguments.choose(call, column, a[column], call.states.machine(machine).states)
    finding_rows.expect_version(call, row, a["expected_version"])
    links = call.tx.links(row["seq"])
    basis = links
    if "evidence_ids" in a:
        linked = {l["evidence_id"] for l in links}
        for evidence_id in a["evidence_ids"]:
            if evidence_id not in linked:
                raise call.refuse(codes.NOT_FOUND, "evidence_not_linked", evidence_id=evidence_id,
                                  finding_id=row["id"])
        basis = [l for l in links if l["evidence_id"] in a["evidence_ids"]]
    source = row[column]
    facts = _transition_facts(row, basis, links, a, demoted=moves.last_demotion(call, row["seq"]))
    moves.check_move(call, machine, source, target, facts)
    version = finding_rows.bump(call, row, **{column: target})
    payload = {"machine": machine, "evidence_ids": [l["evidence_id"] for l in basis] if "evidence_ids" in a else []}
    if a.get("manual_exception"):
        payload["manual_exception"] = a["manual_exception"]
    events.record(call, row["seq"], version, from_state=source, to_state=target, reason=reason,
                  payload=payload)
    after = dict(_finding_facts(row), **{column: target})
    data = {"finding_id": row["id"], "version": version, "machine": machine, "from": source, "to": target,
            "epistemic_state": after["epistemic_state"], "lifecycle_state": after["lifecycle_state"]}
    if machine == "epistemic":
        data["support"] = _supports(call, facts["basis"])
    if call.states.machine(machine).shows_conflict(target):
        data["conflict"] = _conflict(call, row["seq"])
    return data, _write_facts(call, after, [], to_state=target, manual_exception=a.get("manual_exception"))


def refute_finding(call: Call, a: dict) -> tuple[dict, dict]:
    row = finding_rows.finding(call, a["finding_id"])
    reason = arguments.reason(call, a)
    finding_rows.expect_version(call, row, a["expected_version"])
    counter, refuted = call.names["refute_relation"], call.names["refute_state"]
    resolved = evidence_items.resolve_all(call, a.get("evidence", []), "evidence", counter, counter)
    attached = [evidence_links.attach(call, row["seq"], r, row["version"] + 1) for r in resolved]
    moves.check_move(call, "epistemic", row["epistemic_state"], refuted,
                     _transition_facts(row, _basis(attached), call.tx.links(row["seq"]), a, _basis(attached)))
    version = finding_rows.bump(call, row, epistemic_state=refuted)
    ids = list(dict.fromkeys(e["evidence_id"] for e in attached))
    events.record(call, row["seq"], version, from_state=row["epistemic_state"], to_state=refuted,
                  reason=reason, payload={"evidence_ids": ids})
    after = dict(_finding_facts(row), epistemic_state=refuted)
    return {"finding_id": row["id"], "version": version, "epistemic_state": refuted,
            "lifecycle_state": row["lifecycle_state"], "evidence_ids": ids, "support": _supports(call, attached)}, \
        _write_facts(call, after, attached, to_state=refuted)


def supersede_finding(call: Call, a: dict) -> tuple[dict, dict]:
    old = finding_rows.finding(call, a["finding_id"])
    reason = arguments.reason(call, a)
    finding_rows.expect_version(call, old, a["expected_version"])
    superseded = call.names["supersede_state"]
    moves.check_move(call, "lifecycle", old["lifecycle_state"], superseded, _transition_facts(old, [], [], a))
    body = arguments.check_body(call, a["new"], "new.")
    resolved = evidence_items.resolve_all(call, body.get("evidence", []), "new.evidence")
    seq, finding_id, attached = new_finding.create(call, body, resolved, validated_at=call.now if resolved else None,
                                                   event_payload={"supersedes": old["id"]})
    add_relation(call, seq, call.names["supersede_relation"], old["seq"], reason)
    old_version = finding_rows.bump(call, old, lifecycle_state=superseded)
    events.record(call, old["seq"], old_version, from_state=old["lifecycle_state"], to_state=superseded,
                  reason=reason, payload={"superseded_by": finding_id})
    finding = _finding_facts(dict(body, lifecycle_state=call.states.machine("lifecycle").initial))
    return {"finding_id": finding_id, "version": 1, "superseded_id": old["id"], "superseded_version": old_version,
            "epistemic_state": body["epistemic_state"], "support": _supports(call, attached)}, \
        _write_facts(call, finding, attached, manual_exception=body.get("manual_exception"))


def _change_facts(old: dict, old_scope: dict, statement: str, claim_kind: str, scope: dict) -> dict:
    before, after = old_scope["match"], scope["match"]
    return {"statement_edits": statement_edits.edits(old["statement"], statement),
            "claim_kind_changed": old["claim_kind"] != claim_kind,
            "match": {"added": sorted(k for k in after if k not in before),
                      "removed": sorted(k for k in before if k not in after),
                      "changed": sorted(k for k in after if k in before and after[k] != before[k])},
            "context_changed": sorted(k for k in scope["context"]
                                      if old_scope["context"].get(k, object()) != scope["context"][k]),
            "revalidate_on_changed": old_scope["revalidate_on"] != scope["revalidate_on"]}


def _revalidated_scope(call: Call, old_scope: dict, a: dict) -> dict:
    """The scope after revalidation: the caller's new scope if given, and the context keys of the
    caller's scope_context (keys the old context has, or that some revalidation trigger watches)."""
    scope = arguments.check_scope(call, a["scope"], "scope") if "scope" in a else copy.deepcopy(old_scope)
    watched = {k for t in call.vocab.revalidate_triggers.values() for k in t["context_keys"]}
    for key, value in contexts.caller_context(call, a).items():
        if key in old_scope["context"] or key in watched:
            scope["context"][key] = value
    return scope


def revalidate_finding(call: Call, a: dict) -> tuple[dict, dict]:
    row = finding_rows.finding(call, a["finding_id"])
    reason = arguments.reason(call, a)
    result = arguments.choose(call, "result", a["result"], call.vocab.revalidation_results)
    target = call.vocab.revalidation_results[result]["to"]
    epistemic = call.states.machine("epistemic")
    if target not in epistemic.states:
        raise call.refuse(codes.INVALID_STATE_TRANSITION, "result_unknown", result=result, to=target)
    finding_rows.expect_version(call, row, a["expected_version"])
    moves.check_requires(call, "epistemic", row["epistemic_state"], _transition_facts(row, [], [], a))
    old_scope = row["scope"]
    statement = a.get("statement", row["statement"])
    claim_kind = arguments.choose(call, "claim_kind", a.get("claim_kind", row["claim_kind"]), call.vocab.claim_kinds)
    scope = _revalidated_scope(call, old_scope, a)
    change = call.book.table(CHANGE_TABLE)
    fired = change.evaluate(_change_facts(row, old_scope, statement, claim_kind, scope)).fired[0]
    material = change.codes.get(fired.code, {}).get("role") == "material"
    resolved = evidence_items.resolve_all(call, a.get("evidence", []), "evidence")
    if material:
        return _revalidate_as_new(call, row, a, resolved, target, statement, claim_kind, scope, fired, reason)
    attached = [evidence_links.attach(call, row["seq"], r, row["version"] + 1) for r in resolved]
    links = call.tx.links(row["seq"])
    source = row["epistemic_state"]
    columns: dict = {"last_validated_at": call.now, "scope": scope}
    facts = _transition_facts(row, _basis(attached) or links, links, a, _basis(attached),
                              moves.last_demotion(call, row["seq"]))
    if target != source:
        moves.check_move(call, "epistemic", source, target, facts)
        columns["epistemic_state"] = target
    else:       # a revalidation confirming the state it finds (supported: rules/finding_states.yaml stays)
        moves.check_stay(call, "epistemic", source, facts)
    version = finding_rows.bump(call, row, **columns)
    ids = list(dict.fromkeys(e["evidence_id"] for e in attached))
    events.record(call, row["seq"], version, from_state=source, to_state=target, reason=reason,
                  payload={"result": result, "evidence_ids": ids, "change": fired.code})
    after = dict(_finding_facts(row), epistemic_state=target, scope=scope)
    data = {"finding_id": row["id"], "revalidated_id": row["id"], "created_new": False,
            "material_change": {"code": fired.code, "material": False, "detail": fired.outputs.get("detail", "")},
            "from": source, "to": target, "epistemic_state": target, "version": version,
            "last_validated_at": call.now, "support": _supports(call, attached)}
    if call.states.machine("epistemic").shows_conflict(target):
        data["conflict"] = _conflict(call, row["seq"])
    return data, _write_facts(call, after, attached, to_state=target)


def _revalidate_as_new(call: Call, row, a, resolved, target, statement, claim_kind, scope, fired, reason):
    body = {"claim_kind": claim_kind, "statement": statement, "details": row["details"],
            "epistemic_state": target, "scope": scope, "tags": call.tx.tags(row["seq"]),
            "retrieval_policy": row["retrieval_policy"]}
    if a.get("manual_exception"):
        body["manual_exception"] = a["manual_exception"]
    replaced = call.names["revalidation_replaced_state"]
    moves.check_move(call, "lifecycle", row["lifecycle_state"], replaced, _transition_facts(row, [], [], a))
    seq, finding_id, attached = new_finding.create(call, body, resolved, validated_at=call.now,
                                                   event_payload={"revalidates": row["id"], "result": a["result"]})
    add_relation(call, seq, call.vocab.new_finding_relation, row["seq"], reason)
    old_version = finding_rows.bump(call, row, lifecycle_state=replaced)
    events.record(call, row["seq"], old_version, from_state=row["lifecycle_state"], to_state=replaced,
                  reason=reason, payload={"result": a["result"], "change": fired.code, "new_finding_id": finding_id})
    finding = _finding_facts(dict(body, lifecycle_state=call.states.machine("lifecycle").initial))
    data = {"finding_id": finding_id, "revalidated_id": row["id"], "created_new": True,
            "material_change": {"code": fired.code, "material": True, "detail": fired.outputs.get("detail", "")},
            "from": call.states.machine("epistemic").initial, "to": target, "epistemic_state": target,
            "version": 1, "last_validated_at": call.now, "support": _supports(call, attached)}
    if call.states.machine("epistemic").shows_conflict(target):
        data["conflict"] = _conflict(call, seq)
    return data, _write_facts(call, finding, attached, to_state=target, manual_exception=a.get("manual_exception"))


def link_finding(call: Call, a: dict) -> tuple[dict, dict | None]:
    row = finding_rows.finding(call, a["finding_id"])
    finding_rows.expect_version(call, row, a.get("expected_version"))
    (kind, ref), = a["target"].items()
    relation, note = a["relation"], a.get("note", "")
    if kind == "finding_id":
        spec = call.vocab.finding_relations.get(relation)
        arguments.choose(call, "relation", relation, call.vocab.finding_relations)
        if spec.get("via"):
            raise call.refuse(codes.INVALID_ARGUMENT, "relation_via", field="relation", relation=relation, via=spec["via"])
        target = finding_rows.finding(call, ref)
        created = add_relation(call, row["seq"], relation, target["seq"], note)
        target_view = {"kind": "finding", "ref": target["id"]}
    else:
        arguments.choose(call, "relation", relation, call.vocab.target_relations(kind))
        created = call.tx.add_document_link({"id": call.ids.new("L"), "finding_seq": row["seq"], "target_kind": kind,
                                             "target": ref, "relation": relation, "note": note,
                                             "created_at": call.now})
        target_view = {"kind": kind, "ref": ref}
    version = row["version"]
    if created:
        version = finding_rows.bump(call, row)
        events.record(call, row["seq"], version, reason=note,
                      payload={"relation": relation, "target": target_view})
    return {"finding_id": row["id"], "version": version, "relation": relation, "target": target_view,
            "created": created}, None


def propose_rule(call: Call, a: dict) -> tuple[dict, dict]:
    row = finding_rows.finding(call, a["finding_id"])
    if not safe_relative(a["target_path"]):
        raise call.refuse(codes.INVALID_ARGUMENT, "target_path", field="target_path")
    refused = proposals.target_refusal(call, a["target_path"], a["rule_text"])
    if refused is not None:
        raise refused
    status = call.states.machine("proposal").initial
    proposal_id = call.ids.new("RP")
    call.tx.add_proposal({"id": proposal_id, "project": call.project, "finding_seq": row["seq"],
                          "rule_text": a["rule_text"], "target_path": a["target_path"], "rationale": a["rationale"],
                          "status": status, "created_at": call.now})
    events.record(call, row["seq"], row["version"], reason=a["rationale"],
                  payload={"proposal_id": proposal_id})
    return {"proposal_id": proposal_id, "finding_id": row["id"], "status": status, "version": 1}, \
        _write_facts(call, _finding_facts(row), [])


READS = {"query_findings": query_findings, "get_finding": get_finding}
# Writes that only add rows, reading nothing but rows that never change (evidence by id) and rows
# a unique key guards (evidence by source and content, idempotency keys): a store may run them
# without serializing them against other writes (PostgreSQL: REPEATABLE READ).
APPENDS = frozenset({"log_finding"})
WRITES = {"log_finding": log_finding, "add_evidence": add_evidence, "set_finding_state": set_finding_state,
          "refute_finding": refute_finding, "supersede_finding": supersede_finding,
          "revalidate_finding": revalidate_finding, "link_finding": link_finding, "propose_rule": propose_rule}
