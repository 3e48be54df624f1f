"""The research agent's two tools, over data shipped beside this module.

- `pdf_retrieval` searches `corpus/*.md`: short summaries of real papers standing in for a PDF library.
- `web_search` searches `web_index.json`: invented news and blog items (fictional outlets, example.com
  addresses) standing in for the web, some newer than the papers.

Search is deterministic keyword matching, so a scenario's outcome never depends on luck. A source is
relevant when at least two distinct query words (or the only one) occur in its title or keywords;
words that appear only in the body rank results but cannot make a source relevant, or a question about
the "Model Context Protocol" would match every paper that says "in-context". Relevant sources rank
by score (3 per title word, 2 per keyword word, 1 per body word), ties by source id.

Every result starts with its source id in square brackets (`[pdf:din-sql]`, `[web:...]`) so answers
can cite it; an empty search says `NO_MATCH...` so a model can tell "nothing found" from a failure.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, ConfigDict, TypeAdapter

from demo_agents.research.text import content_words, tokens

DATA_DIR = Path(__file__).parent
CORPUS_DIR = DATA_DIR / "corpus"
WEB_INDEX = DATA_DIR / "web_index.json"
NO_MATCH = "No matching"
RESULT_LIMIT = 3
_ARGUMENT_HINT = 'Invalid arguments. Call this tool with {"query": "<keywords>"}.'

_FIELD_LINE = re.compile(r"^- ([A-Za-z ]+): (.+)$")
_PAPER_FIELDS = ("Authors", "Year", "Venue", "Keywords", "Key result")


@dataclass(frozen=True, kw_only=True)
class Source:
    """One searchable item: a paper summary or a web page."""

    source_id: str
    title: str
    details: tuple[str, ...]  # "Field: value" lines shown between the title and the key result
    cite_as: str
    key_result: str
    keywords: tuple[str, ...]
    body: str

    def render(self) -> str:
        """The text a model reads: id and title, details, how to cite, the key result."""
        lines = [f"[{self.source_id}] {self.title}", *self.details, f"Cite as: {self.cite_as}"]
        return "\n".join([*lines, f"Key result: {self.key_result}"])


@dataclass(frozen=True)
class SearchIndex:
    """Sources searched by keyword, as described in the module docstring."""

    sources: tuple[Source, ...]

    def search(self, query: str, limit: int = RESULT_LIMIT) -> list[Source]:
        terms = set(content_words(query))
        needed = min(2, len(terms))
        scored = []
        for source in self.sources:
            strong, score = _score(source, terms)
            if needed and strong >= needed:
                scored.append((-score, source.source_id, source))
        return [source for _, _, source in sorted(scored)[:limit]]


def _score(source: Source, terms: set[str]) -> tuple[int, int]:
    """(query words found in title or keywords, weighted score)."""
    title = set(tokens(source.title))
    keywords = {t for k in source.keywords for t in tokens(k)}
    body = set(tokens(source.body))
    strong = terms & (title | keywords)
    score = 3 * len(terms & title) + 2 * len(terms & keywords - title) + len(terms & body - strong)
    return len(strong), score


def parse_paper(path: Path) -> Source:
    """Read one corpus file: `# Title`, then `- Field: value` lines, then `## Summary` and prose."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or not lines[0].startswith("# "):
        raise ValueError(f"{path}: the first line must be '# <title>'")
    fields = {m[1]: m[2] for line in lines if (m := _FIELD_LINE.match(line))}
    missing = [name for name in _PAPER_FIELDS if name not in fields]
    if missing:
        raise ValueError(f"{path}: missing field(s) {', '.join(missing)}")
    authors = [name.strip() for name in fields["Authors"].split(",")]
    return Source(
        source_id=f"pdf:{path.stem}",
        title=lines[0][2:].strip(),
        details=(f"Authors: {fields['Authors']}", f"Published: {fields['Year']}, {fields['Venue']}"),
        cite_as=f"{_author_short(authors)}, {fields['Year']}",
        key_result=fields["Key result"],
        keywords=tuple(k.strip() for k in fields["Keywords"].split(",")),
        body=" ".join(line for line in lines[1:] if not _FIELD_LINE.match(line)),
    )


def _author_short(authors: list[str]) -> str:
    surnames = [name.split()[-1] for name in authors]
    if len(surnames) <= 2:
        return " and ".join(surnames)
    return f"{surnames[0]} et al."


class WebItem(BaseModel):
    """One entry of `web_index.json`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    title: str
    source: str
    published: str
    url: str
    keywords: tuple[str, ...]
    key_result: str

    def to_source(self) -> Source:
        return Source(
            source_id=f"web:{self.id}",
            title=self.title,
            details=(f"Published: {self.published}, {self.source}, {self.url}",),
            cite_as=f"{self.source}, {self.published}",
            key_result=self.key_result,
            keywords=self.keywords,
            body=self.key_result,
        )


@functools.cache
def paper_library() -> SearchIndex:
    """The PDF library, read once per process."""
    return SearchIndex(tuple(parse_paper(p) for p in sorted(CORPUS_DIR.glob("*.md"))))


@functools.cache
def web_pages() -> SearchIndex:
    """The stand-in web, read once per process."""
    items = TypeAdapter(list[WebItem]).validate_json(WEB_INDEX.read_bytes())
    return SearchIndex(tuple(item.to_source() for item in items))


def library_summary() -> str:
    """One line per paper, for the research prompt's `{{library}}`: what the PDF library covers."""
    return "\n".join(f"- {s.title} ({s.cite_as})" for s in paper_library().sources)


def _render(results: list[Source], empty: str) -> str:
    return "\n\n".join(s.render() for s in results) if results else empty


def _pdf_retrieval(query: str) -> str:
    """Search the PDF library of AI research papers.

    Args:
        query: Keywords describing the papers, methods or benchmarks to find.
    """
    found = paper_library().search(query)
    return _render(found, f'{NO_MATCH} documents in the PDF library for "{query}".')


def _web_search(query: str) -> str:
    """Search the web for news, blog posts and releases, including recent ones.

    Args:
        query: Keywords describing the pages to find.
    """
    return _render(web_pages().search(query), f'{NO_MATCH} web pages for "{query}".')


def _make_tool(func: Callable[[str], str], name: str) -> BaseTool:
    # A wrong argument from a real model goes back to it as a message it can act on, not a crash.
    return StructuredTool.from_function(
        func, name=name, parse_docstring=True, handle_validation_error=_ARGUMENT_HINT
    )


pdf_retrieval = _make_tool(_pdf_retrieval, "pdf_retrieval")
web_search = _make_tool(_web_search, "web_search")
RESEARCH_TOOLS: tuple[BaseTool, ...] = (pdf_retrieval, web_search)
