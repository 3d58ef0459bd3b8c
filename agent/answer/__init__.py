"""The answer, in small parts that the synthesize node composes (agent/nodes/synthesize.py):

selection.py  the sentences the synthesis is shown, and those an extractive answer quotes
claims.py     a claim's text cleaned, checked against what it cites (support.py), re-anchored
support.py    the deterministic check of a claim against the sentences it cites
choice.py     multiple choice: the synthesis's label read from its text, options scored from
              the evidence as the model's next token
citations.py  numbered citations quoting their sentences, a table row's cell
assemble.py   the answer record: prose with citation markers, or the extractive fallback
status.py     ok / partial / failed, and the record of a run that gave no answer
types.py      the records above as types (Answer, Claim, Citation, ...)

Nothing here imports a heavy module at the top (CONTRIBUTING.md, "Layout and layers")."""
