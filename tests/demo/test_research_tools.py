"""The research tools, their corpus and the stand-in web index."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from demo_agents.research.text import content_words, tokens
from demo_agents.research.tools import (
    NO_MATCH,
    SearchIndex,
    Source,
    library_summary,
    paper_library,
    parse_paper,
    pdf_retrieval,
    web_pages,
    web_search,
)


def _ids(index: SearchIndex, query: str) -> list[str]:
    return [s.source_id for s in index.search(query)]


def test_corpus_holds_eight_complete_paper_summaries() -> None:
    papers = paper_library().sources

    assert len(papers) == 8
    assert len({p.source_id for p in papers}) == 8
    for paper in papers:
        assert paper.source_id.startswith("pdf:") and paper.title and paper.key_result
        assert paper.keywords and paper.body
        assert paper.details[0].startswith("Authors: ") and paper.details[1].startswith("Published: ")
    din_sql = next(p for p in papers if p.source_id == "pdf:din-sql")
    assert din_sql.cite_as == "Pourreza and Rafiei, 2023"
    assert "85.3%" in din_sql.key_result


def test_web_index_is_invented_and_says_so() -> None:
    pages = web_pages().sources

    assert len(pages) >= 6
    for page in pages:
        assert page.source_id.startswith("web:")
        assert "(fictional)" in page.cite_as
        assert ".example." in page.details[0]  # reserved example domains, never a real site


def test_library_summary_lists_every_paper_once() -> None:
    lines = library_summary().splitlines()
    assert len(lines) == 8
    din_sql = "- DIN-SQL: Decomposed In-Context Learning of Text-to-SQL with Self-Correction"
    assert f"{din_sql} (Pourreza and Rafiei, 2023)" in lines


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("state art text sql spider benchmark", ["pdf:din-sql", "pdf:spider", "pdf:bird"]),
        ("evaluate rag pipeline without reference answers", ["pdf:ragas"]),
        ("execution accuracy chatgpt bird", ["pdf:bird"]),
        ("llm judges human preferences", ["pdf:llm-judge"]),
        ("rag", ["pdf:rag", "pdf:ragas"]),  # one query word: one strong hit is enough
        # "context" is in DIN-SQL's title ("In-Context"), but one strong word of three is not enough.
        ("model context protocol", []),
        ("find good papers project", []),
    ],
)
def test_pdf_search_ranks_sources_with_strong_matches(query: str, expected: list[str]) -> None:
    assert _ids(paper_library(), query) == expected


def test_web_search_finds_news_and_the_fallback_topic() -> None:
    assert _ids(web_pages(), "latest news text sql leaderboards") == [
        "web:text-to-sql-leaderboards-2025",
        "web:spider-2-enterprise",
    ]
    assert _ids(web_pages(), "model context protocol") == ["web:model-context-protocol"]


def test_body_words_rank_but_cannot_make_a_source_relevant() -> None:
    quiet = Source(
        source_id="pdf:quiet",
        title="Nothing here",
        details=(),
        cite_as="A, 2020",
        key_result="k",
        keywords=("unrelated",),
        body="spider benchmark text sql",
    )
    assert SearchIndex((quiet,)).search("spider benchmark text sql") == []


def test_tools_render_source_ids_and_say_when_nothing_matched() -> None:
    found = pdf_retrieval.invoke({"query": "DIN-SQL Spider"})
    nothing = web_search.invoke({"query": "sourdough starter"})

    assert found.startswith("[pdf:din-sql] DIN-SQL: Decomposed")
    assert "Cite as: Pourreza and Rafiei, 2023" in found
    assert "Key result: DIN-SQL with GPT-4 reached 85.3%" in found
    assert nothing == f'{NO_MATCH} web pages for "sourdough starter".'
    assert pdf_retrieval.invoke({"query": "sourdough"}).startswith(NO_MATCH)


def test_tool_schemas_take_one_described_query() -> None:
    for tool in (pdf_retrieval, web_search):
        schema = convert_to_openai_tool(tool)["function"]
        assert schema["parameters"]["required"] == ["query"]
        assert schema["parameters"]["properties"]["query"]["description"]
        assert "Args:" not in schema["description"]


def test_a_tool_call_with_wrong_arguments_returns_a_hint() -> None:
    call = {"name": "pdf_retrieval", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}
    reply = pdf_retrieval.invoke(call)

    assert isinstance(reply, ToolMessage) and reply.tool_call_id == "c1"
    assert '{"query": "<keywords>"}' in str(reply.content)


def test_parse_paper_names_the_file_and_missing_fields(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_text("# A title\n\n- Authors: A\n- Year: 2020\n", encoding="utf-8")
    untitled = tmp_path / "untitled.md"
    untitled.write_text("no title\n", encoding="utf-8")

    with pytest.raises(ValueError, match=r"bad\.md: missing field\(s\) Venue, Keywords, Key result"):
        parse_paper(bad)
    with pytest.raises(ValueError, match=r"untitled\.md: the first line must be"):
        parse_paper(untitled)


def test_text_tokens_and_content_words() -> None:
    assert tokens("Text-to-SQL reached 85.3% (GPT-4)") == [
        "text",
        "to",
        "sql",
        "reached",
        "85.3%",
        "gpt",
        "4",
    ]
    assert content_words("Can you tell me about it?") == []
    assert content_words("What is RAG? RAG!") == ["rag"]
