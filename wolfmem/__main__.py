"""`python -m wolfmem` runs the CLI."""

from wolfmem.cli import main

main()
