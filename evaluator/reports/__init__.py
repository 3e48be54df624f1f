"""What users read: the console output of a run; history per prompt version, scenario or run; compare
with its regression verdict; the HTML page; JUnit XML; runs rebuilt from Langfuse scores.

Every command imports these modules (the command line registers them all at start-up), so none of them
imports the per-agent analysis or the dialogue code at import: the check of `[compare.thresholds]`, the
HTML page's dialogues and a dialogue rebuilt from Langfuse's scores import it where they use it, and a
single-turn `evaluator run` does not load it (tests/integration/test_run_imports.py)."""

from evaluator.reports._printable import printable
from evaluator.reports.agents import TraceLink, agent_tables, agents_document, trace_links
from evaluator.reports.compare import Check, check_thresholds, checks, compare_runs, threshold_problems
from evaluator.reports.compare_text import compare_markdown, figure_value, print_compare
from evaluator.reports.console import (
    ProgressLines,
    history_tables,
    notice,
    print_delivery,
    print_judges,
    print_summary,
    progress_bar,
    summary_table,
)
from evaluator.reports.history import GROUPINGS, Grouping, history, report_document
from evaluator.reports.html import html_report
from evaluator.reports.junit import junit_xml, write_junit
from evaluator.reports.noise import sign_flip_p
from evaluator.reports.remote import runs_from_scores
from evaluator.reports.runs import RunRecord, local_runs, resolve_run, stored_headers

__all__ = [
    "GROUPINGS",
    "Check",
    "Grouping",
    "ProgressLines",
    "RunRecord",
    "TraceLink",
    "agent_tables",
    "agents_document",
    "check_thresholds",
    "checks",
    "compare_markdown",
    "compare_runs",
    "figure_value",
    "history",
    "history_tables",
    "html_report",
    "junit_xml",
    "local_runs",
    "notice",
    "print_compare",
    "print_delivery",
    "print_judges",
    "print_summary",
    "printable",
    "progress_bar",
    "report_document",
    "resolve_run",
    "runs_from_scores",
    "sign_flip_p",
    "stored_headers",
    "summary_table",
    "threshold_problems",
    "trace_links",
    "write_junit",
]
