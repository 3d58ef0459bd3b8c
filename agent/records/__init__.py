"""The records litloop gives and keeps: answers, command results, progress steps, submissions,
run ledgers. The lowest room of the agent: interfaces and core alike build on them, and they import
nothing of the agent but each other."""
