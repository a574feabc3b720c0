"""Labelled fact pairs for `facts.relate`, shared by tests and the dedup benchmark."""

from __future__ import annotations

from wolfmem.core.facts import Relation

DUP = Relation.DUPLICATE
CON = Relation.CONTRADICTS
UNR = Relation.UNRELATED

# (new fact, old fact, expected relation)
DEDUP_PAIRS: list[tuple[str, str, Relation]] = [
    # Exact after normalising case, spacing, quotes, dashes, markers and punctuation.
    ("Sarah prefers tea.", "sarah prefers tea", DUP),
    ("- Sarah prefers tea", "Sarah  prefers   tea!", DUP),
    ("The build uses \u201cuv\u201d \u2014 not pip", 'the build uses "uv" - not pip', DUP),
    ("1. Deploys happen on Fridays", "Deploys happen on Fridays.", DUP),
    # Paraphrase and reordering.
    ("I prefer conventional commits.", "User prefers conventional commits", DUP),
    ("Sarah is my manager", "My manager is Sarah", DUP),
    ("Deploys go through GitHub Actions", "We deploy via GitHub Actions", DUP),
    ("We ship through GitHub Actions", "Deploys go through GitHub Actions", DUP),
    ("I like dark mode", "User prefers dark mode", DUP),
    ("Sarah is my boss", "My manager is Sarah", DUP),
    ("Meeting on June 3rd", "Meeting on 3 June", DUP),
    ("The team uses Python 3.11", "Python 3.11 is used by the team", DUP),
    ("Standup is every Monday at 9", "Every Monday at 9 is standup", DUP),
    ("Releases are tagged with semver", "We tag releases with semver", DUP),
    ("The staging database is Postgres 16", "Postgres 16 is the staging database", DUP),
    # A value differs: number, version, date, name, negation.
    ("My manager is Sarah", "My manager is Susan", CON),
    ("Uses Python 3.11", "Uses Python 3.12", CON),
    ("Prefers tabs", "Does not prefer tabs", CON),
    ("Meeting on June 3rd", "Meeting on June 4th", CON),
    ("Standup is at 9am on Monday", "Standup is at 9am on Tuesday", CON),
    ("The API runs on port 8080", "The API runs on port 9090", CON),
    ("Sarah lives in Berlin", "Sarah lives in Paris", CON),
    ("The release is planned for March", "The release is planned for April", CON),
    ("I use vim as my editor", "I don't use vim as my editor", CON),
    ("Node version is v18.2.0", "Node version is v20.1.0", CON),
    ("The team has 5 engineers", "The team has 7 engineers", CON),
    ("Deploys happen on Fridays", "Deploys never happen on Fridays", CON),
    ("Joined the company in 2019", "Joined the company in 2021", CON),
    ("The CI budget is 1,000 minutes", "The CI budget is 2000 minutes", CON),
    ("The database is hosted by AWS", "The database is hosted by Hetzner", CON),
    # Shares a word or two, or a subject, but makes a different claim.
    ("Sarah likes tea", "Sarah manages the infra team", UNR),
    ("Sarah likes tea", "Susan likes tea", UNR),
    ("Uses Python 3.11", "Uses Node 18", UNR),
    ("Uses Python", "Uses Node", UNR),
    ("Prefers dark mode", "Prefers dark mode in VS Code", UNR),
    ("Prefers tabs in Go", "Prefers tabs", UNR),
    ("Sarah likes green tea", "Sarah likes tea", UNR),
    ("The API runs on port 8080", "The API runs on port 8080 in prod", UNR),
    ("The API runs on port 8080", "The API is written in Go", UNR),
    ("Meeting with Bob on Monday", "Meeting with Alice on Friday", UNR),
    ("I prefer conventional commits", "I prefer squash merges", UNR),
    ("Deploys go through GitHub Actions", "Tests run on GitHub Actions", UNR),
    ("My manager is Sarah", "Sarah prefers async standups", UNR),
    ("The repo uses pre-commit hooks", "The repo uses a monorepo layout", UNR),
    ("Backups run nightly", "Backups are stored in S3", UNR),
    ("Sarah doesn't like coffee", "Sarah likes tea", UNR),
    ("The laptop has 16 GB of RAM", "The build takes 16 minutes", UNR),
    # The same names or numbers in other roles: another claim, kept and flagged, never merged.
    ("Sarah reports to Bob", "Bob reports to Sarah", CON),
    ("Port 8080 forwards to 3000", "Port 3000 forwards to 8080", CON),
    ("Worker 1 recorded item 0", "Worker 0 recorded item 1", CON),
]
