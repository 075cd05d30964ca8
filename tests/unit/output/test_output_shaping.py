"""Output limits, JSON detection for display, images and private spill files."""

from __future__ import annotations

import base64
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.output import render, spill
from mcp_sidecar.output.limits import MAX_LINES, MAX_TEXT_BYTES, TextBudget, is_json_mime, json_display
from mcp_sidecar.output.shaping import shape_read, shape_tool_result, shape_values
from mcp_sidecar.protocol.results import ShapedToolResult, Spill


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(tmp_path))
    return tmp_path


def text_result(*texts: str, **extra: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": t} for t in texts], "isError": False, **extra}


def spill_file(shaped: ShapedToolResult) -> Spill:
    """The spill file the shaped result names; it must have been written."""
    saved = shaped["spill"]
    assert saved is not None
    return saved


# -- limits ----------------------------------------------------------------------------------


def test_text_within_the_limits_is_the_same_object() -> None:
    text = "a\n" * (MAX_LINES - 1) + "a"
    assert TextBudget().take(text) is text


@pytest.mark.parametrize(
    ("text", "lines", "size"),
    [
        ("line\n" * 2_500, MAX_LINES, MAX_LINES * 5),
        ("x" * 60_000, 1, MAX_TEXT_BYTES),
        ("é" * 40_000, 1, MAX_TEXT_BYTES),  # two bytes each: cut at a character boundary
    ],
)
def test_text_over_the_limits_is_cut_to_them(text: str, lines: int, size: int) -> None:
    budget = TextBudget()
    kept = budget.take(text)
    assert budget.cut
    assert kept.count("\n") + (0 if kept.endswith("\n") else 1) == lines
    assert len(kept.encode("utf-8")) == size
    assert text.startswith(kept)


def test_the_budget_is_shared_by_the_blocks_of_one_result() -> None:
    shaped = shape_tool_result(text_result("a" * 30_000, "b" * 30_000, "c"), "s", "s.t")
    texts = [b["text"] for b in shaped["content"]]
    assert texts[0] == "a" * 30_000
    assert texts[1] == "b" * (MAX_TEXT_BYTES - 30_000)
    assert shaped["truncated"] is True
    assert "private file" in texts[-1]
    assert len(texts) == 3  # "c" did not fit; the notice is last


# -- JSON detection --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mime", "expected"),
    [
        ("application/json", True),
        ("application/json; charset=utf-8", True),
        ("application/vnd.api+json", True),
        ("APPLICATION/LD+JSON", True),
        ("text/plain", False),
        ("application/jsonl", False),
        (None, False),
    ],
)
def test_json_mime_types(mime: str | None, expected: bool) -> None:
    assert is_json_mime(mime) is expected


@pytest.mark.parametrize(
    ("text", "mime", "expected"),
    [
        ('{"a":1}', "application/json", '{\n  "a": 1\n}'),
        ('{"a":1}', "application/vnd.x+json", '{\n  "a": 1\n}'),
        ('{"a":1}', None, '{\n  "a": 1\n}'),  # unlabelled text is checked
        ('  [1, {"b": []}]', None, '[\n  1,\n  {\n    "b": []\n  }\n]'),
        ('{"a":1}', "text/plain", None),  # another explicit type: no guessing
        ('{"a": [1, 2', "application/json", None),  # invalid or truncated stays plain
        ("42", "application/json", None),  # scalars stay plain
        ("hello", None, None),
    ],
)
def test_json_display(text: str, mime: str | None, expected: str | None) -> None:
    assert json_display(text, mime) == expected


def test_json_is_formatted_for_display_only() -> None:
    raw = json.dumps([{"id": 1}, {"id": 2}])
    shaped = shape_tool_result(text_result(raw, structuredContent={"n": 1}), "s", "s.t")
    assert shaped["content"][0]["text"] == raw  # the model text is unchanged
    assert shaped["display"] == [
        {"index": 0, "format": "json", "text": json.dumps([{"id": 1}, {"id": 2}], indent=2)},
        {"field": "structuredContent", "format": "json", "text": '{\n  "n": 1\n}'},
    ]
    assert shaped["structuredContent"] == {"n": 1}
    assert "truncated" not in shaped


def test_json_over_the_formatting_limits_stays_plain() -> None:
    raw = json.dumps([{"id": i} for i in range(1_500)])  # under 50 KiB compact, 4,500+ lines formatted
    assert len(raw) < MAX_TEXT_BYTES
    shaped = shape_tool_result(text_result(raw), "s", "s.t")
    assert "display" not in shaped


# -- images and binary -----------------------------------------------------------------------


def image(mime: str, size: int) -> dict[str, Any]:
    return {"type": "image", "data": "A" * size, "mimeType": mime}


def test_supported_images_pass_within_the_budget() -> None:
    result = {"content": [image("image/png", 4 * 1024 * 1024), image("image/jpeg", 4 * 1024 * 1024)]}
    shaped = shape_tool_result(result, "s", "s.t")
    assert [b["type"] for b in shaped["content"]] == ["image", "image"]
    assert "truncated" not in shaped


