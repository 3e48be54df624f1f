"""What users read: history per run, scenario or prompt version, and the console output."""

from evaluator.reports.console import (
    history_table,
    notice,
    print_delivery,
    print_judges,
    print_summary,
    progress_bar,
    summary_table,
)
from evaluator.reports.history import FIGURES, Grouping, Row, aggregate

__all__ = [
    "FIGURES",
    "Grouping",
    "Row",
    "aggregate",
    "history_table",
    "notice",
    "print_delivery",
    "print_judges",
    "print_summary",
    "progress_bar",
    "summary_table",
]
