"""RFC 6570 URI templates through the SDK's `UriTemplate` (the SDK stays in `connections/`).

Callers have fetched the server's templates over a connection, so the SDK is loaded; should it not
be, its owner's load is waited for (`heavy.SDK`), never run beside.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mcp_sidecar import heavy


class TemplateError(Exception):
    """A template the SDK cannot parse (or expand with these values); the message is ours."""


def variable_names(template: str) -> list[str]:
    heavy.SDK.wait()
    from mcp import InvalidUriTemplate, UriTemplate

    try:
        return UriTemplate.parse(template).variable_names
    except InvalidUriTemplate:
        raise TemplateError(
            "The template uses URI template features the SDK cannot expand (RFC 6570 levels 1-3, "
            "explode for / . ; only)."
        ) from None


def expand(template: str, arguments: Mapping[str, str | Sequence[str]]) -> str:
    heavy.SDK.wait()
    from mcp import InvalidUriTemplate, UriTemplate

    try:
        parsed = UriTemplate.parse(template)
    except InvalidUriTemplate:
        raise TemplateError(
            "The template uses URI template features the SDK cannot expand (RFC 6570 levels 1-3, "
            "explode for / . ; only)."
        ) from None
    try:
        return parsed.expand(arguments)
    except (TypeError, ValueError):
        raise TemplateError("Template values must be strings or arrays of strings.") from None
