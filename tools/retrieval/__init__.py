"""Retrieval maths: BM25 over segments, dense search, fusion, Retrieve, Relate, the sentence
selector; what the agent's nodes and the LLM-free pipeline call."""
