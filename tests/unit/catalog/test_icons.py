"""Which server icons may reach an editor (catalog/icons.py), and where they show up.

End to end, with a fixture server declaring valid and hostile icons: tests/e2e/test_icons_end_to_end.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_sidecar.catalog.icons import MAX_DATA_URI_CHARS, MAX_HTTPS_URI_CHARS, safe_icons, src_ok
from mcp_sidecar.catalog.index import Document, Hit
from mcp_sidecar.catalog.tools import tool_view
from mcp_sidecar.services.discovery import candidate

PNG = "data:image/png;base64,iVBORw0KGgo="


@pytest.mark.parametrize(
    "src",
    [
        PNG,
        "data:image/jpeg;base64,/9j/4AAQ",
        "data:image/gif;base64,R0lGODlh",
        "data:image/webp;base64,UklGRg==",
        "DATA:IMAGE/PNG;BASE64,iVBORw0KGgo=",
        "data:image/svg+xml;utf8,<svg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/>",
        "data:image/svg+xml;charset=utf-8,%3Csvg%3E%3C/svg%3E",
        "data:image/png;base64," + "A" * (MAX_DATA_URI_CHARS - len("data:image/png;base64,")),
        "https://icons.example.com/a.png",
        "HTTPS://icons.example.com/a.png?size=48#x",
        "https://icons.example.com:8443/a.png",
        "https://xn--caf-dma.example/a.png",
        "https://127.0.0.1/a.png",
        "https://[2001:db8::1]:443/a.png",
        "https://icons.example.com",
        "https://icons.example.com/" + "a" * (MAX_HTTPS_URI_CHARS - len("https://icons.example.com/")),
    ],
)
def test_data_images_and_https_urls_pass(src: str) -> None:
    assert src_ok(src)


@pytest.mark.parametrize(
    "src",
    [
        "javascript:alert(1)",
        " javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "http://icons.example.com/a.png",
        "file:///etc/passwd",
        "//icons.example.com/a.png",
        "/static/a.png",
        "a.png",
        "",
        "vbscript:msgbox",
        "blob:https://icons.example.com/1",
        "data:text/html;base64,PHNjcmlwdD4=",
        "data:image/svg;base64,PHN2Zz4=",
        "data:application/octet-stream;base64,AAAA",
        "data:image/png;base64",  # no comma: no data
        "data:,hello",
        "data:image/png;base64," + "A" * (MAX_DATA_URI_CHARS - len("data:image/png;base64,") + 1),
        "data:image/png;base64,iVBOR\x00w0KGgo=",
        "data:image/svg+xml;utf8,<svg>\u202e</svg>",
        "https://icons.example.com/" + "a" * (MAX_HTTPS_URI_CHARS - len("https://icons.example.com/") + 1),
        "https://icons.example.com/a b.png",
        "https://icons.example.com/\u202egnp.exe",
        "https://icons.example.com/a\u200b.png",
        "https://icons.example.com/a\x1b[2J.png",
        "https://icons.example.com/a\t.png",
        "https://café.example/a.png",
        "https://user:secret@icons.example.com/a.png",
        "https://icons.example.com@evil.example/a.png",
        "https:///a.png",
        "https://",
        "https://-bad-.example/a.png",
        "https://icons.example.com:port/a.png",
        "https:icons.example.com/a.png",
    ],
)
def test_every_other_source_is_dropped(src: str) -> None:
    assert not src_ok(src)
    assert safe_icons([{"src": src}]) == []


def test_only_the_four_icon_keys_pass_and_bad_optional_fields_drop_the_icon() -> None:
    kept = safe_icons(
        [
            {"src": PNG, "mimeType": "image/png", "sizes": ["16x16", "any"], "theme": "dark", "onload": "x()"},
            {"src": PNG, "mimeType": "text/html"},
            {"src": PNG, "sizes": "16x16"},
            {"src": PNG, "sizes": ["big"]},
            {"src": PNG, "sizes": ["16x16"] * 9},
            {"src": PNG, "theme": "neon"},
            {"src": 42},
            "https://icons.example.com/a.png",
            None,
        ]
    )
    assert kept == [{"src": PNG, "mimeType": "image/png", "sizes": ["16x16", "any"], "theme": "dark"}]


def test_at_most_four_icons_the_first_valid_ones() -> None:
    icons = [{"src": "javascript:x"}] + [{"src": f"https://icons.example.com/{i}.png"} for i in range(6)]
    assert [i["src"] for i in safe_icons(icons)] == [f"https://icons.example.com/{i}.png" for i in range(4)]


@pytest.mark.parametrize("value", [None, {}, "https://icons.example.com/a.png", 3, [[]]])
def test_icons_that_are_not_a_list_of_objects_are_nothing(value: Any) -> None:
    assert safe_icons(value) == []


def test_tool_rows_carry_screened_icons_and_annotations() -> None:
    descriptor = {
        "name": "t",
        "inputSchema": {"type": "object"},
        "annotations": {"destructiveHint": True},
        "icons": [{"src": "http://x.example/a.png"}, {"src": PNG}],
    }
    view = tool_view("s", descriptor)
    assert view["icons"] == [{"src": PNG}]
    assert view["annotations"] == {"destructiveHint": True}
    assert "icons" not in tool_view("s", {"name": "t", "icons": [{"src": "javascript:x"}]})
    assert "icons" not in tool_view("s", {"name": "t"})


def _hit(kind: str, key: str, payload: dict[str, Any]) -> Hit:
    doc = Document(kind=kind, server="s", key=key, fields={}, exact=frozenset(), position=0, payload=payload)
    return Hit(document=doc, score=1.0)


def test_candidates_of_every_kind_carry_screened_icons_and_tools_their_annotations() -> None:
    icons = [{"src": "javascript:x"}, {"src": PNG, "theme": "light"}]
    tool = candidate(_hit("tool", "t", {"name": "t", "annotations": {"readOnlyHint": True}, "icons": icons}), {})
    assert tool["icons"] == [{"src": PNG, "theme": "light"}]
    assert tool.get("annotations") == {"readOnlyHint": True}
    for kind, key in (("resource", "r://x"), ("template", "r://{x}"), ("prompt", "p")):
        assert candidate(_hit(kind, key, {"name": "n", "icons": icons}), {}).get("icons") == [
            {"src": PNG, "theme": "light"}
        ]
        assert "icons" not in candidate(_hit(kind, key, {"name": "n", "icons": icons[:1]}), {})
    assert "annotations" not in candidate(_hit("tool", "t", {"name": "t"}), {})
