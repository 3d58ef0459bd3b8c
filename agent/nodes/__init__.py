"""The graph's nodes; `agent/graph.py` wires them. decompose and synthesize are shared by every
method; the other five run the context's method's step (`method_steps.py`)."""
