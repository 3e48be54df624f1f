"""Text from the runs in `report` and `compare`'s terminal views (reports/_printable.py): shown as written,
never taken for rich's markup (an agent named `tools[search]` kept whole, one named `x[/b]` no crash),
and its control characters as their escapes (a terminal would obey them)."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from evaluator.config import load_config
from evaluator.reports import (
    agent_tables,
    agents_document,
    compare_runs,
    history,
    history_tables,
    print_compare,
)
from evaluator.reports._printable import printable
from evaluator.reports.runs import RunRecord
from evaluator.results import builtin_metrics

AGENT = "tools[search] x[/b] \x1b[2J"  # brackets rich would read as markup; ESC that clears the screen
RUN_NAME = "nightly \x1b]0;title\x07"  # sets the terminal window's title


def _result(score: float) -> dict[str, Any]:
    issue = {"kind": "tool_error", "severity": "medium", "tool": "t", "message": "failed: \x1b[31mred\x1b[0m"}
    entry = {"tool_calls": 2, "issues": [issue] if score < 1 else [], "tool_use_score": score, "score": score}
    return {
        "scenario_id": "s1",
        "trace_id": "trace-1",
        "status": "passed",
        "workflow": {"pass": True},
        "per_agent": {"agents": {AGENT: entry}, "tool_calls": 2, "tool_use_score": score, "issues": 0},
        "prompts": {"agents/x": {"version": 1, "source": "local"}},
    }


def _runs() -> tuple[RunRecord, RunRecord]:
    return (
        RunRecord(id="run-1", name=RUN_NAME, started_at="2026-11-22T10:00:00Z", results=(_result(1.0),)),
        RunRecord(id="run-2", name="candidate", started_at="2026-11-22T11:00:00Z", results=(_result(0.5),)),
    )


def _shown(*renderables: Any) -> str:
    console = Console(record=True, width=400, force_terminal=False)
    for renderable in renderables:
        console.print(renderable)
    return console.export_text()


def test_printable_writes_control_characters_as_escapes_and_keeps_newlines_and_tabs() -> None:
    assert printable("a\x1b[31mb\x00\x07\x9b\tc\nd") == "a\\x1b[31mb\\x00\\x07\\x9b\tc\nd"


def test_printable_writes_characters_that_reorder_or_hide_text_as_escapes() -> None:
    """Bidirectional overrides and isolates (shown as is, `abc\u202edcba` reads `abcabcd`), zero-width
    and byte order marks, the tag characters that spell hidden text, line and paragraph separators."""
    hiding = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\ufeff\u2060\xad"
    assert printable(f"a{hiding}b") == "a" + hiding.encode("unicode_escape").decode() + "b"
    assert printable("abc\u202edcba") == "abc\\u202edcba"
    assert printable("ok\U000e0069\U000e0067") == "ok\\U000e0069\\U000e0067"  # tags: "ig", unseen
    assert printable("one\u2028two\u2029") == "one\\u2028two\\u2029"


def test_printable_keeps_other_text_as_written_joiners_too() -> None:
    """Accents, CJK, emoji and a no-break space as written; so are the zero-width joiner and non-joiner
    (format characters too), which move nothing: they join an emoji family and spell Persian words."""
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # "I want", its two parts kept apart
    for text in ("café naïve", "日本語の回答", "👍🏽 🇫🇷", "👩\u200d👩\u200d👧", persian, "10\xa0€"):
        assert printable(text) == text


def test_compare_shows_an_agent_named_with_brackets_and_control_characters() -> None:
    config = load_config(None)
    metrics = builtin_metrics(config)
    base, cand = _runs()
    document = compare_runs(base, cand, config.settings.compare, metrics=metrics)
    console = Console(record=True, width=400, force_terminal=False)

    print_compare(console, document, metrics)  # raised rich's MarkupError on "[/b]"
    text = console.export_text()

    assert f"{printable(AGENT)}: tool use" in text
    assert printable(RUN_NAME) in text
    assert "\x1b" not in text and "\x07" not in text


def test_report_tables_show_names_and_messages_as_written() -> None:
    runs = _runs()
    metrics = builtin_metrics(load_config(None))

    text = _shown(
        *agent_tables(agents_document(runs, "local", None)), *history_tables(history(runs, "run", metrics))
    )

    assert printable(AGENT) in text  # the agent row and its issue
    assert "failed: \\x1b[31mred\\x1b[0m" in text
    assert printable(RUN_NAME) in text  # the run's row
    assert "\x1b" not in text and "\x07" not in text


def test_an_agent_table_titled_by_a_prompt_name_with_brackets_and_control_characters() -> None:
    """The title names the agent prompt version, whose name comes from the runs (Langfuse's scores with
    --source langfuse): `x[/b]` raised MarkupError, an ESC went to the terminal."""
    result = {**_result(1.0), "prompts": {"agents/x[/b] \x1b[2J": {"version": 3, "source": "langfuse"}}}
    runs = (RunRecord(id="run-1", name="n", started_at="2026-11-22T10:00:00Z", results=(result,)),)

    text = _shown(*agent_tables(agents_document(runs, "langfuse", None)))

    assert "Agents with agents/x[/b] \\x1b[2J@v3" in text and "\x1b" not in text


def test_report_shows_a_run_name_that_would_reorder_its_row_escaped() -> None:
    """A right-to-left override in a run's name would show the rest of the row reversed."""
    name = "nightly \u202e2v-tpmorp"  # reads "nightly prompt-v2" where the override is obeyed
    runs = (RunRecord(id="run-1", name=name, started_at="2026-11-22T10:00:00Z", results=(_result(1.0),)),)

    text = _shown(*history_tables(history(runs, "run", builtin_metrics(load_config(None)))))

    assert "nightly \\u202e2v-tpmorp" in text and "\u202e" not in text


def test_a_lone_surrogate_is_written_as_its_escape_and_the_row_prints() -> None:
    """JSON's `"\\ud800"` (in a trace, a run file) reads as a lone surrogate: writing it to a terminal or
    a UTF-8 file raised UnicodeEncodeError, and the command ended in a traceback."""
    assert printable("a\ud800b\udfff") == "a\\ud800b\\udfff"
    runs = (
        RunRecord(
            id="run-1", name="nightly \ud800", started_at="2026-11-22T10:00:00Z", results=(_result(1.0),)
        ),
    )
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # strict, as a terminal's or a file's
    console = Console(file=out, width=400, force_terminal=False)

    for table in history_tables(history(runs, "run", builtin_metrics(load_config(None)))):
        console.print(table)
    out.flush()

    assert "nightly \\ud800" in out.buffer.getvalue().decode()


def test_variation_selectors_that_carry_hidden_bytes_are_written_as_escapes() -> None:
    """Variation selectors 17 to 256 after a visible character show as nothing and can carry bytes (a
    message hidden in a name); the first 16 choose how an emoji or a character shows, and stay."""
    assert printable("ok\U000e0100\U000e01ef") == "ok\\U000e0100\\U000e01ef"
    assert printable("\u2764\ufe0f \u2603\ufe0e") == "\u2764\ufe0f \u2603\ufe0e"
