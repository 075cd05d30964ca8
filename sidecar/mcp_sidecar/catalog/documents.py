"""Turn catalog descriptors (tools, resources, templates, prompts) into searchable documents, and a
descriptor into its canonical text."""

from __future__ import annotations

import json
import re
from typing import Any

from mcp_sidecar.catalog.index import Document
from mcp_sidecar.catalog.tokens import tokenize

_VARIABLE = re.compile(r"\{[+#./;?&]?([^}]*)\}")


def template_variables(template: str) -> list[str]:
    """RFC 6570 variable names of a URI template, in order, without modifiers."""
    names: list[str] = []
    for expression in _VARIABLE.findall(template):
        for part in expression.split(","):
            name = part.split(":")[0].rstrip("*").strip()
            if name and name not in names:
                names.append(name)
    return names


def canonical(descriptor: dict[str, Any]) -> str:
    """A stable text of a descriptor, to tell whether a tool's definition changed."""
    return json.dumps(descriptor, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _title(descriptor: dict[str, Any]) -> str:
    title = descriptor.get("title")
    if not title and isinstance(descriptor.get("annotations"), dict):
        title = descriptor["annotations"].get("title")
    return title if isinstance(title, str) else ""


def parameter_text(schema: Any, depth: int = 0) -> str:
    """Property names and descriptions of an input schema, including nested objects and array items."""
    if not isinstance(schema, dict) or depth > 3:
        return ""
    parts: list[str] = []
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, prop in properties.items():
            parts.append(str(name))
            if isinstance(prop, dict):
                if isinstance(prop.get("description"), str):
                    parts.append(prop["description"])
                parts.append(parameter_text(prop, depth + 1))
    parts.append(parameter_text(schema.get("items"), depth + 1))
    return " ".join(p for p in parts if p)


def tool_document(server: str, descriptor: dict[str, Any], position: int) -> Document:
    name = descriptor["name"]
    title = _title(descriptor)
    exact = {name.lower(), f"{server}.{name}".lower(), f"mcp__{server}__{name}".lower()}
    if title:
        exact.add(title.lower())
    return Document(
        kind="tool",
        server=server,
        key=name,
        fields={
            "name": name,
            "title": title,
            "description": descriptor.get("description") or "",
            "parameters": parameter_text(descriptor.get("inputSchema")),
            "extra": server,
        },
        exact=frozenset(exact),
        position=position,
        payload=descriptor,
    )


def resource_document(server: str, descriptor: dict[str, Any], position: int) -> Document:
    uri = descriptor["uri"]
    name = descriptor.get("name") or ""
    title = _title(descriptor)
    return Document(
        kind="resource",
        server=server,
        key=uri,
        fields={"name": name, "title": title, "description": descriptor.get("description") or "", "extra": uri},
        exact=frozenset(s.lower() for s in (uri, name, title) if s),
        position=position,
        payload=descriptor,
    )


def template_document(server: str, descriptor: dict[str, Any], position: int) -> Document:
    template = descriptor["uriTemplate"]
    name = descriptor.get("name") or ""
    title = _title(descriptor)
    extra = f"{template} {' '.join(template_variables(template))}"
    return Document(
        kind="template",
        server=server,
        key=template,
        fields={"name": name, "title": title, "description": descriptor.get("description") or "", "extra": extra},
        exact=frozenset(s.lower() for s in (template, name, title) if s),
        position=position,
        payload=descriptor,
    )


def prompt_document(server: str, descriptor: dict[str, Any], position: int) -> Document:
    name = descriptor["name"]
    title = _title(descriptor)
    arguments = " ".join(a.get("name", "") for a in descriptor.get("arguments") or [] if isinstance(a, dict))
    return Document(
        kind="prompt",
        server=server,
        key=name,
        fields={"name": name, "title": title, "description": descriptor.get("description") or "", "extra": arguments},
        exact=frozenset(s.lower() for s in (name, f"{server}.{name}", title) if s),
        position=position,
        payload=descriptor,
    )


EMBEDDED_DESCRIPTION_CHARS = 400
"""A description's opening says what an entry does; its tail (examples, caveats) blurs the vector."""


def embedding_text(doc: Document) -> str:
    """What the semantic signal embeds: the name as words, the title, the description's start."""
    name = " ".join(tokenize(doc.fields.get("name") or doc.key))
    title = doc.fields.get("title") or ""
    description = " ".join((doc.fields.get("description") or "")[:EMBEDDED_DESCRIPTION_CHARS].split())
    return " ".join(part for part in (name + ".", title, description) if part and part != ".")
