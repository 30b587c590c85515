"""A JSON object of a request body, read one field at a time with the checks every API shares.

The decoded object stays inside; what a read returns is typed: the field's value in its Python type, None
when the field is missing or null, or a 400 `APIError` naming the field in `param` (orjson reads an integer
literal past 64 bits as a float, so such a number is refused as out of range, not as a wrong type).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from metrics.results import is_int
from refserver.api.errors import bad_request

if TYPE_CHECKING:
    from metrics.results import Json

_INT64_END = 2**63


@dataclass(frozen=True, slots=True)
class JSONObject:
    fields: Mapping[str, Json]  # as orjson decoded it: JSON keys are strings

    @staticmethod
    def of_body(value: object) -> JSONObject:
        """The request body, which must be an object."""
        if not isinstance(value, dict):
            raise bad_request("the request body must be a JSON object", code="invalid_body")
        return JSONObject(value)

    def get(self, name: str) -> object:
        """The raw value (None when missing): for a field with its own checks."""
        return self.fields.get(name)

    def __contains__(self, name: str) -> bool:
        return name in self.fields

    def read_int(self, name: str, *, minimum: int | None = None) -> int | None:
        value = self.fields.get(name)
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer() and abs(value) >= _INT64_END:
            raise bad_request(f"'{name}' must be an integer below 2**63, got {value:.6g}", param=name)
        if not is_int(value):
            raise bad_request(f"'{name}' must be an integer, got {type(value).__name__}", param=name,
                              code="invalid_type")
        if abs(value) >= _INT64_END:
            raise bad_request(f"'{name}' must be an integer below 2**63, got {value}", param=name)
        if minimum is not None and value < minimum:
            raise bad_request(f"'{name}' must be >= {minimum}, got {value}", param=name)
        return int(value)

    def read_float(self, name: str, *, low: float, high: float, low_open: bool = False) -> float | None:
        value = self.fields.get(name)
        if value is None:
            return None
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise bad_request(f"'{name}' must be a number, got {type(value).__name__}", param=name,
                              code="invalid_type")
        number = float(value)
        too_low = number <= low if low_open else number < low
        if too_low or number > high:
            bracket = "(" if low_open else "["
            raise bad_request(f"'{name}' must be in {bracket}{low}, {high}], got {value}", param=name)
        return number

    def read_bool(self, name: str) -> bool | None:
        value = self.fields.get(name)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise bad_request(f"'{name}' must be a boolean, got {type(value).__name__}", param=name,
                              code="invalid_type")
        return value

    def read_str(self, name: str) -> str | None:
        value = self.fields.get(name)
        if value is not None and not isinstance(value, str):
            raise bad_request(f"'{name}' must be a string", param=name, code="invalid_type")
        return value

    def read_stop_list(self, name: str) -> list[str]:
        """A list of non-empty stop strings (the Messages API's `stop_sequences`)."""
        value = self.fields.get(name)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(s, str) and s for s in value):
            raise bad_request(f"'{name}' must be a list of non-empty strings", param=name)
        return [s for s in value if isinstance(s, str)]
