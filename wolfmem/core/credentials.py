"""The one secret detector, shared by saving and curation.

`find_secret(text)` checks, in order:

1. `PATTERNS`: provider key formats (OpenAI, AWS, GitHub, Slack, Stripe, Google,
   JWT, PEM private keys) and URLs with `user:password@` credentials.
2. Assignments such as `password: hunter2` or `api_key=...`, unless the value
   is a placeholder (`${DB_PASSWORD}`, `<redacted>`, `***`), an env-var name
   (`DB_PASSWORD`), a path, or an ordinary word ("password: stored in Vault").
3. The high-entropy rule for keys no pattern knows: a run of at least 32
   characters from `[A-Za-z0-9+/_=-]` that mixes at least two of
   lower/upper/digit, has Shannon entropy of at least 4.0 bits per character
   (3.0 for hex), and does not read like words ("src/components/UserSettings",
   "internationalization-support").  UUIDs and hex strings of up to 40
   characters (MD5, git SHA-1) are *not* flagged: they are identifiers people
   legitimately note down.  Longer hex (e.g. 64-char) is flagged, since
   hex-encoded signing keys look exactly like that, except after a digest
   prefix (`sha256:…`, a Docker digest or SSH fingerprint).  Runs in the host
   or path of an http(s) URL are ids (a Google Doc, a video), not keys; its
   query string is still checked, and webhook URLs (Slack, Discord) have
   their own patterns.

Every check runs on the text as written and again with its invisible characters removed
(`visible_text`: format characters such as U+200B, U+2060 or a soft hyphen, and the
variation selectors), so a key split by a zero-width space is still found.

Mentioning where a secret lives ("the Stripe key is in 1Password",
"OPENAI_API_KEY env var", "sk-learn") is never flagged.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter

# (human name, pattern).  Order matters only for which name is reported. Every pattern starts only where
# a bounded look decides it (a prefix, a bounded run): text of 1 MB is read in one pass, not once per word.
PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("PEM private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    # A key holds a digit (`_NEEDS_DIGIT`), so "sk-learn-style-pipelines-for-tabular-data" passes.
    ("OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("GitHub token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}")),
    ("GitHub token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}")),
    ("Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("Stripe key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("JWT", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    # A webhook URL is its own credential: whoever has it can post.
    ("Slack webhook URL", re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}")),
    ("Discord webhook URL", re.compile(r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}")),
    ("connection string with a password",
     re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,30}://[^\s:/@]*:(?P<value>[^\s/@]+)@[^\s/@]")),
]
# Checked on the match, not by a lookahead: a lookahead over the rest of the run, from every "sk-" in a
# run of them, read the run once per "sk-".
_NEEDS_DIGIT = frozenset({"OpenAI API key"})

# `password: x`, `api_key = "x"`, `"token": "x"`, `DB_PASSWORD=x`, `?token=x`.
# The key starts a word or ends an identifier ("DB_PASSWORD"): a look at the two characters before it,
# where `\b(?:[a-z0-9]+[_-])*` re-read a whole run such as "a-a-a-…" from each of its words.
_ASSIGNMENT = re.compile(
    r"(?i)(?:\b|(?<=[a-z0-9][_-]))"
    r"(?P<key>password|passwd|pwd|passphrase|secret|api[_-]?key|apikey|token)"
    r"\b[\"']?\s*(?::=|[:=])\s*(?P<value>\"[^\"]*\"|'[^']*'|[^\s,;]+)"
)
_PASSWORD_KEYS = {"password", "passwd", "pwd", "passphrase"}
# "the wifi password is hunter2" — only a lone final value that is not a word.
_PASSWORD_IS = re.compile(
    r"(?i)\b(?:password|passwd|passphrase)\s+(?:is|was)\s+"
    r"[\"'`]?(?P<value>[^\s\"'`]+?)[\"'`]?[.!]?\s*$"
)

_PLACEHOLDER = re.compile(
    r"""^(?:
        \$\{.*\}|\$\(.*\)|\$[A-Za-z_]\w*|%[A-Za-z_]\w*%|\{\{.*\}\}|<.*>|\[.*\]
        |[*x•.]{3,}|(?i:redacted|hidden|removed|none|null|nil|empty|unset|required
        |optional|todo|tbd|n/?a|example|placeholder|changeme|your[\w-]*)
    )$""",
    re.VERBOSE,
)
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_PATH = re.compile(r"^(?:~|\.{0,2})/")
# Where a secret lives, or words that start a sentence about it, not a value.
_REFERENCE_WORDS = frozenset(
    """in is are was stored kept saved lives lived managed see from via using at on
    the a an our my your their env environment vault 1password bitwarden lastpass
    keepass keychain rotated rotation monthly weekly daily set configured
    true false yes no""".split()
)

_CANDIDATE = re.compile(r"[A-Za-z0-9+/_=-]{32,}")
# A digest or fingerprint names public content ("sha256:4d5e…", "SHA256:nThbg6…"), it unlocks nothing.
_DIGEST_PREFIX = re.compile(r"(?i)\b(?:sha(?:1|224|256|384|512)|md5|blake2b?)[:=-]$")
_DIGEST_LOOKBACK = 20  # the longest prefix ("blake2b:") and the character before it, with room
# The path of a web URL: document and video ids live there; query strings (?sig=…) do not count.
_URL_PATH = re.compile(r"\bhttps?://[^\s/?#]+(?P<path>/[^\s?#]*)")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
# Pieces of an identifier: camelCase words, lowercase runs, digit runs.
_PIECE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_MIN_ENTROPY = 4.0
_MIN_HEX_ENTROPY = 3.0
_MAX_PLAIN_HEX = 40


def _unquote(value: str) -> str:
    """Drop matching quotes and trailing sentence punctuation around a value."""
    value = value.rstrip(".!?)")
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        value = value[1:-1]
    return value.strip()


def _is_placeholder(value: str) -> bool:
    """Whether a value stands in for a secret (`${DB_PASSWORD}`, `<redacted>`, `DB_PASS`)."""
    value = _unquote(value)
    return bool(_PLACEHOLDER.match(value) or _ENV_NAME.match(value))


def _is_real_value(value: str) -> bool:
    """Whether an assigned value looks like an actual credential, not a reference."""
    value = _unquote(value)
    return not (
        len(value) < 3
        or _is_placeholder(value)
        or _PATH.match(value)
        or value.lower() in _REFERENCE_WORDS
    )


def _looks_like_password(value: str) -> bool:
    """Whether a prose 'password is X' value mixes letters with digits or symbols."""
    value = _unquote(value)
    has_alpha = any(ch.isalpha() for ch in value)
    has_other = any(not ch.isalpha() for ch in value)
    return len(value) >= 6 and has_alpha and has_other and _is_real_value(value)


def shannon_entropy(text: str) -> float:
    """Shannon entropy of `text` in bits per character."""
    counts = Counter(text)
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _reads_like_words(token: str) -> bool:
    """Whether a long token is made of word-like pieces (paths, identifiers)."""
    pieces = _PIECE.findall(token)
    wordy = [p for p in pieces if len(p) >= 3 and not p.isdigit()]
    covered = sum(len(p) for p in wordy)
    letters = "".join(wordy).lower()
    vowels = sum(letters.count(v) for v in "aeiouy")
    # Measured against the letters, so separators and numbers in a path ("eu-west-1/2024") do not count.
    alphabetic = sum(ch.isalpha() for ch in token)
    return covered >= 0.7 * max(alphabetic, 1) and covered >= 0.5 * len(token) and vowels >= 0.3 * max(len(letters), 1)


def _is_high_entropy(token: str) -> bool:
    """Whether a 32+ character run looks like a random key (rule in the module docstring)."""
    if _UUID.match(token):
        return False
    if _HEX.match(token):
        return len(token) > _MAX_PLAIN_HEX and shannon_entropy(token) >= _MIN_HEX_ENTROPY
    classes = sum(
        any(test(ch) for ch in token) for test in (str.islower, str.isupper, str.isdigit)
    )
    return (
        classes >= 2
        and shannon_entropy(token) >= _MIN_ENTROPY
        and not _reads_like_words(token)
    )


# Invisible but not category Cf: the combining grapheme joiner, Hangul fillers, Khmer inherent vowels,
# variation selectors. A reader sees nothing; a pattern sees a break in the key.
_IGNORABLE = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0" + "".join(map(chr, range(0xFE00, 0xFE10)))
)


def visible_text(text: str) -> str:
    """The text without the characters a reader cannot see (format characters, variation selectors)."""
    return "".join(c for c in text if c not in _IGNORABLE and not _invisible(c))


def _invisible(char: str) -> bool:
    return unicodedata.category(char) == "Cf" or 0xE0100 <= ord(char) <= 0xE01EF


def find_secret(text: str) -> str | None:
    """Name the kind of secret `text` contains (e.g. "OpenAI API key"), as a reader sees it or as written; or None."""
    visible = visible_text(text)
    return _find_secret(visible) or (_find_secret(text) if visible != text else None)


def _find_secret(text: str) -> str | None:
    for name, pattern in PATTERNS:
        for match in pattern.finditer(text):
            value = match.groupdict().get("value")
            # A URL password may be short ("u:p@"), so only placeholders excuse it.
            if name in _NEEDS_DIGIT and not any(ch.isdigit() for ch in match.group()):
                continue
            if value is None or not _is_placeholder(value):
                return name
    for match in _ASSIGNMENT.finditer(text):
        key = match.group("key").lower()
        value = match.group("value")
        if key in _PASSWORD_KEYS:
            if _is_real_value(value):
                return "password"
        # "secret: yes" or "token: rotate it" are prose; real keys have digits or length.
        elif _is_real_value(value) and (
            len(_unquote(value)) >= 12 and any(ch.isdigit() for ch in value)
        ):
            return f"{key.replace('-', '_')} value"
    said = _PASSWORD_IS.search(text)
    if said and _looks_like_password(said.group("value")):
        return "password"
    url_paths = [(m.start(), m.end("path")) for m in _URL_PATH.finditer(text)]
    for match in _CANDIDATE.finditer(text):
        if _DIGEST_PREFIX.search(text[max(0, match.start() - _DIGEST_LOOKBACK): match.start()]):
            continue
        if any(start <= match.start() and match.end() <= end for start, end in url_paths):
            continue
        if _is_high_entropy(match.group()):
            return "high-entropy token"
    return None
