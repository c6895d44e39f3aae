"""Seed 002's examples, copied literally from the seed (its JSON shapes are the contract)."""
from __future__ import annotations

import json

WITHDRAW_REQUEST = json.loads("""{
  "input": "取消修改，先只分析原因。",
  "context": [
    { "role": "user", "content": "修复登录失败。" },
    { "role": "assistant", "content": "尚未修改代码，准备先分析原因。" }
  ],
  "fields": []
}""")

SCHEMA = json.loads("""{
  "type": "object",
  "description": "结束时间不得早于原材料中的开始时间。",
  "properties": {
    "startTime": { "type": "string" },
    "endTime": { "type": "string" }
  },
  "required": ["startTime", "endTime"],
  "additionalProperties": false
}""")

REQUEST = json.loads("""{
  "input": "查询会议时间：开始时间09:00，结束时间10:00。",
  "fields": ["endTime"]
}""")

EXTRACTION = json.loads("""{
  "data": { "endTime": "10:00" },
  "evidence": [
    { "path": "/data/endTime", "mode": "exact", "sources": [{ "sourceId": "input", "quote": "10:00" }] }
  ],
  "descriptionChecks": [
    { "path": "/data", "verdict": "satisfied", "explanation": "10:00晚于原材料中的09:00。", "sources": [{ "sourceId": "input", "quote": "开始时间09:00，结束时间10:00" }] }
  ],
  "fieldResults": [
    { "path": "/data/endTime", "status": "extracted", "explanation": "结束时间明确，关系材料完整。" }
  ],
  "issues": []
}""")

RESULT = json.loads("""{
  "input": "查询会议时间：开始时间09:00，结束时间10:00。",
  "normalizedInput": "查询会议时间，开始时间09:00，结束时间10:00。",
  "primaryIntent": "查询会议时间",
  "requirements": [],
  "intents": [
    { "id": "i1", "action": "query", "target": "会议时间", "requirements": [], "status": "ready" }
  ],
  "prohibitions": [],
  "data": { "endTime": "10:00" }
}""")

MISSING_REQUEST = json.loads("""{
  "input": "查询会议结束时间：结束时间10:00，未提供开始时间。",
  "fields": ["endTime"]
}""")

MISSING_EXTRACTION = json.loads("""{
  "data": { "endTime": "10:00" },
  "evidence": [
    { "path": "/data/endTime", "mode": "exact", "sources": [{ "sourceId": "input", "quote": "10:00" }] }
  ],
  "descriptionChecks": [
    { "path": "/data", "verdict": "undetermined", "explanation": "缺少开始时间，无法核对结束时间是否更早。", "sources": [{ "sourceId": "input", "quote": "结束时间10:00，未提供开始时间" }] }
  ],
  "fieldResults": [
    { "path": "/data/endTime", "status": "extracted", "explanation": "结束时间明确提供；关系材料缺失由检查和issue报告。" }
  ],
  "issues": [
    { "code": "DATA_DEPENDENCY_MISSING", "category": "business_information", "path": "/data/endTime", "message": "缺少判断关系所需的开始时间。" }
  ]
}""")

MISSING_ERROR = json.loads("""{
  "code": "DATA_EXTRACTION_FAILED",
  "stage": "data",
  "message": "Selected extension information cannot satisfy the definition.",
  "issues": [
    { "code": "DATA_DESCRIPTION_UNDETERMINED", "category": "definition", "path": "/data", "message": "缺少开始时间，无法核对结束时间是否更早。" },
    { "code": "DATA_DEPENDENCY_MISSING", "category": "business_information", "path": "/data/endTime", "message": "缺少判断关系所需的开始时间。" }
  ],
  "partialResult": {
    "input": "查询会议结束时间：结束时间10:00，未提供开始时间。",
    "normalizedInput": "查询会议结束时间，已提供10:00，缺少开始时间。",
    "primaryIntent": "查询会议结束时间",
    "requirements": [],
    "intents": [
      { "id": "i1", "action": "query", "target": "会议结束时间", "requirements": [], "status": "ready" }
    ],
    "prohibitions": [],
    "data": {}
  }
}""")


def intent_part(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "data"}


CANDIDATE = {"intent": intent_part(RESULT), "extraction": EXTRACTION}
MISSING_CANDIDATE = {"intent": intent_part(MISSING_ERROR["partialResult"]), "extraction": MISSING_EXTRACTION}
