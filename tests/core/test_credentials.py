"""Table tests for wolfmem.secrets: every pattern both ways."""

from __future__ import annotations

import pytest

from wolfmem.core.credentials import find_secret, shannon_entropy, visible_text

# Fake keys are assembled at runtime so secret scanners on the repo stay quiet.
RANDOM_62 = "aB3dE9fGh2JkL5mN7pQ1rS4tU6vW8xY0zC"  # 34 chars, mixed classes
OPENAI = "sk-" + "T3BlbkFJ" + "x9Yq2LmN4pR7sV1wZ8cD5fG6hJ0kA3bE"
OPENAI_PROJ = "sk-proj-" + "Ab12_Cd34-Ef56Gh78Ij90Kl12Mn34Op56"
ANTHROPIC = "sk-ant-" + "api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
GITHUB_PAT = "ghp_" + "A1b2C3d4" * 4 + "E5f6"
GITHUB_APP = "ghs_" + "Q9w8E7r6" * 4 + "T5y4"
GITHUB_FINE = "github_pat_" + "11ABCDEFG0" + "_" + "a1B2c3D4e5F6g7H8i9J0"
SLACK = "xoxb-" + "1234567890-0987654321-" + "AbCdEfGhIjKlMnOp"
STRIPE_LIVE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
STRIPE_RESTRICTED = "rk_live_" + "51H8xYzAbCdEfGh12345"
STRIPE_TEST = "sk_test_" + "26PHem9AhJZvU623DfE1x4sd"
GOOGLE = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
JWT = (
    "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

SECRET_CASES: list[tuple[str, str]] = [
    (f"The key is {OPENAI}", "OpenAI API key"),
    (f"OPENAI_API_KEY={OPENAI_PROJ}", "OpenAI API key"),
    (f"use {ANTHROPIC} for claude", "Anthropic API key"),
    (f"aws key {AWS}", "AWS access key"),
    (f"token {GITHUB_PAT} for CI", "GitHub token"),
    (f"app token {GITHUB_APP}", "GitHub token"),
    (f"fine-grained {GITHUB_FINE}", "GitHub token"),
    (f"Slack bot uses {SLACK}", "Slack token"),
    (f"Stripe: {STRIPE_LIVE}", "Stripe key"),
    (f"restricted key {STRIPE_RESTRICTED}", "Stripe key"),
    (f"test key {STRIPE_TEST}", "Stripe key"),
    (f"Maps key {GOOGLE}", "Google API key"),
    (f"session {JWT}", "JWT"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA", "PEM private key"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "PEM private key"),
    ("-----BEGIN PRIVATE KEY-----", "PEM private key"),
    ("DB is postgres://app:s3cr3t@db.internal:5432/prod", "connection string with a password"),
    ("mongodb+srv://u:p@cluster0.mongodb.net", "connection string with a password"),
    ("cache at redis://:hunter2@localhost:6379", "connection string with a password"),
    ("postgres://user:pass@host", "connection string with a password"),
    ("ftp://deploy:Tr0ub4dor@files.example.com", "connection string with a password"),
    ("password: hunter2", "password"),
    ("The admin password=Tr0ub4dor&3", "password"),
    ('db passwd = "correct horse battery"', "password"),
    ("pwd: letmein", "password"),
    ("DB_PASSWORD=s3cretValue", "password"),
    ("The wifi password is hunter22.", "password"),
    ("api_key: 9f8e7d6c5b4a39281706f5e4", "api_key value"),
    ("secret = 'Zq8wX3vB1nM5kL7jH9gF'", "secret value"),
    ("token=abc123def456ghi789", "token value"),
    ("https://api.example.com/v1?token=a1b2c3d4e5f6g7h8", "token value"),
    (f"key is {RANDOM_62}", "high-entropy token"),
    ("sig " + "Xk9/Lm3+Qp7=Rt2_Vw5-Yz8aBcD4eFgH1jK", "high-entropy token"),
    ("aws secret " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY8zQ2vL1tKEY", "high-entropy token"),
    ("sha256 " + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
     "high-entropy token"),
]

CLEAN_CASES: list[str] = [
    "My Stripe key is in 1Password",
    "The OpenAI key lives in the OPENAI_API_KEY env var",
    "password rotation happens monthly",
    "Use sk-learn for ML",
    "sk-learn-style-pipelines-for-tabular-data-processing are nice",
    "The task-manager service restarts nightly",
    "the password is stored in Vault",
    "API token is in ~/.config/gh/hosts.yml",
    "password: ${DB_PASSWORD}",
    "password: <redacted>",
    "password: ***",
    "password is in 1Password",
    "password: stored in 1Password",
    "password=DB_PASSWORD",
    "token: rotate it monthly",
    "secret: yes",
    "api_key: $OPENAI_API_KEY",
    "postgres://app:${DB_PASS}@db.internal/prod",
    "postgres://db.internal:5432/prod has no credentials in the URL",
    "See https://github.com/anthropics/claude-code/blob/main/README.md for setup",
    "Config lives in src/components/UserProfileSettingsPage/index.tsx",
    "The word internationalization-and-localization-support is long",
    "Request id 123e4567-e89b-12d3-a456-426614174000 failed",
    "Fixed in commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "The md5 is d41d8cd98f00b204e9800998ecf8427e",
    "AKIA keys are AWS access keys",
    "ghp_ prefixes mark GitHub personal tokens",
    "JWTs start with eyJ",
    "Uses Python 3.11 and node 20",
    "The bug is in TheQuickBrownFox2024JumpsOverTheLazyDog",
    "getUserProfileSettingsForAccountId42 returns None",
    "BEGIN PRIVATE KEY headers mark PEM files",
    "The password is what you set at signup.",
]


@pytest.mark.parametrize(("text", "kind"), SECRET_CASES)
def test_finds_secret(text: str, kind: str) -> None:
    assert find_secret(text) == kind


@pytest.mark.parametrize("text", CLEAN_CASES)
def test_ignores_non_secret(text: str) -> None:
    assert find_secret(text) is None


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [("aaaa", 0.0, 0.0), ("abcd", 2.0, 2.0), (RANDOM_62, 4.5, 5.2)],
)
def test_shannon_entropy(text: str, low: float, high: float) -> None:
    assert low <= shannon_entropy(text) <= high


@pytest.mark.parametrize("mark", ["\u200b", "\u200c", "\u2060", "\ufeff", "\u00ad", "\u200e", "\ufe0f", "\u034f"])
@pytest.mark.parametrize(("secret", "kind"), [(AWS, "AWS access key"), (GITHUB_PAT, "GitHub token"),
                                              (OPENAI, "OpenAI API key")])
def test_a_secret_split_by_an_invisible_character_is_found(mark: str, secret: str, kind: str) -> None:
    assert find_secret(f"the key is {secret[:6]}{mark}{secret[6:]}") == kind


def test_visible_text_drops_only_what_a_reader_cannot_see() -> None:
    assert visible_text("a\u200bb\u00adc\ufe0fd e\u00e9") == "abcd e\u00e9"
