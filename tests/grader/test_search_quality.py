"""``grader.search_quality``: the toy index behind lesson 05c and the fragment checks of check-server."""

from __future__ import annotations

import pytest

from grader.search_quality import (
    ELLIPSIS,
    Chunk,
    DimensionMismatch,
    Embedder,
    Hit,
    Index,
    cap_per_source,
    clean_fragment,
    cosine,
    fragment_problems,
    fragments_in,
    search_status,
    split_chunks,
)

WORDS = Embedder("words")
TRIGRAMS = Embedder("trigrams", dims=384, unit="trigram")

ARTICLES = [
    Chunk("stdio", "A stdio server is started by the client as a child process."),
    Chunk("stdio", "The client talks to a stdio server over standard input and output."),
    Chunk("stdio", "A stdio server needs no port and no address."),
    Chunk("http", "A Streamable HTTP server answers at a URL such as http://host/mcp."),
    Chunk("draft-stdio", "Draft: stdio servers, the unpublished notes."),
]
PUBLISHED = {"stdio", "http"}  # what the articles table says now


def test_the_same_text_always_gives_the_same_unit_vector() -> None:
    vector = WORDS.embed("stdio server")

    assert vector == WORDS.embed("stdio server")
    assert cosine(vector, vector) == pytest.approx(1.0)
    assert len(vector) == 256 and len(TRIGRAMS.embed("stdio server")) == 384


def test_vectors_of_two_models_cannot_be_compared() -> None:
    with pytest.raises(DimensionMismatch, match="different vector dimensions: 384 and 256"):
        cosine(TRIGRAMS.embed("stdio"), WORDS.embed("stdio"))


def test_the_search_tool_answers_statuses_never_exceptions() -> None:
    index = Index(WORDS, ARTICLES)

    assert search_status(index, "stdio server")["status"] == "ok"
    assert search_status(index, "   ")["status"] == "error"
    assert search_status(index, "quantum chromodynamics", threshold=0.2)["status"] == "not_found"
    assert search_status(index, "stdio", query_embedder=Embedder("words", available=False))["status"] == "unavailable"
    mismatch = search_status(index, "stdio", query_embedder=TRIGRAMS)
    assert mismatch["status"] == "error" and "different models" in mismatch["message"]


def test_drafts_come_back_unless_the_query_filters_on_status() -> None:
    index = Index(WORDS, ARTICLES)

    unfiltered = {h.slug for h in index.search("stdio servers unpublished notes", k=5)}
    filtered = {h.slug for h in index.search("stdio servers unpublished notes", k=5, published=PUBLISHED)}

    assert "draft-stdio" in unfiltered and "draft-stdio" not in filtered


def test_a_per_source_cap_lets_other_articles_into_the_top_k() -> None:
    index = Index(WORDS, ARTICLES)

    plain = [h.slug for h in index.search("stdio server client", k=3, published=PUBLISHED)]
    capped = [h.slug for h in index.search("stdio server client", k=3, published=PUBLISHED, per_source=2)]

    assert plain == ["stdio", "stdio", "stdio"]
    assert capped.count("stdio") == 2 and "http" in capped


def test_cap_per_source_keeps_the_order_given() -> None:
    hits = [Hit("a", 0.9, ""), Hit("a", 0.8, ""), Hit("b", 0.7, ""), Hit("a", 0.6, "")]

    assert [h.score for h in cap_per_source(hits, 1)] == [0.9, 0.7]


def test_one_threshold_means_different_things_on_two_models() -> None:
    text = "A Streamable HTTP server answers at a URL such as http://host/mcp."
    local, production = Embedder("local", dims=1024), Embedder("production", dims=112, unit="trigram")

    local_score = cosine(local.embed("volcano eruption"), local.embed(text))
    production_score = cosine(production.embed("volcano eruption"), production.embed(text))

    assert local_score < 0.1 < production_score  # 0.1, chosen on one model, lets off-topic text through on the other


def test_naive_chunks_cut_words_and_the_clean_fragment_starts_and_ends_on_word_boundaries() -> None:
    chunks = split_chunks(
        "s", "A stdio server is started by the client itself as a child process of it.", size=30, overlap=10
    )

    assert any(c.text[:1].islower() and not c.text.startswith(" ") for c in chunks)
    cleaned = clean_fragment("dio server is started by the cli")
    assert cleaned == "server is started by the" + ELLIPSIS
    assert clean_fragment(" client sends too many requests.") == "client sends too many requests."
    assert clean_fragment("x" * 40 + " rest.") == "x" * 40 + " rest."  # never more than 30 characters dropped


def test_fragment_problems_name_long_cut_and_crowded_fragments() -> None:
    structured = {
        "status": "ok",
        "fragments": [{"slug": "a", "fragment": "ut word…"}] * 3 + [{"slug": "b", "fragment": "X" * 1200 + "."}],
    }

    problems = fragment_problems(fragments_in(structured))

    assert any("over 1,000" in p for p in problems)
    assert any("start inside a word" in p for p in problems)
    assert any("a x3" in p for p in problems)
    assert fragment_problems(fragments_in({"fragments": [{"slug": "a", "fragment": "Whole sentence."}]})) == []


def test_only_lists_with_a_fragment_field_count_as_fragments() -> None:
    assert fragments_in({"orders": [{"id": "ORD-1", "status": "paid"}]}) == []
    assert fragments_in({"hits": [{"url": "u", "snippet": "Text."}]}) == [("u", "Text.")]
