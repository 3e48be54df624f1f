"""`evaluator compare`: the verdict at and around each threshold (exit 1 only beyond it), the noise flag
on a small suite, --significant-only, and bad run names (exit 2, naming the runs that exist)."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evaluator.cli import main
from evaluator.config import load_config
from evaluator.reports import threshold_problems
from evaluator.results import builtin_metrics
from evaluator.storage import Store
from evaluator.storage import store as store_module
from tests.stored_runs import JUDGE_MODEL, config_for, result, store_run

Compare = Callable[..., tuple[int, dict[str, Any]]]


@pytest.fixture
def compare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Compare:
    """Store a baseline and a candidate run, then `evaluator compare baseline candidate --json`."""
    config = config_for(tmp_path)

    def run(baseline: list[Any], candidate: list[Any], *options: str) -> tuple[int, dict[str, Any]]:
        store = Store(tmp_path / "evaluator.db")
        store_run(store, "base", baseline, minute=0)
        store_run(store, "cand", candidate, minute=1)
        store.close()
        monkeypatch.setattr(
            sys, "argv", ["evaluator", "compare", "base", "cand", "--json", "--config", str(config), *options]
        )
        with pytest.raises(SystemExit) as info:
            main()
        (tmp_path / "evaluator.db").unlink()
        return int(info.value.code or 0), json.loads(capsys.readouterr().out)

    return run


def _cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], config: Path, *args: str
) -> tuple[int, str, str]:
    """`evaluator ARGS --config CONFIG`: exit code, stdout, stderr."""
    monkeypatch.setattr(sys, "argv", ["evaluator", *args, "--config", str(config)])
    with pytest.raises(SystemExit) as info:
        main()
    captured = capsys.readouterr()
    return int(info.value.code or 0), captured.out, captured.err


def _check(document: dict[str, Any], figure: str) -> dict[str, Any]:
    return next(c for c in document["checks"] if c["figure"] == figure)


def test_workflow_pass_rate_threshold_is_more_than_two_points(compare: Compare) -> None:
    baseline = [result(f"s{i:02}") for i in range(50)]
    at = [result(f"s{i:02}", workflow=i != 0) for i in range(50)]  # 1 of 50 fails: exactly -2 points
    beyond = [result(f"s{i:02}", workflow=i > 1) for i in range(50)]  # -4 points
    code, doc = compare(baseline, at)
    assert (code, _check(doc, "workflow_pass_rate")["change"]) == (0, -2.0)
    code, doc = compare(baseline, beyond)
    assert code == 1 and doc["regressions"] == ["workflow pass rate"]
    assert doc["scenarios"][0]["flip"] == "pass->fail"  # flips listed first
    assert [s["scenario_id"] for s in doc["scenarios"][:2]] == ["s00", "s01"]


def test_full_workflow_threshold_is_more_than_three_points(compare: Compare) -> None:
    baseline = [result(f"s{i:03}", full_workflow=True) for i in range(100)]
    at = [result(f"s{i:03}", full_workflow=i >= 3) for i in range(100)]  # -3 points
    beyond = [result(f"s{i:03}", full_workflow=i >= 4) for i in range(100)]  # -4 points
    assert compare(baseline, at)[0] == 0
    code, doc = compare(baseline, beyond)
    assert code == 1 and doc["regressions"] == ["full-workflow trajectory mean"]
    assert _check(doc, "trajectory_full_workflow")["n"] == 100


def test_quality_threshold_is_more_than_a_tenth(compare: Compare) -> None:
    baseline = [result(f"s{i:02}", quality=0.8) for i in range(12)]
    code, doc = compare(baseline, [result(f"s{i:02}", quality=0.7) for i in range(12)])
    assert (code, _check(doc, "quality_mean")["change"]) == (0, -0.1)
    code, doc = compare(baseline, [result(f"s{i:02}", quality=0.69) for i in range(12)])
    assert code == 1 and doc["regressions"] == ["mean quality"]
    code, doc = compare(baseline, [result(f"s{i:02}", quality=0.95) for i in range(12)])
    assert code == 0 and _check(doc, "quality_mean")["status"] == "ok"


def test_correctness_accuracy_threshold_is_more_than_two_points(compare: Compare) -> None:
    baseline = [result(f"s{i:02}", verdict="correct") for i in range(50)]
    at = [result(f"s{i:02}", verdict="hallucination" if i == 0 else "correct") for i in range(50)]
    beyond = [result(f"s{i:02}", verdict="miss" if i < 2 else "correct") for i in range(50)]
    assert compare(baseline, at)[0] == 0
    code, doc = compare(baseline, beyond)
    assert code == 1 and doc["regressions"] == ["correctness accuracy"]


def test_latency_threshold_is_more_than_twenty_percent_and_fifty_ms(compare: Compare) -> None:
    baseline = [result(f"s{i:02}", latency_ms=1000.0) for i in range(12)]
    assert compare(baseline, [result(f"s{i:02}", latency_ms=1200.0) for i in range(12)])[0] == 0
    code, doc = compare(baseline, [result(f"s{i:02}", latency_ms=1201.0) for i in range(12)])
    assert code == 1 and doc["regressions"] == ["mean latency"]
    fast = [result(f"s{i:02}", latency_ms=10.0) for i in range(12)]
    code, doc = compare(fast, [result(f"s{i:02}", latency_ms=50.0) for i in range(12)])  # +400 %, 40 ms
    assert code == 0 and _check(doc, "latency_ms")["change"] == 400.0


def test_a_three_scenario_suite_is_flagged_and_within_the_noise(compare: Compare) -> None:
    baseline = [result(f"s{i}") for i in range(3)]
    candidate = [result("s0", workflow=False), result("s1", workflow=False), result("s2")]
    code, doc = compare(baseline, candidate)
    assert code == 1  # the threshold decides the exit code ...
    assert doc["too_few_scenarios"] is True and doc["paired_scenarios"] == 3
    check = _check(doc, "workflow_pass_rate")
    assert check["p_value"] == 0.5 and check["beyond_noise"] is False  # ... the noise analysis informs
    assert "sign-flip" in doc["noise_test"]
    code, doc = compare(baseline, candidate, "--significant-only")
    assert code == 0 and _check(doc, "workflow_pass_rate")["status"] == "worse, within the noise"


def test_significant_only_still_fails_a_change_beyond_the_noise(compare: Compare) -> None:
    baseline = [result(f"s{i:02}") for i in range(12)]
    candidate = [result(f"s{i:02}", workflow=i >= 8) for i in range(12)]  # 8 of 12 flip: p = 2/256
    code, doc = compare(baseline, candidate, "--significant-only")
    assert code == 1 and doc["too_few_scenarios"] is False
    assert _check(doc, "workflow_pass_rate")["p_value"] == pytest.approx(0.0078, abs=1e-4)


def test_bad_run_names_are_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_for(tmp_path)
    store = Store(tmp_path / "evaluator.db")
    store_run(store, "run-a", [result("s1")], name="nightly")
    store.close()
    for args in (["nightly", "nighty"], ["previous", "latest"]):
        monkeypatch.setattr(sys, "argv", ["evaluator", "compare", *args, "--config", str(config)])
        with pytest.raises(SystemExit) as info:
            main()
        assert info.value.code == 2
    err = capsys.readouterr().err
    assert 'no run "nighty"' in err and "did you mean" in err and "nightly (run-a)" in err
    assert '"previous" needs two runs' in err


def test_markdown_fits_a_pull_request_comment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_for(tmp_path, "[compare]\nmin_scenarios = 2\n")
    store = Store(tmp_path / "evaluator.db")
    store_run(store, "a", [result("s1"), result("s2")], name="main", minute=0)
    store_run(store, "b", [result("s1", workflow=False), result("s2")], name="pr-7", minute=1)
    store.close()
    monkeypatch.setattr(
        sys, "argv", ["evaluator", "compare", "main", "pr-7", "--format", "markdown", "--config", str(config)]
    )
    with pytest.raises(SystemExit) as info:
        main()
    text = capsys.readouterr().out
    assert info.value.code == 1
    assert text.startswith("### :x: pr-7 vs main: REGRESSION (workflow pass rate)")
    assert "| workflow pass rate | 100% | 50% | -50.00 pts | -2 pts | 2 |" in text
    assert "- s1: passed -> failed (pass->fail); workflow_pass 1 -> 0" in text


def test_unknown_compare_settings_are_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_for(tmp_path, "[compare]\nquality_dorp = 0.2\n")
    monkeypatch.setattr(sys, "argv", ["evaluator", "compare", "a", "b", "--config", str(config)])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2 and "quality_dorp" in capsys.readouterr().err


def test_a_run_that_did_not_run_to_its_end_is_named_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_for(tmp_path)
    store = Store(tmp_path / "evaluator.db")
    store_run(store, "a", [result("s1"), result("s2"), result("s3")], name="main", minute=0)
    store_run(store, "b", [result("s1")], name="pr-7", minute=1, signal="SIGINT")
    store_run(store, "c", [result("s1")], name="pr-8", minute=2, finished=False)  # killed
    store_run(store, "d", [], name="pr-9", minute=3, signal="SIGINT")  # stopped before any result
    store.close()
    for args in (["compare", "main", "pr-7"], ["report", "--by", "run"], ["compare", "main", "pr-8"]):
        monkeypatch.setattr(sys, "argv", ["evaluator", *args, "--config", str(config)])
        with pytest.raises(SystemExit):
            main()
        text = " ".join(capsys.readouterr().out.split())
        if args[0] == "report":
            assert "pr-7 (b) (stopped by SIGINT)" in text and "main (a) (stopped" not in text
            assert "pr-8 (c) (not finished: killed, or still running)" in text
        else:
            stopped = "stopped by SIGINT" if args[2] == "pr-7" else "not finished: killed, or still running"
            assert f"The candidate run did not run to its end ({stopped})" in text
            assert "The baseline run did not" not in text


def test_the_last_runs_are_the_last_with_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_for(tmp_path)
    store = Store(tmp_path / "evaluator.db")
    store_run(store, "a", [result("s1")], minute=0)
    store_run(store, "b", [result("s1")], minute=1)
    store_run(store, "c", [], minute=2, signal="SIGINT")  # stopped before its first result
    store.close()
    _, out, _ = _cli(monkeypatch, capsys, config, "report", "--by", "run", "--last", "2", "--json")
    document = json.loads(out)
    assert [row["key"] for row in document["rows"]] == ["a", "b"], document


def test_a_run_id_wins_over_a_later_run_named_like_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_for(tmp_path)
    store = Store(tmp_path / "evaluator.db")
    store_run(store, "run-a", [result("s1"), result("s2")], minute=0)
    store_run(store, "run-b", [result("s1", workflow=False), result("s2", workflow=False)], minute=1)
    store_run(store, "run-c", [result("s1"), result("s2")], name="run-a", minute=2)  # named like run-a's id
    store.close()
    code, out, _ = _cli(monkeypatch, capsys, config, "compare", "run-a", "run-b", "--json")
    assert json.loads(out)["baseline"]["id"] == "run-a" and code == 1


def test_runs_with_no_scenario_in_common_are_not_compared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_for(tmp_path)
    store = Store(tmp_path / "evaluator.db")
    store_run(store, "a", [result("s1")], minute=0)
    store_run(store, "b", [result("s2", workflow=False)], minute=1)
    store.close()
    code, _, err = _cli(monkeypatch, capsys, config, "compare", "a", "b")
    assert code == 2 and "have no scenario in common: there is nothing to compare" in err


def test_report_by_prompt_with_no_prompt_used_says_where_to_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dataclasses import replace

    config = config_for(tmp_path)
    store = Store(tmp_path / "evaluator.db")
    store_run(store, "a", [replace(result("s1"), prompts={})], minute=0)
    store.close()
    text = " ".join(_cli(monkeypatch, capsys, config, "report")[1].split())
    assert "nothing to show by prompt. Fix: use --by run or --by scenario." in text, text


def test_runs_named_alike_or_the_same_run_are_told_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_for(tmp_path)
    store = Store(tmp_path / "evaluator.db")
    store_run(store, "a", [result("s1"), result("s2", agent_version=1)], name="nightly", minute=0)
    store_run(store, "b", [result("s1", agent_version=2)], name="nightly", minute=1)  # a subset, v2
    store.close()
    _, out, _ = _cli(monkeypatch, capsys, config, "compare", "a", "b", "--json")
    changes = json.loads(out)["prompt_changes"]  # over the paired scenario only: s2's v1 is not "removed"
    assert changes == [{"name": "agents/research", "baseline": [1], "candidate": [2]}]
    _, out, _ = _cli(monkeypatch, capsys, config, "compare", "a", "b")
    assert "nightly (b) vs nightly (a)" in " ".join(out.split())
    _, out, _ = _cli(monkeypatch, capsys, config, "compare", "latest", "b")
    assert "the same run: nothing can have changed" in " ".join(out.split())
    page = tmp_path / "report.html"
    _cli(monkeypatch, capsys, config, "report", "--html", str(page))
    assert "The runs ran different sets of test scenarios" in page.read_text()


def test_a_prompt_the_candidate_did_not_use_is_said_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_for(tmp_path)
    store = Store(tmp_path / "evaluator.db")
    store_run(store, "a", [result("s1")], minute=0)
    store_run(store, "b", [replace(result("s1"), prompts={})], minute=1)
    store.close()
    _, out, _ = _cli(monkeypatch, capsys, config, "compare", "a", "b")
    assert "Prompt agents/research: v1 -> not used." in " ".join(out.split())


def _judged_by(item: Any, model: str) -> Any:
    quality = item.judged["quality"]
    return replace(
        item, judged={"quality": replace(quality, judgement=replace(quality.judgement, model=model))}
    )


def test_a_change_of_judge_model_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same answers, judged by another model, or not judged at all: compare names the judge
    models, so a judged figure that moved is not read as the agents' doing."""
    config = config_for(tmp_path)
    store = Store(tmp_path / "evaluator.db")
    store_run(store, "a", [result(f"s{i}", quality=0.9) for i in range(3)], minute=0)
    store_run(store, "b", [_judged_by(result(f"s{i}", quality=0.7), "gpt-4o") for i in range(3)], minute=1)
    store_run(store, "c", [result(f"s{i}") for i in range(3)], minute=2)
    store.close()
    _, out, _ = _cli(monkeypatch, capsys, config, "compare", "a", "b", "--json")
    assert json.loads(out)["judge_models"] == {"baseline": [JUDGE_MODEL], "candidate": ["gpt-4o"]}
    _, out, _ = _cli(monkeypatch, capsys, config, "compare", "a", "b")
    assert f"Judge model: {JUDGE_MODEL} -> gpt-4o: the judged figures are not the same judge's." in " ".join(
        out.split()
    )
    _, out, _ = _cli(monkeypatch, capsys, config, "compare", "a", "c")
    assert f"Judge model: {JUDGE_MODEL} -> none (not judged)" in " ".join(out.split())
    _, out, _ = _cli(monkeypatch, capsys, config, "compare", "a", "a")
    assert "Judge model" not in out


