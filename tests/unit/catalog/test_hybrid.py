"""Hybrid ranking: keywords fused with meaning, exact and typed queries kept on keywords, weak hits."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_sidecar.catalog import semantic
from mcp_sidecar.catalog.documents import embedding_text, tool_document
from mcp_sidecar.catalog.hybrid import SIMILARITY, search
from mcp_sidecar.catalog.index import Hit, Index

TOOLS = {
    "files": [
        ("list_directory", "Get a detailed listing of all files and directories in a specified path."),
        ("read_text_file", "Read the complete contents of a file from the file system as text."),
        ("move_file", "Move or rename files and directories."),
        ("write_file", "Create a new file or completely overwrite an existing file with new content."),
    ],
    "clock": [
        ("get_current_time", "Get the current time in a specific timezone."),
        ("convert_time", "Convert time between timezones."),
    ],
    "tracker": [
        ("create_issue", "Open a new issue in a repository's tracker."),
        ("list_issues", "List the issues of a repository, filtered by state and label."),
    ],
}


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> semantic.Model:
    loaded = semantic.load_model(tmp_path_factory.mktemp("models"))
    assert loaded is not None
    return loaded


def indexes(model: semantic.Model | None) -> list[Index]:
    out = []
    for server, specs in TOOLS.items():
        docs = [tool_document(server, {"name": n, "description": d}, i) for i, (n, d) in enumerate(specs)]
        vectors = model.embed([embedding_text(d) for d in docs]) if model is not None else None
        out.append(Index.build(server, docs, vectors))
    return out


def ids(hits: list[Hit]) -> list[str]:
    return [f"{h.document.server}.{h.document.key}" for h in hits]


def test_a_paraphrase_sharing_no_word_is_found_by_meaning(model: semantic.Model) -> None:
    hits = search(indexes(model), "what hour is it in Tokyo right now", limit=3, model=model)
    assert set(ids(hits)[:2]) == {"clock.get_current_time", "clock.convert_time"}
    assert all(h.keyword is None for h in hits[:2])  # no word of the query is in the tools' text...
    assert [h.semantic for h in hits[:2]] == [1, 2]  # ...their meaning put them first


def test_without_the_model_the_paraphrase_finds_nothing_confident() -> None:
    hits = search(indexes(None), "what hour is it in Tokyo right now", limit=3)
    assert all(h.weak for h in hits)


def test_an_exact_name_stays_first_whatever_meaning_says(model: semantic.Model) -> None:
    hits = search(indexes(model), "move_file", limit=3, model=model)
    assert ids(hits)[0] == "files.move_file"
    assert hits[0].keyword == 1
    assert not hits[0].weak


def test_a_query_being_typed_is_ranked_by_keywords_alone(model: semantic.Model) -> None:
    hits = search(indexes(model), "rea tex", limit=3, model=model)
    assert ids(hits)[0] == "files.read_text_file"
    assert all(h.semantic is None and h.similarity is None for h in hits)


def test_a_whole_word_query_uses_both_signals(model: semantic.Model) -> None:
    hits = search(indexes(model), "list the issues of my repository", limit=3, model=model)
    assert ids(hits)[0] == "tracker.list_issues"
    assert (hits[0].keyword, hits[0].semantic) == (1, 1)
    assert hits[0].similarity is not None
    assert not hits[0].weak


def test_a_need_nothing_serves_gets_no_confident_candidate(model: semantic.Model) -> None:
    for query in ("order a large pepperoni pizza", "arm the home security system", "book a flight to Oslo"):
        hits = search(indexes(model), query, limit=5, model=model)
        assert all(h.weak for h in hits), (query, ids(hits))


def test_vague_neighbours_do_not_pad_real_keyword_matches(model: semantic.Model) -> None:
    hits = search(indexes(model), "convert time between timezones", limit=8, model=model)
    assert ids(hits)[0] == "clock.convert_time"
    assert all(not (h.weak and h.keyword is None) for h in hits)


def test_ranking_is_deterministic(model: semantic.Model) -> None:
    first = search(indexes(model), "save text into a file", limit=5, model=model)
    again = search(indexes(model), "save text into a file", limit=5, model=model)
    assert [(h.score, h.keyword, h.semantic) for h in first] == [(h.score, h.keyword, h.semantic) for h in again]
    assert ids(first) == ids(again)


def test_an_index_without_vectors_falls_back_to_keywords(model: semantic.Model) -> None:
    mixed = [*indexes(model)[:2], indexes(None)[2]]
    hits = search(mixed, "list issues", limit=3, model=model)
    assert ids(hits)[0] == "tracker.list_issues"
    assert all(h.semantic is None for h in hits)


def test_the_empty_query_browses(model: semantic.Model, tmp_path: Path) -> None:
    hits = search(indexes(model), "", limit=3, model=model)
    assert ids(hits) == ["clock.get_current_time", "clock.convert_time", "files.list_directory"]


def test_a_title_equal_to_the_query_cannot_turn_meaning_off(model: semantic.Model) -> None:
    query = "what time is it in Tokyo right now"
    evil = [tool_document("evil", {"name": "x", "title": query, "description": "Anything."}, 0)]
    pool = [*indexes(model), Index.build("evil", evil, model.embed([embedding_text(d) for d in evil]))]
    hits = search(pool, query, limit=4, model=model)
    assert ids(hits)[0] == "evil.x"  # the exact boost still puts it first...
    assert any(h.semantic is not None for h in hits[1:])  # ...but the rest is read for its meaning
    assert {"clock.get_current_time", "clock.convert_time"} & set(ids(hits))


def test_a_long_message_is_ranked_not_judged(model: semantic.Model) -> None:
    message = (
        "hello there, I was wondering whether you could please help me today because my manager asked "
        "me to move the quarterly report file into the archive folder before the meeting"
    )
    hits = search(indexes(model), message, limit=5, model=model)
    assert ids(hits)[0] == "files.move_file"
    assert not any(h.weak for h in hits)
    # Entries only near in meaning must be near enough to vouch for themselves.
    assert all(h.keyword is not None or (h.similarity or 0.0) >= SIMILARITY for h in hits)


class BrokenModel:
    def embed(self, texts: list[str]) -> object:
        raise ValueError("a damaged model file")


def test_a_model_that_fails_leaves_keywords_to_rank(model: semantic.Model) -> None:
    broken = search(indexes(model), "list issues", limit=3, model=BrokenModel())
    assert ids(broken) == ids(search(indexes(model), "list issues", limit=3))
    assert all(h.semantic is None for h in broken)


TWINS = {
    server: [
        ("create_issue", "Open a new issue in the tracker."),
        ("add_comment", "Add a comment to an existing issue."),
        ("list_labels", "List the labels an issue can carry."),
    ]
    for server in ("alpha", "beta")
}


def twin_indexes(model: semantic.Model) -> list[Index]:
    out = []
    for server, specs in TWINS.items():
        docs = [tool_document(server, {"name": n, "description": d}, i) for i, (n, d) in enumerate(specs)]
        out.append(Index.build(server, docs, model.embed([embedding_text(d) for d in docs])))
    return out


def test_a_named_server_ranks_its_tools_above_its_twins(model: semantic.Model) -> None:
    # Without the name, twins tie and the server order decides: alpha first.
    assert ids(search(twin_indexes(model), "open a new issue", limit=2, model=model))[0] == "alpha.create_issue"
    hits = search(twin_indexes(model), "open a new issue in beta", limit=2, model=model, rewrite_query=True)
    assert ids(hits)[0] == "beta.create_issue"
    assert hits[0].keyword is not None  # what the whole query's ranking said of it
    assert not hits[0].weak


def test_each_action_of_a_long_request_finds_a_tool_of_the_named_server(model: semantic.Model) -> None:
    request = "in beta, open a new issue about the crash and then add a comment to it for the team"
    hits = search(twin_indexes(model), request, limit=2, model=model, rewrite_query=True)
    assert set(ids(hits)) == {"beta.create_issue", "beta.add_comment"}


def test_the_rewrite_is_off_by_default(model: semantic.Model) -> None:
    # The same request as above, without `rewrite_query`: the whole query alone, as before issue 34.
    request = "in beta, open a new issue about the crash and then add a comment to it for the team"
    plain = search(twin_indexes(model), request, limit=2, model=model)
    off = search(twin_indexes(model), request, limit=2, model=model, rewrite_query=False)
    assert [(h.score, h.weak) for h in plain] == [(h.score, h.weak) for h in off]
    assert ids(plain) == ids(off)
    assert set(ids(plain)) != {"beta.create_issue", "beta.add_comment"}


def test_a_request_naming_every_server_is_ranked_as_before(model: semantic.Model) -> None:
    # Naming them all narrows nothing: the whole query's ranking stands.
    hits = search(twin_indexes(model), "open a new issue in alpha or beta", limit=6, model=model, rewrite_query=True)
    assert ids(hits)[:2] == ["alpha.create_issue", "beta.create_issue"]
