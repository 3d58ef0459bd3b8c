"""One module per graph node; `agent/graph.py` wires them."""
