"""What backs an audit finding: text wolfmem withheld (a ref outside the vault, a secret, an instruction) backs nothing.

The audit quotes the model's reasons and evidence through the untrusted-text rules, and withholds a
ref that leaves the vault. A withheld reason or ref is not evidence of anything, so a finding that
would change a file on nothing else is refused, and the line it names stays as it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from wolfmem.core.untrusted import WITHHELD_INSTRUCTION, WITHHELD_SECRET

WITHHELD_REF = "[a ref outside the vault, withheld]"
_WITHHELD = frozenset({WITHHELD_REF, WITHHELD_SECRET, WITHHELD_INSTRUCTION})


def unsupported(reason: str, evidence: Sequence[str]) -> str | None:
    """Why a finding has no support once its withheld reason and evidence are set aside; None when it has some.

    Both are as the audit quotes them. Evidence, when the model gave any, is what must back the
    change; a reason alone backs it only when it was not withheld.
    """
    kept = [item for item in evidence if item not in _WITHHELD]
    if evidence and not kept:
        return "all its evidence was withheld (a ref outside the vault, a secret or an instruction); it backs nothing"
    if reason in _WITHHELD and not kept:
        return "its reason was withheld (it reads like an instruction or holds a secret); it backs nothing"
    return None
