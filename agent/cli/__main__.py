"""`python -m agent.cli`: the same as the `litloop` command."""

from agent.cli.main import main

main()
