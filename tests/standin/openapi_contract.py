"""The response contract of the Langfuse stand-in: Langfuse's published OpenAPI document.

Every JSON body the stand-in sends is checked here against the response schema that `openapi.yml`
gives for that operation and status code, so the stand-in cannot drift into a shape the real server
never sends. OpenAPI 3.0 is not JSON Schema, so the document is converted first:

- `nullable: true` becomes `anyOf: [<schema>, {"type": "null"}]` (jsonschema ignores `nullable`);
- `$ref: "#/components/schemas/X"` is resolved against the document's own components;
- `format: date-time` is checked (ISO 8601 with a UTC offset); other formats are annotations only.

Where the installed SDK (`langfuse/api/`, newer than the document) expects a response the document
does not describe, `SDK_NEWER_RESPONSES` holds a hand-written schema taken from the SDK's model,
each with the SDK type it mirrors. Responses the document has no schema for at all (the OTLP
protobuf reply) are not JSON and are not checked: see `langfuse_server.py`.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator, FormatChecker  # type: ignore[import-untyped]

# A copy of Langfuse's published server API (server 4.16, taken from the team's shared/langfuse/), kept
# beside the stand-in so that a fresh clone tests without anything else on the machine.
OPENAPI_PATH = Path(os.environ.get("LANGFUSE_OPENAPI_PATH", str(Path(__file__).with_name("openapi.yml"))))

JsonSchema = dict[str, Any]

# Error bodies. The document gives 4xx responses the empty schema `{}` (anything) and has no entry at
# all for 429 or most 5xx; Langfuse sends `{"message": ...}` (sometimes with `error`) for all of them,
# so every error the stand-in sends must have that shape, whatever the document says.
ERROR_BODY: JsonSchema = {
    "type": "object",
    "properties": {"message": {"type": "string"}, "error": {"type": "string"}},
    "required": ["message"],
}

# Responses the SDK handles that openapi.yml (server 4.16 snapshot) does not describe.
SDK_NEWER_RESPONSES: dict[tuple[str, str, int], JsonSchema] = {
    # openapi.yml: POST /api/public/scores takes ONE CreateScoreRequest and answers 200 {"id"}.
    # SDK 5.x (`scores.create`, used by the background ScoreConsumer) posts a JSON LIST and parses
    # `CreateScoresResponse = CreateScoreBatchResults | CreateScoreBatchResponse`:
    # 202 -> CreateScoreBatchResponse, `message: Literal["Accepted"]`.
    ("post", "/api/public/scores", 202): {
        "type": "object",
        "properties": {"message": {"const": "Accepted"}},
        "required": ["message"],
    },
    # 207 -> CreateScoreBatchResults(accepted: int, rejected: int, errors: [CreateScoreBatchError]),
    # CreateScoreBatchError(message: str).
    ("post", "/api/public/scores", 207): {
        "type": "object",
        "properties": {
            "accepted": {"type": "integer", "minimum": 0},
            "rejected": {"type": "integer", "minimum": 0},
            "errors": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"message": {"type": "string"}},
                    "required": ["message"],
                },
            },
        },
        "required": ["accepted", "rejected", "errors"],
    },
}

_SUBSCHEMA_KEYS = frozenset({"items", "additionalProperties", "not"})
_SUBSCHEMA_LIST_KEYS = frozenset({"allOf", "oneOf", "anyOf"})
_ISO_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def _is_datetime(value: object) -> bool:
    if not isinstance(value, str):
        return True  # the type keyword, not the format, rejects non-strings
    if not _ISO_DATETIME.match(value):
        return False
    datetime.fromisoformat(value.replace("Z", "+00:00"))
    return True


_format_checker = FormatChecker()
_format_checker.checks("date-time", raises=ValueError)(_is_datetime)


def to_json_schema(schema: Any) -> Any:
    """Convert one OpenAPI 3.0 schema object (recursively) to JSON Schema 2020-12."""
    if not isinstance(schema, Mapping):
        return schema  # `additionalProperties: true` and other booleans
    converted: JsonSchema = {}
    for key, value in schema.items():
        if key == "nullable":
            continue
        if key == "properties":
            converted[key] = {name: to_json_schema(sub) for name, sub in value.items()}
        elif key in _SUBSCHEMA_KEYS:
            converted[key] = to_json_schema(value)
        elif key in _SUBSCHEMA_LIST_KEYS:
            converted[key] = [to_json_schema(sub) for sub in value]
        else:
            converted[key] = value
    if schema.get("nullable") is True:
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


class SchemaMismatchError(AssertionError):
    """The stand-in was about to send a body its contract does not allow."""


class ResponseContract:
    """Response (and request) schemas of Langfuse's public API, ready for `jsonschema`."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self._paths: Mapping[str, Any] = document["paths"]
        self._components = {
            "schemas": {
                name: to_json_schema(schema) for name, schema in document["components"]["schemas"].items()
            }
        }
        self._validators: dict[tuple[str, str, int | str], Draft202012Validator] = {}
        self._lock = threading.Lock()

    def response_schema(self, method: str, template: str, status: int) -> JsonSchema | None:
        """The JSON schema for one response, or None when neither the document nor the SDK has one."""
        override = SDK_NEWER_RESPONSES.get((method.lower(), template, status))
        if override is not None:
            return override
        operation = self._operation(method, template)
        response = (operation or {}).get("responses", {}).get(str(status), {})
        schema = response.get("content", {}).get("application/json", {}).get("schema")
        return None if schema is None else to_json_schema(schema)

    def request_schema(self, method: str, template: str) -> JsonSchema | None:
        operation = self._operation(method, template) or {}
        body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
        schema = body.get("schema")
        return None if schema is None else to_json_schema(schema)

    def response_problems(self, method: str, template: str | None, status: int, body: Any) -> list[str]:
        """Why `body` is not a valid `status` response of the operation; empty when it is."""
        problems: list[str] = []
        if status >= 400:
            problems += _problems(self._cached(("any", "error", status), ERROR_BODY), body)
        schema = None if template is None else self.response_schema(method, template, status)
        if schema is None:
            if status < 400:
                problems.append(f"no response schema for {method.upper()} {template} -> {status}")
            return problems
        key = (method.lower(), template or "", status)
        return problems + _problems(self._cached(key, schema), body)

    def request_problems(self, method: str, template: str, body: Any) -> list[str]:
        schema = self.request_schema(method, template)
        if schema is None:
            return []
        return _problems(self._cached((method.lower(), template, "request"), schema), body)

    def check_response(self, method: str, template: str | None, status: int, body: Any) -> None:
        """Raise SchemaMismatchError when `body` breaks the contract."""
        problems = self.response_problems(method, template, status, body)
        if problems:
            where = f"{method.upper()} {template} -> {status}"
            raise SchemaMismatchError(f"{where}: " + "; ".join(problems))

    def _operation(self, method: str, template: str) -> Mapping[str, Any] | None:
        path_item = self._paths.get(template)
        return None if path_item is None else path_item.get(method.lower())

    def _cached(self, key: tuple[str, str, int | str], schema: JsonSchema) -> Draft202012Validator:
        with self._lock:
            validator = self._validators.get(key)
            if validator is None:
                validator = self._validator(schema)
                self._validators[key] = validator
            return validator

    def _validator(self, schema: JsonSchema) -> Draft202012Validator:
        # `#/components/...` pointers resolve against the root schema, so the components ride along
        # under a key that JSON Schema ignores.
        root = {**schema, "components": self._components}
        return Draft202012Validator(root, format_checker=_format_checker)


def _problems(validator: Draft202012Validator, body: Any) -> list[str]:
    errors = sorted(validator.iter_errors(body), key=lambda error: list(error.absolute_path))
    return [f"at /{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in errors]


@cache
def load_contract(path: Path = OPENAPI_PATH) -> ResponseContract:
    """The contract from `openapi.yml`, parsed once per process (the file is ~17,000 lines)."""
    if not path.is_file():
        raise FileNotFoundError(
            f"Langfuse's openapi.yml not found at {path}: set LANGFUSE_OPENAPI_PATH to its location"
        )
    with path.open(encoding="utf-8") as handle:
        return ResponseContract(yaml.safe_load(handle))
