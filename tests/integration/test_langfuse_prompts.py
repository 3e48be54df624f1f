"""Prompt management against the stand-in: push is idempotent, runs link generations to versions,
and a prompt Langfuse cannot serve falls back to the local file, said and recorded."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from langfuse import Langfuse
from pydantic import SecretStr

from evaluator.langfuse import LangfuseConnection, LangfuseSettings, OwnPromptFetchLines
from evaluator.prompts import ChatMessage, ManagedPrompts, Prompt, PromptLibrary
from evaluator.run import run_suite
from tests.integration.conftest import ROOT, Cli
from tests.standin.langfuse_server import LangfuseStandIn

LOCAL_VERSIONS = {
    "agents/clarification": [1],
    "agents/concierge-action": [1],
    "agents/concierge-memory": [1],
    "agents/concierge-policy": [1, 2],
    "agents/concierge-triage": [1],
    "agents/orchestrator": [1],
    "agents/research": [1, 2],
    "evaluation/agent": [1],
    "evaluation/correctness": [1],
    "evaluation/quality": [1],
    "evaluation/turn_quality": [1],
}


def _stored(standin: LangfuseStandIn) -> dict[str, list[tuple[int, list[str]]]]:
    return {
        name: [(v.version, sorted(set(v.labels) - {"latest"})) for v in versions]
        for name, versions in standin.prompt_versions.items()
    }


def test_push_twice_creates_each_version_once(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    code, text = cli("prompts", "push")
    assert code == 0, text
    assert "13 created, 0 already in Langfuse" in text
    stored = _stored(langfuse_standin)
    assert {name: [v for v, _ in versions] for name, versions in stored.items()} == LOCAL_VERSIONS
    assert stored["agents/research"] == [(1, ["production"]), (2, ["candidate"])]
    creates = len(langfuse_standin.requests_to("/api/public/v2/prompts", "POST"))

    code, text = cli("prompts", "push")
    assert code == 0, text
    assert "0 created" in text and "unchanged  agents/research@v2" in text
    assert len(langfuse_standin.requests_to("/api/public/v2/prompts", "POST")) == creates
    assert _stored(langfuse_standin) == stored


def test_runs_link_generations_to_the_served_versions(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    assert cli("prompts", "push")[0] == 0
    code, text = cli(
        "run",
        str(ROOT / "scenarios/research"),
        "--tag",
        "pdf",
        "--prompt",
        "agents/research=2",
        "--output",
        "results.json",
    )
    assert "warning" not in text, text
    results = json.loads(Path("results.json").read_text())["results"]
    assert results
    for result in results:
        assert result["prompts"]["agents/research"] == {"version": 2, "source": "langfuse"}
        assert result["prompts"]["agents/orchestrator"] == {"version": 1, "source": "langfuse"}
        generations = [
            s
            for s in langfuse_standin.spans_for(result["trace_id"])
            if s.attributes.get("langfuse.observation.type") == "generation"
        ]
        linked = {
            (
                s.attributes.get("langfuse.observation.prompt.name"),
                s.attributes.get("langfuse.observation.prompt.version"),
            )
            for s in generations
        }
        assert ("agents/research", 2) in linked and ("agents/orchestrator", 1) in linked
    assert code == 0, text  # v2 fixes the flaw the pdf scenarios catch


def test_a_prompt_langfuse_cannot_serve_falls_back_to_the_local_file(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    code, text = cli(
        "run", str(ROOT / "scenarios/research/research-pdf-only.yaml"), "--output", "results.json"
    )
    assert "Using the local file agents/research@v1 instead" in text
    assert text.count("Using the local file agents/research@v1") == 1  # said once, not per call
    [result] = json.loads(Path("results.json").read_text())["results"]
    assert result["prompts"]["agents/research"] == {"version": 1, "source": "local"}
    generations = [
        s
        for s in langfuse_standin.spans_for(result["trace_id"])
        if s.attributes.get("langfuse.observation.type") == "generation"
    ]
    assert generations and not any("langfuse.observation.prompt.name" in s.attributes for s in generations)
    assert code == 1


def test_an_edited_pushed_version_is_a_conflict(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, tmp_path: Path
) -> None:
    assert cli("prompts", "push")[0] == 0
    prompts = tmp_path / "prompts"
    shutil.copytree(ROOT / "prompts", prompts)
    config = (
        (tmp_path / "evaluator.toml").read_text().replace(f'dir = "{ROOT / "prompts"}"', f'dir = "{prompts}"')
    )
    (tmp_path / "evaluator.toml").write_text(config)
    research_v1 = prompts / "agents/research/v1.prompt"
    research_v1.write_text(research_v1.read_text().replace("To be thorough", "To be extra thorough"))
    code, text = cli("prompts", "push")
    assert code == 2
    assert (
        "agents/research/v1.prompt: body: Langfuse's version 1 of agents/research has different content"
        in text
    )
    assert "put the change in a new v3.prompt" in text  # v2 exists already
    # A run uses Langfuse's version 1, and says the local file differs.
    code, text = cli("run", str(ROOT / "scenarios/research/research-pdf-only.yaml"))
    assert f"{research_v1} differs from version 1 of agents/research in Langfuse" in text
    assert text.count("differs from version 1 of agents/research") == 1  # said once, not per call


def test_push_from_a_folder_without_prompts_says_so_instead_of_pushing_nothing(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = with_langfuse / "elsewhere"  # a configuration whose prompts folder is not there
    elsewhere.mkdir()
    (elsewhere / "evaluator.toml").write_text('[prompts]\ndir = "prompts"\n')
    monkeypatch.chdir(elsewhere)
    code, text = cli("prompts", "push")
    assert code == 2, text
    assert f"{elsewhere / 'prompts'}: no prompt files (*.prompt) to push. Fix: run the command in" in text
    assert not langfuse_standin.prompt_versions  # nothing was pushed, and nothing said "0 created"
    assert "0 created" not in text


def test_push_without_keys_is_bad_input(demo_project: Path, cli: Cli) -> None:
    code, text = cli("prompts", "push")
    assert code == 2 and "prompts push needs Langfuse" in text


def test_the_sdks_line_on_a_prompt_it_could_not_fetch_is_left_to_the_runs_own_warning(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn
) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # with_langfuse set the stand-in's keys
    run = subprocess.run(
        [sys.executable, "-m", "evaluator", "run", str(ROOT / "scenarios/research/research-pdf-only.yaml")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert "Using the local file agents/research@v1 instead" in run.stderr, run.stdout + run.stderr
    assert "not found during refresh" not in run.stderr, run.stderr  # the SDK's, once per call


def test_a_run_from_a_script_logs_its_own_warning_and_leaves_out_the_sdks(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    """`run_suite()` from Python with no `on_notice` and no logging set up by a command: the run's
    warning is logged (`evaluator.run`); the SDK's line on each prompt it could not fetch ("not found
    during refresh", about a first fetch) is still left out."""
    with caplog.at_level(logging.WARNING):
        run_suite([str(ROOT / "scenarios/research/research-pdf-only.yaml")])
    ours = [r.getMessage() for r in caplog.records if r.name == "evaluator.run"]
    assert any("Using the local file agents/research@v1 instead" in line for line in ours), ours
    sdk = [r.getMessage() for r in caplog.records if r.name.startswith("langfuse")]
    assert not [line for line in sdk if "not found during refresh" in line], sdk


