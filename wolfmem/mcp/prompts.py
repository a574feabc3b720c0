"""Prompts a client offers as commands: "remember this", "recall" and "wrap up the session".

Each one asks the model to use the tools the way the doctrine says, for one common moment of a
conversation, and ends with the doctrine itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from wolfmem import limits
from wolfmem.errors import UsageError
from wolfmem.tools.catalog import DOCTRINE


@dataclass(frozen=True)
class Argument:
    """One argument a person fills in when choosing the prompt."""

    name: str
    description: str
    required: bool


@dataclass(frozen=True)
class Prompt:
    """A prompt: its name and manual, its arguments, and the request it sends to the model."""

    name: str
    title: str
    description: str
    arguments: tuple[Argument, ...]
    request: str  # what to do; the argument's value is quoted after it
    quoted: str  # how the argument's value is introduced

    def render(self, values: Mapping[str, str]) -> str:
        """The user message this prompt sends, or a UsageError naming what to fix in `values`."""
        known = {argument.name for argument in self.arguments}
        extra = sorted(set(values) - known)
        if extra:
            raise UsageError(f"prompt {self.name} takes {', '.join(sorted(known))}, not {', '.join(extra)}")
        parts = [self.request]
        for argument in self.arguments:
            value = (values.get(argument.name) or "").strip()
            if not value and argument.required:
                raise UsageError(f"prompt {self.name} needs {argument.name}: {argument.description}")
            limits.PROMPT_ARGUMENT.check(value, argument.name)
            if value:
                parts.append(f"{self.quoted}\n{value}")
        parts.append(f"How to use memory: {DOCTRINE}")
        return "\n\n".join(parts)


PROMPTS: tuple[Prompt, ...] = (
    Prompt(
        name="remember",
        title="Remember this",
        description="Save what you just said to long-term memory, one fact per memory_save call.",
        arguments=(Argument("what", "What to remember (default: what you just said).", required=False),),
        request=(
            "Remember what I just told you. Save it with memory_save, one self-contained sentence per call "
            "that names its subject (not 'he' or 'this repo'), with its type (people, projects, preferences, "
            "technical or decisions) and a topic where there is one; several facts take several calls. Leave "
            "out secrets (save where they live instead) and what we are doing right now. If a reply says a "
            "fact may contradict an older one, tell me. Then list what you saved."
        ),
        quoted="What to remember:",
    ),
    Prompt(
        name="recall",
        title="Recall",
        description="Search long-term memory before answering a question.",
        arguments=(Argument("question", "What you want to know, e.g. 'Who reviews the billing code?'",
                            required=True),),
        request=(
            "Before you answer, search long-term memory with memory_search, using 2-3 phrasings (a synonym, "
            "a name, a broader topic) or all of them at once with queries. When a one-line hit needs context, "
            "read it with memory_get. Answer from what you find and cite the refs; if nothing is recorded, "
            "say so instead of guessing."
        ),
        quoted="The question:",
    ),
    Prompt(
        name="wrap_up",
        title="Wrap up the session",
        description="Log this session as an episode and save the durable facts it taught.",
        arguments=(Argument("focus", "Anything the summary should cover, e.g. 'the deploy'.", required=False),),
        request=(
            "Wrap up this session. First log it with memory_log: a short headline and a few bullet lines, "
            "covering what was done, the outcomes and the open threads. Then save each durable fact this "
            "session taught with memory_save, one self-contained sentence per call, with its type and topic; "
            "skip facts already on file, secrets and transient task state. Then tell me what you logged and "
            "saved."
        ),
        quoted="Make sure to cover:",
    ),
)

BY_NAME: dict[str, Prompt] = {prompt.name: prompt for prompt in PROMPTS}
