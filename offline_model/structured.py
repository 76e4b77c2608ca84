"""Schema-valid JSON output for ``output_config.format`` (structured outputs).

Why: the real API guarantees the reply text parses and validates against the schema; the app's
``messages.parse`` calls rely on that. The emulator builds an instance (memory operations,
an extractive summary, or a minimal valid instance), then validates it with jsonschema before
returning, falling back to the minimal instance if the richer one does not validate.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

import jsonschema

from .protocol import Request
from .rules.formats import parse_lab_payload
from .rules.memory import Turn, reconcile
from .rules.textutil import sentence_spans

SUMMARY_MAX_CHARS = 600


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 20:
        ref = schema["$ref"]
        node: Any = root
        for part in ref.lstrip("#/").split("/"):
            if part:
                node = node.get(part, {}) if isinstance(node, dict) else {}
        schema = {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
        seen += 1
    return schema


def minimal_instance(schema: dict[str, Any], root: Optional[dict[str, Any]] = None) -> Any:
    """The smallest reasonable value valid against ``schema`` (required fields only)."""
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if key in schema and schema[key]:
            options = [_resolve(o, root) for o in schema[key]]
            non_null = [o for o in options if o.get("type") != "null"]
            nulls = [o for o in options if o.get("type") == "null"]
            if nulls:
                return None
            return minimal_instance(non_null[0] if non_null else options[0], root)
    if "allOf" in schema and schema["allOf"]:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(_resolve(part, root))
        return minimal_instance(merged, root)
    stype = schema.get("type")
    if isinstance(stype, list):
        stype = "null" if "null" in stype else stype[0]
    if stype == "object" or (stype is None and "properties" in schema):
        props = schema.get("properties", {})
        return {name: minimal_instance(props.get(name, {}), root) for name in schema.get("required", [])}
    if stype == "array":
        n = int(schema.get("minItems", 0))
        return [minimal_instance(schema.get("items", {}), root) for _ in range(n)]
    if stype == "string":
        fmt = schema.get("format")
        samples = {"date": "2026-01-01", "date-time": "2026-01-01T00:00:00Z", "time": "00:00:00",
                   "email": "user@example.com", "uri": "https://example.com", "uuid": "00000000-0000-0000-0000-000000000000"}
        value = samples.get(fmt, "")
        min_len = int(schema.get("minLength", 0))
        return value + "x" * max(0, min_len - len(value))
    if stype == "integer":
        return int(schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1 if "exclusiveMinimum" in schema else 0))
    if stype == "number":
        return float(schema.get("minimum", 0))
    if stype == "boolean":
        return False
    if stype == "null":
        return None
    return None


def is_valid(instance: Any, schema: dict[str, Any]) -> bool:
    try:
        jsonschema.validate(instance, schema)
        return True
    except jsonschema.ValidationError:
        return False
    except jsonschema.SchemaError:
        return True  # a schema jsonschema cannot check is not our failure to report


def _user_turns(req: Request) -> list[str]:
    return [m.text() for m in req.messages if m.role == "user" and m.text().strip()]


def extractive_summary(texts: list[str], max_chars: int = SUMMARY_MAX_CHARS) -> str:
    """First sentence of each user turn (lab transcript tags removed), joined, bounded in length."""
    parts: list[str] = []
    for text in texts:
        inner = re.findall(r"<user>(.*?)</user>", text, re.S) or [text]
        for chunk in inner:
            for s, e in sentence_spans(chunk):
                sentence = chunk[s:e].strip()
                if sentence and not sentence.startswith("<"):
                    parts.append(sentence if sentence[-1] in ".!?" else sentence + ".")
                break
    summary = ""
    for part in parts:
        if len(summary) + len(part) + 1 > max_chars:
            break
        summary = (summary + " " + part).strip()
    return summary or "The user did not say anything to summarise."


def _is_operations_schema(schema: dict[str, Any]) -> bool:
    props = _resolve(schema, schema).get("properties", {})
    ops = props.get("operations")
    return isinstance(ops, dict) and _resolve(ops, schema).get("type") == "array"


def _is_summary_schema(schema: dict[str, Any]) -> bool:
    props = _resolve(schema, schema).get("properties", {})
    summary = props.get("summary")
    return isinstance(summary, dict) and _resolve(summary, schema).get("type") == "string"


def operations_instance(req: Request, schema: dict[str, Any]) -> dict[str, Any]:
    """The lab's extraction: operations for the payload in the (last) user message."""
    payload = "\n".join(_user_turns(req))
    today, existing, turns = parse_lab_payload(payload)
    if not turns:  # no <conversation> tags: treat the user messages themselves as the conversation
        turns = [Turn("user", t) for t in _user_turns(req)]
    ops = reconcile(turns, existing, today)
    root = _resolve(schema, schema)
    item_schema = _resolve(_resolve(root["properties"]["operations"], schema).get("items", {}), schema)
    item_props = item_schema.get("properties", {})
    items = []
    for op in ops:
        d = op.as_dict()
        item = {k: v for k, v in d.items() if not item_props or k in item_props}
        for name in item_schema.get("required", []):
            if name not in item:
                item[name] = minimal_instance(item_props.get(name, {}), schema)
        if is_valid(item, {**item_schema, "$defs": schema.get("$defs", {}), "definitions": schema.get("definitions", {})}):
            items.append(item)
    instance = minimal_instance(schema)
    instance["operations"] = items
    return instance


def build_instance(req: Request) -> Any:
    """The structured reply for ``req.output_schema``; always valid against it."""
    schema = req.output_schema or {}
    instance: Any = None
    try:
        if _is_operations_schema(schema):
            instance = operations_instance(req, schema)
        elif _is_summary_schema(schema):
            instance = minimal_instance(schema)
            instance["summary"] = extractive_summary(_user_turns(req))
    except Exception:  # a rule bug must not turn into an invalid reply
        instance = None
    if instance is None or not is_valid(instance, schema):
        instance = minimal_instance(schema)
    return instance


def render(instance: Any) -> str:
    return json.dumps(instance, ensure_ascii=False)