def test_a_prompt_a_target_fetches_itself_keeps_the_sdks_lines() -> None:
    record = logging.LogRecord(
        "langfuse", logging.ERROR, __file__, 0, "Error while fetching prompt '%s': %s", ("x", "404"), None
    )
    assert OwnPromptFetchLines().filter(record)  # not the evaluator's fetch: nothing else would say so


def _langfuse_prompts(standin: LangfuseStandIn) -> tuple[LangfuseConnection, Langfuse]:
    """A connection's prompt role against the stand-in, and an SDK client of the same project to put
    prompt versions there as another tool (or the UI) would."""
    public_key, secret_key = standin.new_keys()
    settings = LangfuseSettings(
        public_key=public_key, secret_key=SecretStr(secret_key), base_url=standin.base_url
    )
    connection = LangfuseConnection(settings)
    return connection, connection.tracing.client


def test_a_served_version_keeps_its_own_type_not_the_local_files(
    langfuse_standin: LangfuseStandIn,
) -> None:
    connection, client = _langfuse_prompts(langfuse_standin)
    try:
        client.create_prompt(name="agents/x", prompt="Langfuse's text {{question}}", labels=["production"])
        local = Prompt(
            name="agents/x", version=1, type="chat", messages=(ChatMessage(role="system", content="mine"),)
        )
        served = connection.prompts.fetch_prompt(local, None, None)
        assert (served.type, served.text, served.source) == (
            "text",
            "Langfuse's text {{question}}",
            "langfuse",
        )
        assert [m.content for m in served.compile_messages(question="q")] == ["Langfuse's text q"]
    finally:
        connection.shutdown(5)


