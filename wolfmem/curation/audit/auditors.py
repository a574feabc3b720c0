"""Auditors: what reads one curated file against the month's evidence and reports problems with it.

`Auditor` is to the audit what `Curator` is to curation: the LLM auditor asks an OpenAI-compatible
model; a test passes canned answers. Either way the answer is only a list of claims: `run` matches
them to the file's own lines and sends every proposed change through curation's landing path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from wolfmem.curation.audit import prompting
from wolfmem.curation.contract import FileInput
from wolfmem.curation.prompting import annotate
from wolfmem.errors import LLMError

if TYPE_CHECKING:  # the openai client is imported only when an LLM is configured
    from wolfmem.llm.chat import LLMClient


@dataclass(frozen=True)
class AuditAnswer:
    """An auditor's answer for one file: a summary, the claims it makes, and the tokens it cost."""

    summary: str
    items: list[prompting.AuditItem]
    usage: dict[str, int] = field(default_factory=dict)


class Auditor(Protocol):
    """Something that audits one curated file at a time; it never writes."""

    label: str

    def audit(self, item: FileInput, evidence: prompting.Evidence) -> AuditAnswer:
        """Report what is stale, over-general, contradicted or duplicated in the file."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


class LLMAuditor:
    """One request per file to an OpenAI-compatible model, with all data fenced."""

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self.label = f"LLM auditor ({client.settings.model} at {client.settings.endpoint})"

    def audit(self, item: FileInput, evidence: prompting.Evidence) -> AuditAnswer:
        """Ask the model about one file; LLMError when the reply is unusable."""
        system, user = prompting.build_prompt(item.rel, annotate(item), evidence)
        try:
            reply = self.client.complete_json(system, user, prompting.SCHEMA, "audit")
        except (RecursionError, ValueError) as exc:
            # json.loads raises these, not JSONDecodeError, for absurd nesting or huge numbers.
            raise LLMError(f"the model's audit reply is not usable JSON ({type(exc).__name__})") from None
        summary, items = prompting.parse_reply(reply.data)
        return AuditAnswer(summary, items, dict(reply.usage))

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()
