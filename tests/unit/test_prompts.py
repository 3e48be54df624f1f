"""Prompt files: header, versions, labels, compiling like Langfuse, and clear errors."""

from pathlib import Path

import pytest
from langfuse.model import TemplateParser

from evaluator.errors import LangfuseUnavailableError, PromptError, PromptVariableError
from evaluator.prompts import BUNDLED_PROMPTS, ManagedPrompts, Prompt, PromptLibrary

ROOT = Path(__file__).resolve().parents[2]


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def library(tmp_path: Path) -> PromptLibrary:
    _write(
        tmp_path,
        "agents/research/v1.prompt",
        "---\nlabels: [production]\nconfig: {temperature: 0}\n---\nAnswer {{ question }} using {{tools}}.\n",
    )
    _write(tmp_path, "agents/research/v2.prompt", "---\ncommit_message: tighter\n---\nAnswer {{question}}.\n")
    _write(
        tmp_path,
        "evaluation/quality/v1.prompt",
        "---\ntype: chat\n---\n- role: system\n  content: You judge answers.\n"
        "- role: user\n  content: 'Answer: {{answer}}'\n",
    )
    return PromptLibrary(tmp_path)


def test_names_versions_labels(library: PromptLibrary) -> None:
    assert library.names() == ["agents/research", "evaluation/quality"]
    assert library.get("agents/research").version == 1  # the production label wins over "newest"
    assert library.get("agents/research", version=2).commit_message == "tighter"
    assert library.get("evaluation/quality").version == 1  # no label: the newest
    assert library.get("agents/research").config == {"temperature": 0}


def test_compiles_like_langfuse(library: PromptLibrary) -> None:
    prompt = library.get("agents/research")
    values = {"question": "What is RAG?", "tools": "pdf_retrieval"}
    assert prompt.variables() == ["question", "tools"]
    assert prompt.compile_text(**values) == TemplateParser.compile_template(prompt.text, values)
    assert prompt.compile_text(**values) == "Answer What is RAG? using pdf_retrieval."


def test_chat_prompt_messages(library: PromptLibrary) -> None:
    messages = library.get("evaluation/quality").compile_messages(answer="42")
    assert [(m.role, m.content) for m in messages] == [
        ("system", "You judge answers."),
        ("user", "Answer: 42"),
    ]


def test_missing_variable_is_a_named_error(library: PromptLibrary) -> None:
    with pytest.raises(PromptVariableError, match="no value for tools"):
        library.get("agents/research").compile_text(question="q")


def test_unknown_name_version_label(library: PromptLibrary) -> None:
    with pytest.raises(
        PromptError, match='unknown prompt "agents/reserch" \\(did you mean "agents/research"\\?\\)'
    ):
        library.get("agents/reserch")
    with pytest.raises(PromptError, match=r"no version 7 of agents/research\. Fix: use one of 1, 2"):
        library.get("agents/research", version=7)
    with pytest.raises(PromptError, match='no version of agents/research has label "staging"'):
        library.get("agents/research", label="staging")


def test_a_pinned_version_without_its_file_names_the_file_to_add(library: PromptLibrary) -> None:
    """A version only Langfuse holds cannot be pinned: the fix names the file to add, not only the numbers."""
    with pytest.raises(
        PromptError, match=r"or add its file v3\.prompt there \(a pinned version needs its file"
    ):
        library.get("agents/research", version=3)


def test_bad_files_reported_together(tmp_path: Path) -> None:
    _write(tmp_path, "a/v1.prompt", "no header\n")
    _write(tmp_path, "b/version1.prompt", "---\n---\nx\n")
    _write(tmp_path, "c/v1.prompt", "---\nlables: [production]\n---\nx\n")
    _write(tmp_path, "d/v1.prompt", "---\ntype: chat\n---\njust text\n")
    with pytest.raises(PromptError) as info:
        PromptLibrary(tmp_path)
    text = str(info.value)
    assert "a/v1.prompt: header: no opening '---' line" in text
    assert 'b/version1.prompt: file name: "version1.prompt"' in text
    assert 'c/v1.prompt: lables: unknown key "lables" (did you mean "labels"?)' in text
    assert "d/v1.prompt: body: not a chat message list" in text
    assert len(info.value.problems) == 4


def test_a_label_on_two_versions_and_unreadable_files(tmp_path: Path) -> None:
    _write(tmp_path, "a/v1.prompt", "---\nlabels: [production]\n---\none\n")
    _write(tmp_path, "a/v2.prompt", "---\nlabels: [production]\n---\ntwo\n")
    (tmp_path / "b").mkdir()
    (tmp_path / "b/v1.prompt").write_bytes(b"---\n---\n\xff\xfe not utf-8\n")
    with pytest.raises(PromptError) as info:
        PromptLibrary(tmp_path)
    text = str(info.value)
    assert 'a/v2.prompt: labels: label "production" is on versions 1, 2 of a' in text
    assert "b/v1.prompt: cannot read the file" in text


class _CountingPattern:
    """The template pattern, counting the passes made over templates."""

    def __init__(self, pattern: object) -> None:
        self.pattern, self.passes = pattern, 0

    def __getattr__(self, name: str) -> object:
        self.passes += 1
        return getattr(self.pattern, name)