@pytest.mark.parametrize(
    ("blocks", "left_out"),
    [
        (  # over 8 MiB together
            [image("image/png", 5 * 1024 * 1024), image("image/png", 4 * 1024 * 1024)],
            "image (image/png, 4194304 base64 characters): over the image budget (8 MiB of base64 per result)",
        ),
        (
            [image("image/tiff", 10)],
            "image (image/tiff, 10 base64 characters): not a supported image type (PNG, JPEG, GIF or WebP)",
        ),
        (
            [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}],
            "audio (audio/wav, 4 base64 characters): binary content is not shown",
        ),
        (
            [{"type": "resource", "resource": {"uri": "x:y", "blob": "AAAA", "mimeType": "application/octet-stream"}}],
            "embedded resource (application/octet-stream, 4 base64 characters): binary content is not shown",
        ),
    ],
)
def test_other_or_oversized_binary_goes_to_the_spill_file(blocks: list[dict[str, Any]], left_out: str) -> None:
    shaped = shape_tool_result({"content": blocks, "isError": False}, "s", "s.t")
    assert shaped["truncated"] is True
    saved = spill_file(shaped)
    # The notice says why the content is missing, not that text limits were hit.
    assert shaped["content"][-1]["text"] == (
        f"[Content left out: {left_out}. The full result ({saved['bytes']} bytes) is in the private file "
        f"{saved['path']}]"
    )
    saved = json.loads(Path(spill_file(shaped)["path"]).read_text(encoding="utf-8"))
    assert saved["content"] == blocks


# -- spill files -----------------------------------------------------------------------------


def test_spill_files_are_private_and_hold_the_full_result(home: Path) -> None:
    big = "line of text\n" * 10_000
    result = text_result(big, structuredContent={"big": big})
    shaped = shape_tool_result(result, "srv", "srv.tool")
    path = Path(spill_file(shaped)["path"])
    assert path.parent == home / "cache" / "spill"
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text(encoding="utf-8")) == result
    assert spill_file(shaped)["bytes"] == path.stat().st_size
    assert "structuredContent" not in shaped  # too large for the result; kept in the file
    assert str(path) in shaped["content"][-1]["text"]


def test_an_existing_spill_directory_is_made_private(home: Path) -> None:
    directory = home / "cache" / "spill"
    directory.mkdir(parents=True, mode=0o755)
    os.chmod(directory, 0o755)
    spill.write("call", "x", b"data")
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700


def test_list_and_clean_with_an_age_filter(home: Path) -> None:
    old = spill.write("read", "old", b"old")
    new = spill.write_json("call", "new", {"n": 1})
    past = time.time() - 3 * 86_400
    os.utime(old.path, (past, past))
    listed = spill.list_files()
    assert {f["path"] for f in listed["files"]} == {str(old.path), str(new.path)}
    assert listed["totalBytes"] == old.bytes + new.bytes
    cleaned = spill.clean(older_than_days=2)
    assert cleaned["removed"] == [str(old.path)]
    assert cleaned["kept"] == 1
    assert spill.clean()["removed"] == [str(new.path)]
    assert spill.list_files()["files"] == []


# -- reads and completions -------------------------------------------------------------------


def test_a_single_huge_text_resource_spills_as_text() -> None:
    text = "row\n" * 3_000
    raw = {"contents": [{"uri": "data://t", "mimeType": "text/plain", "text": text}]}
    contents, display, saved, truncated, rendered = shape_read(raw, "s", "data://t", lambda: ["mcp read"])
    assert truncated
    assert saved is not None
    assert Path(saved["path"]).suffix == ".txt"
    assert Path(saved["path"]).read_text(encoding="utf-8") == text
    assert contents[0]["text"] == "row\n" * MAX_LINES
    assert display == []
    assert rendered.startswith("mcp read\n--- data://t (text/plain)\n")


def test_resource_blobs_images_pass_other_binary_spills() -> None:
    png = base64.b64encode(b"\x89PNG").decode()
    raw = {
        "contents": [
            {"uri": "data://i", "mimeType": "image/png", "blob": png},
            {"uri": "data://b", "mimeType": "application/octet-stream", "blob": "AAAA"},
        ]
    }
    contents, _, saved, truncated, _ = shape_read(raw, "s", "data://i", lambda: [])
    assert [c["uri"] for c in contents] == ["data://i"]
    assert truncated
    assert saved is not None
    assert json.loads(Path(saved["path"]).read_text(encoding="utf-8")) == raw


def test_completion_values_are_limited() -> None:
    values = [f"value-{i}" for i in range(3_000)]
    shown, saved, notice = shape_values(values, "s", "id", {"values": values})
    assert len(shown) == MAX_LINES
    assert saved is not None
    assert notice
    assert shape_values(["a", "b"], "s", "id", {})[0] == ["a", "b"]


# -- the CLI's rendering of a tool result ----------------------------------------------------

TAGS = "".join(chr(0xE0000 + ord(c)) for c in "api key sk-123")


def test_a_tool_result_says_when_hidden_characters_were_removed() -> None:
    osc8 = "\x1b]8;;https://x\x07"
    result = {
        "id": "s.t",
        "isError": False,
        "content": [
            {"type": "text", "text": f"Thanks!{TAGS}"},
            {"type": "text", "text": f"\x1b[32mok\x1b[0m \u202eabc{osc8}link"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        ],
    }
    assert render.tool_result(result).splitlines() == [
        "mcp call",
        " ✔ s.t",
        "Thanks!",
        "ok abclink",
        "[image content]",
        f"(the sidecar removed {len(TAGS) + 1 + len(osc8)} hidden characters from this server's text)",
    ]


def test_a_tool_result_with_formatting_noise_only_has_no_note() -> None:
    result = {"id": "s.t", "content": [{"type": "text", "text": "\x1b[1m10%\r50%\x1b[0m zero\u200bwidth"}]}
    assert render.tool_result(result).splitlines() == ["mcp call", " ✔ s.t", "10%", "50% zerowidth"]
