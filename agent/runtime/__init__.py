"""What every step of a run shares, below the nodes and the methods: the process-wide resources
(open indexes, rerankers, chat models) and the structured call a step makes."""