def test_a_version_is_compiled_once_not_on_every_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judge compiles its prompt for every judgement: the template is parsed the first time only,
    and each later call fills it in (the same text, edge cases included)."""
    from evaluator.prompts import model

    counting = _CountingPattern(model._VARIABLE)
    monkeypatch.setattr(model, "_VARIABLE", counting)
    _write(
        tmp_path,
        "once/v1.prompt",
        "---\nlabels: [production]\n---\n{{ a }} and {{b}}{{a}}, {{ missing }}{ {c}} {{}} end {{b\n}}",
    )
    prompt = PromptLibrary(tmp_path).get("once")
    values = {"a": "A", "b": None, "missing": "M", "": "E"}
    first = prompt.compile_text(**values)
    assert first == TemplateParser.compile_template(prompt.text, values)
    passes = counting.passes
    assert [prompt.compile_text(**values) for _ in range(3)] == [first] * 3
    assert prompt.variables() == ["a", "b", "missing", ""]
    assert counting.passes == passes  # no pass over the template after the first


def test_the_package_ships_the_judges_prompts_as_the_repository_holds_them() -> None:
    """The judges' prompts are package data: an installed package finds them with no prompts/ folder in
    the project. They are copies of prompts/evaluation/ (the demo project's), kept equal here."""
    bundled = sorted(p.relative_to(BUNDLED_PROMPTS) for p in BUNDLED_PROMPTS.rglob("*.prompt"))
    assert [str(p) for p in bundled] == [
        f"evaluation/{judge}/v1.prompt" for judge in ("agent", "correctness", "quality", "turn_quality")
    ]
    for rel in bundled:
        assert (BUNDLED_PROMPTS / rel).read_bytes() == (ROOT / "prompts" / rel).read_bytes()


def test_a_project_without_judge_prompts_gets_the_packages_and_its_own_replace_them(tmp_path: Path) -> None:
    empty = PromptLibrary(tmp_path / "prompts", defaults=BUNDLED_PROMPTS)  # a project with no prompts/ at all
    assert empty.names() == [
        "evaluation/agent",
        "evaluation/correctness",
        "evaluation/quality",
        "evaluation/turn_quality",
    ]
    assert empty.get("evaluation/quality").path == BUNDLED_PROMPTS / "evaluation/quality/v1.prompt"
    # A project's own prompt of that name replaces the package's, every version of it (no mixing of
    # the two folders' versions and labels); the other judges still come from the package.
    _write(
        tmp_path,
        "prompts/evaluation/quality/v2.prompt",
        "---\nlabels: [production]\n---\nJudge {{answer}}.\n",
    )
    _write(tmp_path, "prompts/agents/mine/v1.prompt", "---\ntype: text\n---\nAnswer {{question}}.\n")
    own = PromptLibrary(tmp_path / "prompts", defaults=BUNDLED_PROMPTS)
    assert [p.version for p in own.versions("evaluation/quality")] == [2]
    assert own.get("evaluation/quality").path == tmp_path / "prompts/evaluation/quality/v2.prompt"
    assert own.get("evaluation/correctness").path == BUNDLED_PROMPTS / "evaluation/correctness/v1.prompt"
    assert "agents/mine" in own.names()
    assert PromptLibrary(tmp_path / "prompts").names() == ["agents/mine", "evaluation/quality"]  # no defaults


def test_every_judge_prompt_of_the_repository_is_shipped_as_a_file_of_its_own() -> None:
    """Regular files, not links to prompts/evaluation/: a checkout without symbolic links (git's
    core.symlinks=false, Windows' default) holds a link as a text file naming its target, so every
    command there, and a package built or installed from it, failed on four bundled "prompts" without
    a header."""
    judges = sorted(p.relative_to(ROOT / "prompts") for p in (ROOT / "prompts/evaluation").rglob("*.prompt"))
    for rel in judges:
        shipped = BUNDLED_PROMPTS / rel
        assert not shipped.is_symlink() and shipped.is_file(), shipped
        assert shipped.read_bytes() == (ROOT / "prompts" / rel).read_bytes()


def test_a_prompt_langfuse_did_not_answer_for_comes_from_its_file_for_the_rest_of_the_run() -> None:
    """Langfuse's prompt API not answering made every scenario's target wait out the request timeout
    for each prompt again (into its own timeout): the first such failure now decides for the run. A
    refusal with a status (429, 5xx) is asked again: it is quick, and may pass."""
    library = PromptLibrary.of_project(ROOT / "prompts")
    asked: list[str] = []
    fallbacks: list[str] = []

    def fetch(local: Prompt, version: int | None, label: str | None) -> Prompt:
        asked.append(local.name)
        status = 503 if local.name == "evaluation/correctness" else None
        raise LangfuseUnavailableError(f"no prompt {local.name}", status=status, timed_out=status is None)

    prompts = ManagedPrompts(library, fetch, lambda ref, exc: fallbacks.append(ref))
    for _ in range(3):
        assert prompts.get("evaluation/quality").source == "local"
        assert prompts.get("evaluation/correctness").source == "local"

    assert asked.count("evaluation/quality") == 1 and asked.count("evaluation/correctness") == 3
    assert len(fallbacks) == 6  # each use said (the run's callback says each prompt once)
