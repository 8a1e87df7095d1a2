"""The Bot API's errors as the fake answers them: Telegram's words, its JSON, its codes."""

from __future__ import annotations

import json
from typing import Any

NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)
CANT_INITIATE = "Forbidden: bot can't initiate conversation with a user"
BLOCKED = "Forbidden: bot was blocked by the user"
EDIT_NOT_FOUND = "Bad Request: message to edit not found"
QUERY_INVALID = "Bad Request: query is too old and response timeout expired or query ID is invalid"


class ApiError(Exception):
    """A Bot API error reply: HTTP status, Telegram's description, optional parameters."""

    def __init__(
        self,
        code: int,
        description: str,
        parameters: dict[str, Any] | None = None,
        *,
        body: bytes | None = None,
    ):
        super().__init__(description)
        self.code = code
        self.description = description
        self.parameters = parameters
        self.raw = body  # sent instead of Telegram's JSON (a proxy's error page)

    def body(self) -> dict[str, Any]:
        """The error as Telegram answers it (the HTTP status is :attr:`code`)."""
        body: dict[str, Any] = {
            "ok": False,
            "error_code": self.code,
            "description": self.description,
        }
        if self.parameters:
            body["parameters"] = self.parameters
        return body

    def payload(self) -> bytes:
        """What goes over the wire: Telegram's JSON, or the page a proxy put instead."""
        return self.raw if self.raw is not None else json.dumps(self.body()).encode()


def bad(description: str) -> ApiError:
    return ApiError(400, f"Bad Request: {description}")


def too_many(retry: int) -> ApiError:
    """Telegram's flood control: 429, and the seconds to wait in ``retry_after``."""
    return ApiError(429, f"Too Many Requests: retry after {retry}", {"retry_after": retry})
