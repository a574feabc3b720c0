"""Held out for issue 23: pairs written after the rule was finished, and never used to change it.

(fact on file, new fact, expected): "duplicate" for a paraphrase that says the same thing of the
same subject, "apart" for a change of meaning that must be saved and flagged. scripts/bench_dedup.py
reports them on their own; tests/core/test_meaning.py only insists that no "apart" pair merges.
"""

from __future__ import annotations

MEANING_HELDOUT: list[tuple[str, str, str]] = [
    # Changes of meaning.
    ("The printer on floor 3 prints in colour", "The printer on floor 3 no longer prints in colour", "apart"),
    ("Nadia is allowed to sign contracts", "Nadia was allowed to sign contracts", "apart"),
    ("The shuttle runs from the station to the campus", "The shuttle runs from the campus to the station",
     "apart"),
    ("Our landlord wants the deposit before the keys", "Our landlord wants the keys before the deposit", "apart"),
    ("Felix can drive the van", "Felix cannot drive the van", "apart"),
    ("Grandma prefers the window seat over the aisle", "Grandma prefers the aisle seat over the window", "apart"),
    ("The pool is open until 9", "The pool is open from 9", "apart"),
    ("Only admins can delete projects", "Admins can delete projects", "apart"),
    ("The kettle is switched on", "The kettle is switched off", "apart"),
    ("The invoice total is $1200", "The invoice total is -$1200", "apart"),
    ("The commute is 12 km", "The commute is 12 minutes", "apart"),
    ("Mira will present the roadmap", "Mira presented the roadmap", "apart"),
    ("The cat sleeps under the bed", "The cat sleeps on the bed", "apart"),
    ("Most tickets are closed within a day", "All tickets are closed within a day", "apart"),
    ("Jonas used to run the Berlin office", "Jonas runs the Berlin office", "apart"),
    ("The alarm is set for 6", "The alarm is set for 7", "apart"),
    ("Staging is deployed after production", "Production is deployed after staging", "apart"),
    # Paraphrases: the same claim of the same subject.
    ("The printer on floor 3 prints in colour", "On floor 3 the printer prints in colour", "duplicate"),
    ("Nadia signs the contracts", "The contracts are signed by Nadia", "duplicate"),
    ("The shuttle runs from the station to the campus", "The shuttle runs from the station to the campus.",
     "duplicate"),
    ("Felix drives the van and the truck", "Felix drives the truck and the van", "duplicate"),
    ("The lease for the office ends in March", "The office lease ends in March", "duplicate"),
    ("Mira is the owner of the roadmap", "Mira owns the roadmap", "duplicate"),
    ("The rent is $900", "The rent is 900 dollars", "duplicate"),
    ("I prefer oat milk in coffee", "User prefers oat milk in coffee", "duplicate"),
    ("Pia is my dentist", "My dentist is Pia", "duplicate"),
    ("The garden is watered every evening", "We water the garden every evening", "duplicate"),
    ("Every Sunday the family calls grandma", "The family calls grandma every Sunday", "duplicate"),
    ("The kids are picked up by Lars", "Lars picks up the kids", "duplicate"),
    ("The quarterly report is written by the finance team", "The finance team writes the quarterly report",
     "duplicate"),
]
