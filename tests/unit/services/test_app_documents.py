"""The checks `mcp/app/resource` makes of an app's content (`services/apps.py`)."""

from __future__ import annotations

import base64

import pytest

from mcp_sidecar.protocol.errors import SidecarError
from mcp_sidecar.services import apps

LIMIT = 4 * 1024 * 1024


@pytest.mark.parametrize(
    "html",
    [
        "<!DOCTYPE html><html></html>",
        "\ufeff  <!doctype HTML>\n<html>",
        "<!-- built -->\n<!-- twice -->\n<html lang=en>",
        "<html>",
    ],
)
def test_html_documents(html: str) -> None:
    assert apps.is_html_document(html)


@pytest.mark.parametrize("text", ["", '{"not": "html"}', "<div>fragment</div>", "<!-- unclosed <html>", "<htmlx>"])
def test_what_is_not_an_html_document(text: str) -> None:
    assert not apps.is_html_document(text)


@pytest.mark.parametrize("mime", ["text/html;profile=mcp-app", "Text/HTML ; profile=mcp-app"])
def test_the_app_mime_type(mime: str) -> None:
    assert apps.same_mime(mime)


@pytest.mark.parametrize("mime", ["text/html", "text/html;profile=mcp-app2", "text/html+mcp", None])
def test_other_mime_types(mime: object) -> None:
    assert not apps.same_mime(mime)


def test_a_document_up_to_the_limit_is_served_and_one_byte_more_is_not() -> None:
    assert len(apps.document_of({"text": "a" * LIMIT}, "s")) == LIMIT
    assert apps.document_of({"blob": base64.b64encode(b"<html>").decode()}, "s") == b"<html>"
    for content in ({"text": "a" * (LIMIT + 1)}, {"text": "é" * (LIMIT // 2 + 1)}, {"blob": "A" * (LIMIT * 2)}):
        with pytest.raises(SidecarError) as caught:
            apps.document_of(content, "s")
        assert caught.value.diagnostic.code == "app_resource_invalid"
        assert caught.value.diagnostic.message == "The app is larger than 4 MiB."


@pytest.mark.parametrize("content", [{"blob": "not base64!"}, {}, {"text": 5}])
def test_content_that_holds_no_document_is_refused(content: dict[str, object]) -> None:
    with pytest.raises(SidecarError) as caught:
        apps.document_of(content, "s")
    assert caught.value.diagnostic.code == "app_resource_invalid"


def test_the_content_for_the_uri_is_the_one_served() -> None:
    contents = [{"uri": "ui://a/other", "text": "x"}, {"uri": "ui://a/app", "text": "y"}]
    assert apps.pick(contents, "ui://a/app", "s")["text"] == "y"
    assert apps.pick([{"uri": "ui://a/renamed", "text": "z"}], "ui://a/app", "s")["text"] == "z"
    with pytest.raises(SidecarError):
        apps.pick(contents, "ui://a/third", "s")
    assert apps.ui_meta({"_meta": {"ui": {"prefersBorder": False}}}) == {"prefersBorder": False}
    deep: dict[str, object] = {}
    node = deep
    for _ in range(20):
        node["x"] = {}
        node = node["x"]  # type: ignore[assignment]
    assert apps.ui_meta({"_meta": {"ui": deep}}) is None
