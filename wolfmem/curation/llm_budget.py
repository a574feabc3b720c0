"""The LLM budget of one curation run or one audit: how many requests and tokens it may spend.

One big episode day (a pasted chat export, an agent calling memory_log in a loop) once made a
single run send 420 requests and 2.9 M prompt tokens. A run now stops starting rounds once its
budget is spent; what it did not reach stays in the backlog (the coverage) for the next run, and
the run's record and `wolfmem status` say how much is left and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from wolfmem.config import Config


def tokens_spent(usage: Mapping[str, int]) -> int:
    """The tokens a usage record counts: its total, or prompt plus reply when no total is given."""
    return usage.get("total_tokens") or usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)


@dataclass(frozen=True)
class Budget:
    """The most LLM requests and tokens one run may spend (`curation.max_requests`, `curation.max_tokens`)."""

    requests: int
    tokens: int

    @classmethod
    def of(cls, config: Config) -> Budget:
        """The budget the settings give."""
        return cls(config.curation_max_requests, config.curation_max_tokens)

    def refusal(self, requests: int, usage: Mapping[str, int], next_requests: int) -> str | None:
        """Why a next step of `next_requests` requests may not start after `requests` and `usage`; None if it may.

        The first step always runs (nothing spent yet), so a budget below one round still makes progress.
        """
        if not requests:
            return None
        if requests + next_requests > self.requests:
            return f"the run's budget of {self.requests:,} LLM requests is spent (curation.max_requests)"
        if tokens_spent(usage) >= self.tokens:
            return f"the run's budget of {self.tokens:,} LLM tokens is spent (curation.max_tokens)"
        return None
