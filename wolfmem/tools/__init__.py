"""The agent tools: one table (catalog) feeds MCP and OpenAI function calling; dispatch runs a call.

The public face for a caller's own agent loop (README: OpenAI function calling):
`from wolfmem.tools import call, openai_tools`.
"""

from wolfmem.tools.catalog import DOCTRINE
from wolfmem.tools.dispatch import BY_NAME, TOOLS, call, execute, openai_tools

__all__ = ["BY_NAME", "DOCTRINE", "TOOLS", "call", "execute", "openai_tools"]
