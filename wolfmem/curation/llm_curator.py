"""The LLM curator: one request per curated file to any OpenAI-compatible endpoint."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from wolfmem.curation.contract import CurationRequest, FileProposal, Proposal
from wolfmem.curation.prompting import SCHEMA, build_prompt, parse_reply
from wolfmem.errors import LLMError

if TYPE_CHECKING:  # the openai client is imported only when an LLM is configured
    from wolfmem.llm.chat import LLMClient


class LLMCurator:
    """Asks an OpenAI-compatible model to curate each file, one request per file."""

    reads_episodes = True

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self.label = f"LLM curator ({client.settings.model} at {client.settings.endpoint})"

    def propose(self, request: CurationRequest) -> Proposal:
        """One request per file, so a failure or a truncation only costs that file."""
        proposal = Proposal(files={}, usage={"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0})
        started = time.monotonic()
        for rel in request.files:
            system, user = build_prompt(request, rel)
            proposal.requests += 1
            try:
                reply = self.client.complete_json(system, user, SCHEMA, "curation")
            except LLMError as exc:
                proposal.files[rel] = FileProposal("failed", error=str(exc))
                continue
            except (RecursionError, ValueError) as exc:
                # json.loads raises these, not JSONDecodeError, for absurd nesting or huge numbers.
                error = f"the model's reply is not usable JSON ({type(exc).__name__}); nothing was written"
                proposal.files[rel] = FileProposal("failed", error=error)
                continue
            for key, value in reply.usage.items():
                proposal.usage[key] = proposal.usage.get(key, 0) + value
            try:
                proposal.files[rel] = parse_reply(reply.data)
            except LLMError as exc:
                proposal.files[rel] = FileProposal("failed", error=str(exc))
        proposal.seconds = round(time.monotonic() - started, 3)
        return proposal

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()
