"""MCP Apps in what servers are offered (`ClientOffer.apps`): declared, keyed, united, covered."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_sidecar.connections.client_hooks import ClientOffer
from mcp_sidecar.services import offers

DECLARED = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}


def test_a_client_declaring_the_app_mime_type_offers_apps_and_says_so_to_servers() -> None:
    offer = ClientOffer.from_capabilities(DECLARED)
    assert offer.apps
    assert offer.to_json() == DECLARED  # also what the connection and cache keys are made of
    assert ClientOffer.from_capabilities({"sampling": {}, **DECLARED}).to_json() == {"sampling": {}, **DECLARED}


@pytest.mark.parametrize(
    "capabilities",
    [
        None,
        {},
        {"extensions": {}},
        {"extensions": {"io.modelcontextprotocol/ui": {}}},
        {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}}},
        {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": "text/html;profile=mcp-app"}}},
        {"experimental": DECLARED["extensions"]},
    ],
)
def test_anything_else_offers_no_apps(capabilities: Any) -> None:
    offer = ClientOffer.from_capabilities(capabilities)
    assert not offer.apps
    assert "extensions" not in offer.to_json()


def test_offers_unite_and_cover_apps_like_the_other_capabilities() -> None:
    apps, sampling = ClientOffer(apps=True), ClientOffer(sampling=True)
    both = offers.union([apps, sampling])
    assert both == ClientOffer(sampling=True, apps=True)
    assert offers.covers(both, apps)
    assert not offers.covers(sampling, apps)  # a server offered no apps reconnects to be offered them
    assert offers.covers(apps, ClientOffer())
