"""The ranking index, in memory: weighted fields, prefixes, exact ids, deterministic order."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_sidecar.catalog.documents import prompt_document, resource_document, template_document, tool_document
from mcp_sidecar.catalog.index import Document, Hit, Index, parse_query, search


def tools(server: str, *specs: tuple[str, str]) -> Index:
    """An index of tools given as (name, description), in catalog order."""
    docs = [tool_document(server, {"name": n, "description": d}, i) for i, (n, d) in enumerate(specs)]
    return Index.build(server, docs)


def ids(hits: list[Hit]) -> list[str]:
    return [f"{h.document.server}.{h.document.key}" for h in hits]


def plain(kind: str, server: str, key: str, position: int, **fields: str) -> Document:
    return Document(kind, server, key, fields or {"name": key}, frozenset(), position)


WAREHOUSE = tools(
    "warehouse",
    ("list_tables", "List the tables of a schema."),
    ("list_teams", "List the teams of the organisation."),
    ("getTeamMembers", "Members of one team."),
    ("create-issue", "Open an issue in the tracker."),
    ("search_docs", "Find documents by keyword."),
    ("run_report", "Run a report; can search archived data and search old records."),
    ("echo", "Echo the given text back."),
    ("redefine", "Change echo: echo gets a new echo parameter, echo echo."),
)


def test_name_beats_description() -> None:
    hits = search([WAREHOUSE], "search ", limit=5)
    assert ids(hits) == ["warehouse.search_docs", "warehouse.run_report"]
    assert hits[0].score > hits[1].score


def test_prefix_on_the_last_word_finds_what_is_being_typed() -> None:
    assert ids(search([WAREHOUSE], "lis tab", limit=1)) == ["warehouse.list_tables"]
    assert ids(search([WAREHOUSE], "list tea", limit=1)) == ["warehouse.list_teams"]
    assert ids(search([WAREHOUSE], "tea", limit=3)) == ["warehouse.list_teams", "warehouse.getTeamMembers"]


@pytest.mark.parametrize("typed", ["q", "que", "queri", "querie", "queries", "query"])
def test_prefix_follows_every_keystroke_of_a_stemmed_word(typed: str) -> None:
    # "queries" is indexed as "query": the half-typed "queri" must still reach it.
    index = tools("s", ("run_queries", "Run saved queries."), ("ping", "Ping."))
    assert ids(search([index], f"run {typed}", limit=1)) == ["s.run_queries"]
    assert ids(search([index], typed, limit=10)) == ["s.run_queries"]


def test_a_trailing_space_ends_the_prefix() -> None:
    assert search([WAREHOUSE], "lis ", limit=5) == []
    assert parse_query("lis tab").prefix == "tab"
    assert parse_query("lis tab ").prefix is None


def test_prefix_matches_count_less_than_the_whole_word() -> None:
    index = tools("s", ("tab", "A tab."), ("table", "A table."))
    hits = search([index], "tab", limit=2)
    assert ids(hits) == ["s.tab", "s.table"]
    assert hits[0].score > hits[1].score


@pytest.mark.parametrize("query", ["list teams", "list_teams", "listTeams", "list-teams", "ListTeams "])
def test_identifier_spellings_find_each_other(query: str) -> None:
    index = tools(
        "s",
        ("listTeams", "One."),
        ("list-teams", "Two."),
        ("list_teams_v2", "Three."),
        ("get_weather", "Four."),
    )
    assert set(ids(search([index], query, limit=10))) == {"s.listTeams", "s.list-teams", "s.list_teams_v2"}


def test_identifier_splitting_on_case_changes() -> None:
    assert ids(search([WAREHOUSE], "team members ", limit=1)) == ["warehouse.getTeamMembers"]
    assert ids(search([WAREHOUSE], "create issue ", limit=1)) == ["warehouse.create-issue"]


def test_stemming_matches_plurals() -> None:
    assert ids(search([WAREHOUSE], "table ", limit=1)) == ["warehouse.list_tables"]


@pytest.mark.parametrize("query", ["echo", "ECHO", "warehouse.echo", "mcp__warehouse__echo", " warehouse.echo "])
def test_exact_name_and_ids_rank_first(query: str) -> None:
    # `redefine` mentions echo five times; the exact spelling still wins.
    hits = search([WAREHOUSE], query, limit=3)
    assert ids(hits)[0] == "warehouse.echo"


def test_exact_id_of_a_tool_that_loses_on_words() -> None:
    many = tools("s", *((f"report_{i}", "report report report") for i in range(5)), ("summary", "A report."))
    assert ids(search([many], "report ", limit=1)) != ["s.summary"]
    assert ids(search([many], "s.summary", limit=1)) == ["s.summary"]
    assert ids(search([many], "mcp__s__summary", limit=1)) == ["s.summary"]


def test_exact_id_names_the_server() -> None:
    a = tools("a", ("echo", "Echo."))
    b = tools("b", ("echo", "Echo."))
    assert ids(search([a, b], "b.echo", limit=2)) == ["b.echo", "a.echo"]
    assert ids(search([a, b], "mcp__b__echo", limit=1)) == ["b.echo"]


def test_equal_scores_order_by_server_then_catalog_position() -> None:
    zeta = tools("zeta", ("one_thing", "Same."), ("two_thing", "Same."))
    alpha = tools("alpha", ("one_thing", "Same."), ("two_thing", "Same."))
    expected = ["alpha.one_thing", "alpha.two_thing", "zeta.one_thing", "zeta.two_thing"]
    assert ids(search([zeta, alpha], "thing ", limit=10)) == expected
    assert ids(search([alpha, zeta], "thing ", limit=10)) == expected
    # The cut at `limit` keeps the same order: ties at the boundary are resolved the same way.
    assert ids(search([zeta, alpha], "thing ", limit=3)) == expected[:3]


def test_equal_scores_order_by_kind_first() -> None:
    docs = [
        plain("prompt", "s", "alpha", 0),
        plain("template", "s", "alpha", 1),
        plain("resource", "s", "alpha", 2),
        plain("tool", "s", "alpha", 3),
    ]
    index = Index.build("s", docs)
    hits = search([index], "alpha ", limit=4)
    assert [h.document.kind for h in hits] == ["tool", "resource", "template", "prompt"]
    assert len({h.score for h in hits}) == 1


def test_results_are_deterministic_across_builds() -> None:
    specs = [(f"tool_{i}", f"Do thing {i % 3} with data") for i in range(30)]
    first = search([tools("s", *specs)], "thing data", limit=10)
    second = search([tools("s", *specs)], "thing data", limit=10)
    assert [(h.document.key, h.score) for h in first] == [(h.document.key, h.score) for h in second]


def test_kinds_filter_and_every_kind_is_searchable() -> None:
    docs = [
        tool_document("w", {"name": "read_schema", "description": "Read a schema."}, 0),
        resource_document("w", {"uri": "schema://main", "name": "main schema", "description": "The schema."}, 0),
        template_document("w", {"uriTemplate": "schema://tables/{table}", "name": "table schema"}, 1),
        prompt_document("w", {"name": "explain_schema", "arguments": [{"name": "table", "required": True}]}, 0),
    ]
    index = Index.build("w", docs)
    every = search([index], "schema ", limit=10)
    assert sorted(h.document.kind for h in every) == ["prompt", "resource", "template", "tool"]
    for kinds in ({"tool"}, {"resource", "template"}, {"prompt"}):
        found = search([index], "schema ", kinds=frozenset(kinds), limit=10)
        assert {h.document.kind for h in found} == kinds
    # An exact match of a kind left out stays out.
    assert search([index], "read_schema", kinds=frozenset({"prompt"}), limit=10)[0].document.kind == "prompt"


def test_resources_match_on_uri_and_prompts_on_argument_names() -> None:
    docs = [
        resource_document("w", {"uri": "file:///srv/invoices.csv", "name": "data"}, 0),
        prompt_document("w", {"name": "explain", "arguments": [{"name": "invoice_id"}]}, 0),
        tool_document("w", {"name": "other", "description": "Nothing."}, 0),
    ]
    hits = search([Index.build("w", docs)], "invoice ", limit=10)
    assert sorted(h.document.kind for h in hits) == ["prompt", "resource"]


def test_limit_caps_the_candidates() -> None:
    index = tools("s", *((f"thing_{i}", "A thing.") for i in range(20)))
    assert len(search([index], "thing ", limit=5)) == 5
    assert len(search([index], "thing ", limit=50)) == 20
    assert len(search([index], "thing ", limit=1)) == 1


@pytest.mark.parametrize("query", ["", "   ", "--"])
def test_empty_query_browses_in_catalog_order(query: str) -> None:
    a = tools("a", ("zulu", "Z."), ("alpha", "A."))
    b = tools("b", ("mike", "M."))
    prompts = Index.build("a", [prompt_document("a", {"name": "first_prompt"}, 0)])
    hits = search([prompts, b, a], query, limit=10)
    assert ids(hits) == ["a.zulu", "a.alpha", "b.mike", "a.first_prompt"]
    assert all(h.score == 0.0 for h in hits)
    assert ids(search([prompts, b, a], query, limit=2)) == ["a.zulu", "a.alpha"]
    assert ids(search([prompts, b, a], query, kinds=frozenset({"prompt"}), limit=10)) == ["a.first_prompt"]


def test_stopwords_do_not_match_on_their_own() -> None:
    index = tools(
        "s",
        ("list_tables", "List the tables."),
        ("chatter", "This is the one that is for the use of it."),
    )
    assert ids(search([index], "show me the tables ", limit=10)) == ["s.list_tables"]
    assert ids(search([index], "how do i list the tables", limit=10)) == ["s.list_tables"]


def test_a_query_of_stopwords_only_still_searches_them() -> None:
    index = tools("s", ("to_do", "Things."), ("other", "Nothing."))
    assert ids(search([index], "to ", limit=10)) == ["s.to_do"]


def test_an_all_digit_prefix_does_not_expand() -> None:
    index = tools("s", ("build_2", "Build two."), ("build_25", "Build twenty-five."), ("build_2024", "Year."))
    assert ids(search([index], "2", limit=10)) == ["s.build_2"]
    assert ids(search([index], "build 2", limit=1)) == ["s.build_2"]
    # A word prefix does expand.
    assert set(ids(search([index], "bui", limit=10))) == {"s.build_2", "s.build_25", "s.build_2024"}


def test_statistics_span_every_server_searched() -> None:
    """Identical entries on different servers score the same, however big each catalog is."""
    crowded = tools(
        "crowded",
        ("forecast", "Weather forecast."),
        *((f"weather_{i}", "Weather data.") for i in range(30)),
    )
    lonely = tools("lonely", ("forecast", "Weather forecast."))
    hits = search([lonely, crowded], "weather forecast ", limit=2)
    assert ids(hits) == ["crowded.forecast", "lonely.forecast"]
    assert hits[0].score == pytest.approx(hits[1].score)


def test_a_rare_word_weighs_more_than_a_common_one() -> None:
    common = [(f"data_{i}", "Export data.") for i in range(10)]
    index = tools("s", *common, ("invoice_export", "Export invoices as data."))
    assert ids(search([index], "invoice data ", limit=1)) == ["s.invoice_export"]


def test_no_index_or_empty_index_finds_nothing() -> None:
    assert search([], "anything", limit=5) == []
    assert search([Index.build("s", [])], "anything", limit=5) == []
    assert search([Index.build("s", [])], "", limit=5) == []


def test_payload_is_the_descriptor() -> None:
    descriptor: dict[str, Any] = {"name": "echo", "description": "Echo.", "inputSchema": {"type": "object"}}
    [hit] = search([Index.build("s", [tool_document("s", descriptor, 0)])], "echo", limit=1)
    assert hit.document.payload is descriptor


def test_list_and_array_scoring_agree() -> None:
    """Both scoring paths must rank identically; which one runs depends only on query size."""
    import random

    from mcp_sidecar.catalog.documents import tool_document
    from mcp_sidecar.catalog.index import Index, _score_arrays, _score_lists, parse_query

    rng = random.Random(7)
    words = ["list", "get", "create", "table", "user", "team", "issue", "file", "schema", "query", "event", "page"]
    indexes = []
    for s in range(3):
        descriptors = [
            {"name": f"{rng.choice(words)}_{rng.choice(words)}_{i}", "description": " ".join(rng.choices(words, k=9))}
            for i in range(80)
        ]
        indexes.append(Index.build(f"s{s}", [tool_document(f"s{s}", d, i) for i, d in enumerate(descriptors)]))
    avg = sum(ix.total_length for ix in indexes) / sum(len(ix.documents) for ix in indexes)
    for text in ["list teams", "creat", "schema query event", "s1.get_user_3"]:
        query = parse_query(text)
        groups = [[(query.words[0], 1.3)]] if query.words else [[(query.prefix or "", 1.0)]]
        for ix in indexes:
            a = [(round(h.score, 9), h.document.key) for h in _score_lists(ix, groups, avg, query.exact, None, 5)]
            b = [(round(h.score, 9), h.document.key) for h in _score_arrays(ix, groups, avg, query.exact, None, 5)]
            assert sorted(a) == sorted(b)
