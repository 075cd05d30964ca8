from __future__ import annotations

import pytest

from mcp_sidecar.catalog.tokens import STOPWORDS, stem, terms, tokenize


@pytest.mark.parametrize("spelling", ["list_teams", "listTeams", "list-teams", "ListTeams", "LIST_TEAMS", "list teams"])
def test_identifier_spellings_split_alike(spelling: str) -> None:
    assert tokenize(spelling) == ["list", "teams"]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("HTTPServer", ["http", "server"]),
        ("getHTTPResponse", ["get", "http", "response"]),
        ("parseJSON", ["parse", "json"]),
        ("v2api", ["v", "2", "api"]),
        ("s3_bucket_list", ["s", "3", "bucket", "list"]),
        ("server.tool", ["server", "tool"]),
        ("mcp__github__create_issue", ["mcp", "github", "create", "issue"]),
        ("notes://{folder}/{name}", ["notes", "folder", "name"]),
        ("", []),
        ("  --  ", []),
    ],
)
def test_tokenize_splits_case_digits_and_punctuation(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_non_ascii_words_stay_whole_and_lowercase() -> None:
    assert tokenize("Données_Élève") == ["données", "élève"]


@pytest.mark.parametrize(
    ("word", "stemmed"),
    [
        ("tables", "table"),
        ("teams", "team"),
        ("queries", "query"),
        ("boxes", "box"),
        ("branches", "branch"),
        ("listing", "list"),
        ("status", "status"),
        ("class", "class"),
        ("analysis", "analysis"),
        ("ids", "ids"),  # three letters or fewer stay as they are
        ("v2s", "v2s"),  # only alphabetic words are stemmed
    ],
)
def test_stem_is_light(word: str, stemmed: str) -> None:
    assert stem(word) == stemmed


def test_terms_are_stemmed_tokens() -> None:
    assert terms("listTables") == ["list", "table"]
    assert terms("list_tables") == terms("List tables") == terms("list-table")


def test_stopwords_are_lowercase_function_words() -> None:
    assert {"the", "a", "to", "of", "please"} <= STOPWORDS
    assert "show" not in STOPWORDS  # tools are named and described with it: git_show, "Shows the ..."
    assert not {"list", "table", "search", "get"} & STOPWORDS
    assert all(word == word.lower() for word in STOPWORDS)
