"""Dataset item ids (evaluator/langfuse/datasets.py): readable, at most 255 characters, one per scenario."""

from __future__ import annotations

from evaluator.langfuse.datasets import item_id


def test_an_item_id_within_the_limit_is_the_dataset_and_the_scenario_id() -> None:
    assert item_id("research", "research-pdf-only") == "research--research-pdf-only"
    assert item_id("team/research ü", "a.b_c") == "team-research-ü--a.b_c"


def test_long_scenario_ids_that_differ_past_the_cut_are_distinct_items() -> None:
    long = "research-" + "x" * 250
    first, second = item_id("research", long + "a"), item_id("research", long + "b")
    assert first != second and len(first) == len(second) == 255
    assert first.startswith("research--research-xxx")
    assert item_id("research", long + "a") == first  # stable: pushing again finds it
    assert item_id("other", long + "a") != first
