"""Run-level scores Langfuse answers 207 to, refusing them (an experiment it does not know: the run's
spans are not in), are not said to be posted: they wait in the outbox, and `sync` posts them once the
spans are in."""

from __future__ import annotations

from pathlib import Path

from tests.integration.conftest import ROOT, Cli
from tests.standin.langfuse_server import LangfuseStandIn

SUITE = str(ROOT / "scenarios/research")


def _use_dataset(project: Path) -> None:
    config = project / "evaluator.toml"
    config.write_text(config.read_text() + '\n[datasets]\nname = "research"\n')


def _run_scores(standin: LangfuseStandIn) -> list[str]:
    return sorted(s["name"] for s in standin.scores.values() if s.get("datasetRunId"))


def test_run_scores_refused_for_spans_langfuse_lacks_wait_for_sync(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    _use_dataset(with_langfuse)
    assert cli("datasets", "push", SUITE, "--tag", "smoke")[0] == 0
    langfuse_standin.fail_next(10_000, 400, path="/api/public/otel")  # the run's spans are refused
    code, out = cli("run", SUITE, "--tag", "smoke", "--run-name", "no-spans")
    assert code == 1, out
    said = " ".join(out.split())
    assert "run-level scores posted" not in said
    assert "the run-level scores of experiment 'no-spans' were not posted" in said
    assert "refused 12 of the 12 scores" in said and "not found" in said
    assert "they wait in the local outbox for `evaluator sync`" in said
    assert _run_scores(langfuse_standin) == []

    langfuse_standin.clear_faults()
    code, out = cli("sync")  # the spans first, then the run-level scores
    assert code == 0 and "Run-level scores posted to the experiments of 1 run" in out, out
    assert len(_run_scores(langfuse_standin)) == 12 and "run_pass_rate" in _run_scores(langfuse_standin)


def test_run_scores_a_207_refuses_are_not_marked_sent(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    _use_dataset(with_langfuse)
    assert cli("datasets", "push", SUITE, "--tag", "smoke")[0] == 0
    langfuse_standin.reject_scores(lambda item: item.get("name") == "run_pass_rate", "refused here")
    code, out = cli("run", SUITE, "--tag", "smoke", "--run-name", "one-refused")
    said = " ".join(out.split())
    assert code == 1 and "refused 1 of the 12 scores" in said and "refused here" in said, out
    assert "run_pass_rate" not in _run_scores(langfuse_standin)
    code, out = cli("sync")
    assert code != 0 and "refused 1 of the 12 scores" in " ".join(out.split()), out

    langfuse_standin.reject_scores(None)
    code, out = cli("sync")  # the same ids: the 11 taken are updated, not doubled
    assert code == 0 and "Run-level scores posted to the experiments of 1 run" in out, out
    assert len(_run_scores(langfuse_standin)) == 12 and "run_pass_rate" in _run_scores(langfuse_standin)