def test_a_served_chat_version_the_evaluator_cannot_compile_falls_back_naming_it(
    langfuse_standin: LangfuseStandIn, tmp_path: Path
) -> None:
    connection, client = _langfuse_prompts(langfuse_standin)
    try:
        client.create_prompt(
            name="agents/x",
            type="chat",
            prompt=[
                {"role": "system", "content": "Langfuse's {{question}}"},
                {"type": "placeholder", "name": "history"},
            ],
            labels=["production"],
        )
        (tmp_path / "agents/x").mkdir(parents=True)
        (tmp_path / "agents/x/v1.prompt").write_text(
            "---\ntype: chat\n---\n- {role: system, content: mine}\n"
        )
        fallbacks: list[str] = []
        prompts = ManagedPrompts(
            PromptLibrary(tmp_path),
            connection.prompts.fetch_prompt,
            lambda ref, exc: fallbacks.append(str(exc)),
        )
        used = prompts.get("agents/x")
        assert (used.source, used.messages[0].content) == ("local", "mine")
        assert fallbacks == [
            'Langfuse prompt agents/x@v1: prompt: a placeholder message "history", which the evaluator '
            "cannot compile (only system, user and assistant messages). Fix: serve the run a version "
            "without it (pin another with --prompt, or move the label in Langfuse)"
        ]
    finally:
        connection.shutdown(5)


def test_the_fallback_warning_gives_the_fix_of_its_cause(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    assert cli("prompts", "push")[0] == 0
    langfuse_standin.fail_next(50, 503, path="/api/public/v2/prompts/agents%2Fresearch")  # the whole run
    _, text = cli("run", str(ROOT / "scenarios/research/research-pdf-only.yaml"))
    assert (
        "Langfuse did not serve prompt agents/research (label production: HTTP 503). Using the local file "
        "agents/research@v1 instead: its generations are not linked to a Langfuse prompt version (Langfuse "
        "did not serve it: check that Langfuse is up, then run again)." in " ".join(text.split())
    )
    assert "prompts push" not in text  # pushing again cannot mend a 503


def test_a_conflict_on_push_names_what_differs_and_a_fix_langfuse_takes(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, tmp_path: Path
) -> None:
    prompts = tmp_path / "prompts"
    for name in ("agents/x", "agents/y"):
        (prompts / name).mkdir(parents=True)
    (prompts / "agents/x/v1.prompt").write_text(
        "---\ntype: chat\nconfig: {temperature: 0}\n---\n- {role: system, content: hi}\n"
    )
    (prompts / "agents/y/v1.prompt").write_text("---\ntype: chat\n---\n- {role: system, content: hi}\n")
    config = (
        (tmp_path / "evaluator.toml").read_text().replace(f'dir = "{ROOT / "prompts"}"', f'dir = "{prompts}"')
    )
    (tmp_path / "evaluator.toml").write_text(config)
    client = Langfuse(
        public_key=os.environ["LANGFUSE_PUBLIC_KEY"], secret_key=os.environ["LANGFUSE_SECRET_KEY"]
    )
    client.create_prompt(
        name="agents/x",
        type="chat",
        prompt=[{"role": "system", "content": "hi"}],
        config={"temperature": 0.7},
    )
    client.create_prompt(name="agents/y", prompt="hi")  # made elsewhere as a text prompt
    code, text = cli("prompts", "push")
    assert code == 2
    text = " ".join(text.split())
    assert (
        "x/v1.prompt: config: Langfuse's version 1 of agents/x has a different config (temperature)" in text
    )
    assert (
        "y/v1.prompt: type: Langfuse's version 1 of agents/y is a text prompt, this file a chat one. "
        "Fix: Langfuse keeps one type per prompt name: write the file as type: text, or give this prompt "
        "a new name"
    ) in text
