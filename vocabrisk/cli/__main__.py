"""`python -m vocabrisk.cli`, as the `vocabrisk` command."""

from vocabrisk.cli.commands import main

main()
