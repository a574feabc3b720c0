"""`python -m wolfmem` runs the CLI."""

from .cli import main

main()