def test_a_threshold_naming_no_gated_figure_is_bad_input_with_a_did_you_mean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo in [compare.thresholds] would leave the figure it meant on its default gate, silently."""
    config = config_for(tmp_path, "[compare.thresholds]\nworkflow_pas_rate = 7\n")
    store = Store(tmp_path / "evaluator.db")
    store_run(store, "a", [result("s1")], minute=0)
    store_run(store, "b", [result("s1")], minute=1)
    store.close()
    code, out, err = _cli(monkeypatch, capsys, config, "compare", "a", "b", "--json")
    assert code == 2 and out == "", err
    assert (
        f'{config}: compare.thresholds.workflow_pas_rate: unknown figure "workflow_pas_rate" (did you mean '
        '"workflow_pass_rate"?). Fix: name a figure compare gates: ' in " ".join(err.split())
    )


def test_threshold_keys_name_gated_figures_or_breakdowns_and_only_breakdowns_per_group(
    tmp_path: Path,
) -> None:
    thresholds = {
        "workflow_pass_rate": 4,  # gated figures, built-in, dialogue and per-agent (even where it is off)
        "latency_ms": 30,
        "dialogue_jga": 5,
        "overall_score": 8,
        "agent_tool_use_score": 6,  # a breakdown, alone or per agent (agents come from the runs)
        "agent_tool_use_score.any-agent": 7,
        "workflow_pas_rate": 1,
        "pass_rate": 1,  # a figure compare never gates
        "quality_mean.research": 1,  # a figure with no groups
        "agent_tool_use_scor.research": 1,
    }
    body = "".join(f'"{key}" = {value}\n' for key, value in thresholds.items())
    config = load_config(config_for(tmp_path, f"[compare.thresholds]\n{body}"))
    problems = {
        p.field.removeprefix("compare.thresholds."): p
        for p in threshold_problems(config, builtin_metrics(config))
    }
    assert {key: p.found for key, p in problems.items()} == {
        "workflow_pas_rate": 'unknown figure "workflow_pas_rate" (did you mean "workflow_pass_rate"?)',
        "pass_rate": '"pass_rate" is not gated: compare shows its change but never fails on it',
        "quality_mean.research": '"quality_mean" is gated as one figure for the whole run, never per group',
        "agent_tool_use_scor.research": 'unknown figure "agent_tool_use_scor" '
        '(did you mean "agent_tool_use_score"?)',
    }
    assert problems["pass_rate"].source == str(config.source)
    fix = problems["pass_rate"].fix
    assert fix.startswith("name a figure compare gates: agent_tool_use, ") and " pass_rate," not in fix
    assert "agent_tool_use_score[.<agent>]" in fix


def test_json_and_another_format_at_once_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_for(tmp_path)
    store = Store(tmp_path / "evaluator.db")
    store_run(store, "a", [result("s1")], minute=0)
    store_run(store, "b", [result("s1")], minute=1)
    store.close()
    code, out, err = _cli(monkeypatch, capsys, config, "compare", "a", "b", "--json", "--format", "markdown")
    assert code == 2 and out == "", out  # not JSON printed in silence
    assert "--json and --format markdown ask for two formats. Fix: give one of them" in err
    assert _cli(monkeypatch, capsys, config, "compare", "a", "b", "--json", "--format", "json")[0] == 0


def test_the_page_gives_no_verdict_on_runs_with_no_scenario_in_common(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`compare` refuses two runs with nothing in common (exit 2); the page's latest-against-previous
    section says the same, not a green "no regression" resting on 0 scenarios."""
    config = config_for(tmp_path)
    store = Store(tmp_path / "evaluator.db")
    store_run(store, "research", [result("s1"), result("s2")], minute=0)
    store_run(store, "concierge", [result("d1", workflow=False)], minute=1)
    store.close()
    assert _cli(monkeypatch, capsys, config, "compare", "previous", "latest")[0] == 2
    page = tmp_path / "report.html"

    _cli(monkeypatch, capsys, config, "report", "--html", str(page))

    text = " ".join(page.read_text().split())
    assert "concierge and research have no scenario in common: there is nothing to compare" in text
    assert "no regression" not in text and 'class="verdict' not in text


