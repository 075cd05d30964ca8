"""One record per kind of catalog entry: tools, resources, resource templates and prompts.

A record says how its entries are listed (the list, the server capability that offers it, the
field naming an entry, where the SDK's pages hold them), which change notices drop its catalog in
both protocol eras, and how an entry becomes a search document, a discovery candidate and the exact
call offered next. Code that treats the kinds alike looks them up here instead of spelling each out.

Entries are kept in three catalogs, the *groups* (`tools`, `resources`, `prompts`): resources and
their templates are listed together, kept in one catalog and dropped by one change notice. A group
is also what discovery's `kind` names and what a `CatalogInvalidated` event carries.

What a layer above keeps per kind is in a small table of that layer keyed by the record's name
(or its group's), since this package may not reach it: a candidate's text row
(`output/discovery_text.py`, `ROWS`: rendering is `output/`'s, and `output/` reads this package),
and where a group's copies are kept and how one is fetched (`services/catalogs.py`). The SDK's
spellings here are plain strings: only `connections/` imports the SDK, and uses them there.
`tests/unit/catalog/test_catalog_kinds.py` holds the records to the installed SDK and those tables.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mcp_sidecar.catalog import candidates, documents
from mcp_sidecar.catalog.candidates import Held, Scored
from mcp_sidecar.catalog.index import Document

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import Candidate, NextCall

EntryKind = Literal["tool", "resource", "template", "prompt"]
"""A document's, a candidate's and a refused entry's `kind`."""
Group = Literal["tools", "resources", "prompts"]
"""The catalog an entry is kept in, and the change notice that drops it."""
ListName = Literal["tools", "resources", "resource templates", "prompts"]
"""A list request, as messages and caching hints name it."""


@dataclass(frozen=True, slots=True, eq=False)
class Kind:
    """One kind of entry; there is one object per kind, compared and hashed by identity."""

    name: EntryKind
    group: Group
    what: str
    """The entry in a sentence: "URI template"."""
    # -- how it is listed
    listed_as: ListName
    capability: str
    """The server capability that offers the list."""
    key: str
    """The field that identifies an entry: its name, URI or URI template."""
    page_field: str
    """The attribute of the SDK's list result that holds a page's entries."""
    client_call: str
    """The SDK client's method that lists one page."""
    # -- what drops its catalog, in each protocol era
    modern_change: str
    """The event on a 2026-07-28 session's `subscriptions/listen` stream (an SDK class name)."""
    legacy_change: str
    """The `notifications/*/list_changed` of a handshake-era session (an SDK class name)."""
    # -- what discovery makes of an entry
    document: Callable[[str, dict[str, Any], int], Document]
    """(server, descriptor, position in its catalog) -> the search document."""
    candidate: Callable[[Document, Mapping[str, Held], Scored], Candidate]
    """(document, the session's active tools by id, the ranking's fields) -> the wire candidate."""
    next_call: Callable[[Document, bool], NextCall]
    """(document, loaded: a tool callable in the session now) -> the exact request to send next."""
    for_people: bool = False
    """Only a person runs it (a prompt): a model's query ranks it after everything it can use."""


TOOL = Kind(
    name="tool",
    group="tools",
    what="tool",
    listed_as="tools",
    capability="tools",
    key="name",
    page_field="tools",
    client_call="list_tools",
    modern_change="ToolsListChanged",
    legacy_change="ToolListChangedNotification",
    document=documents.tool_document,
    candidate=candidates.tool_candidate,
    next_call=candidates.tool_next,
)
RESOURCE = Kind(
    name="resource",
    group="resources",
    what="resource",
    listed_as="resources",
    capability="resources",
    key="uri",
    page_field="resources",
    client_call="list_resources",
    modern_change="ResourcesListChanged",
    legacy_change="ResourceListChangedNotification",
    document=documents.resource_document,
    candidate=candidates.resource_candidate,
    next_call=candidates.resource_next,
)
TEMPLATE = Kind(
    name="template",
    group="resources",
    what="URI template",
    listed_as="resource templates",
    capability="resources",
    key="uriTemplate",
    page_field="resource_templates",
    client_call="list_resource_templates",
    # A change of the templates is announced as one of the resources.
    modern_change="ResourcesListChanged",
    legacy_change="ResourceListChangedNotification",
    document=documents.template_document,
    candidate=candidates.template_candidate,
    next_call=candidates.template_next,
)
PROMPT = Kind(
    name="prompt",
    group="prompts",
    what="prompt",
    listed_as="prompts",
    capability="prompts",
    key="name",
    page_field="prompts",
    client_call="list_prompts",
    modern_change="PromptsListChanged",
    legacy_change="PromptListChangedNotification",
    document=documents.prompt_document,
    candidate=candidates.prompt_candidate,
    next_call=candidates.prompt_next,
    for_people=True,
)

KINDS: tuple[Kind, ...] = (TOOL, RESOURCE, TEMPLATE, PROMPT)
"""Every kind, in the order refused entries are listed; a group's kinds in the order they are listed."""
GROUPS: tuple[Group, ...] = tuple(dict.fromkeys(k.group for k in KINDS))
SEARCHED: Mapping[str, tuple[Group, ...]] = {"all": GROUPS, **{g: (g,) for g in GROUPS}}
"""The groups a discovery's `kind` searches."""
MODERN_CHANGES: Mapping[str, Group] = {k.modern_change: k.group for k in KINDS}
LEGACY_CHANGES: Mapping[str, Group] = {k.legacy_change: k.group for k in KINDS}

_BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}
_BY_LIST = {k.listed_as: k for k in KINDS}
_ORDER: dict[str, int] = {k.name: i for i, k in enumerate(KINDS)}


def of(name: str) -> Kind:
    """The kind a document, candidate or refusal names (KeyError for none)."""
    return _BY_NAME[name]


def listed(name: ListName) -> Kind:
    """The kind a list request fetches."""
    return _BY_LIST[name]


def in_group(group: Group) -> tuple[Kind, ...]:
    """The kinds one catalog keeps, in the order they are listed."""
    return tuple(k for k in KINDS if k.group == group)


def order(name: str) -> int:
    """Where entries of kind `name` come in a list of refusals."""
    return _ORDER[name]


__all__ = [
    "GROUPS",
    "KINDS",
    "LEGACY_CHANGES",
    "MODERN_CHANGES",
    "PROMPT",
    "RESOURCE",
    "SEARCHED",
    "TEMPLATE",
    "TOOL",
    "EntryKind",
    "Group",
    "Kind",
    "ListName",
    "in_group",
    "listed",
    "of",
    "order",
]
