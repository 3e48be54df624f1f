"""Versioned prompt files (`prompts/<name>/vN.prompt`), the library of them, where prompts come from at
run time (local files or Langfuse), and `prompts push`."""

from evaluator.prompts.files import MAX_PROMPT_BYTES, parse_prompt_file
from evaluator.prompts.library import BUNDLED_PROMPTS, ManagedPrompts, PromptLibrary, PromptSource
from evaluator.prompts.model import PRODUCTION_LABEL, ChatMessage, Prompt
from evaluator.prompts.push import PromptRegistry, PushOutcome, push_prompts

__all__ = [
    "BUNDLED_PROMPTS",
    "MAX_PROMPT_BYTES",
    "PRODUCTION_LABEL",
    "ChatMessage",
    "ManagedPrompts",
    "Prompt",
    "PromptLibrary",
    "PromptRegistry",
    "PromptSource",
    "PushOutcome",
    "parse_prompt_file",
    "push_prompts",
]