def test_compare_reads_the_results_of_the_two_runs_it_compares_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In a store of many runs (CI's, growing with every merge), `compare previous latest` and `run
    --baseline` decode two runs' result objects, not every run's: they find the runs by their headers."""
    config = config_for(tmp_path)
    store = Store(tmp_path / "evaluator.db")
    for minute in range(6):
        store_run(store, f"run-{minute}", [result("s1"), result("s2"), result("s3")], minute=minute)
    store.close()
    decoded: list[str] = []
    decode = store_module._json_object

    def counted(text: str | bytes | None) -> dict[str, Any] | None:
        decoded.append(str(text))
        return decode(text)

    monkeypatch.setattr(store_module, "_json_object", counted)

    code, out, _ = _cli(monkeypatch, capsys, config, "compare", "previous", "latest", "--json")

    assert code == 0
    document = json.loads(out)
    assert (document["baseline"]["id"], document["candidate"]["id"], document["paired_scenarios"]) == (
        "run-4",
        "run-5",
        3,
    )
    assert len([text for text in decoded if '"scenario_id"' in text]) == 6  # 2 runs x 3 results


def test_a_run_whose_every_result_row_is_damaged_is_no_run_to_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`latest` is the latest run with a result to show, whether compare reads two runs or all."""
    config = config_for(tmp_path)
    store = Store(tmp_path / "evaluator.db")
    for minute in range(3):
        store_run(store, f"run-{minute}", [result("s1"), result("s2")], minute=minute)
    store.close()
    with sqlite3.connect(tmp_path / "evaluator.db") as db:
        db.execute("UPDATE results SET result = substr(result, 1, 20) WHERE run_id = 'run-2'")

    code, out, err = _cli(monkeypatch, capsys, config, "compare", "previous", "latest", "--json")

    assert code == 0
    document = json.loads(out)
    assert (document["baseline"]["id"], document["candidate"]["id"]) == ("run-0", "run-1")
    assert "run run-2: the result of s1, the result of s2 are not valid JSON" in " ".join(err.split())
