"""The intent of a citation: why a sentence cites a work.

INTENTS is the label scheme; the classifier follows in the next working step.
"""

from __future__ import annotations

INTENTS = ("background", "uses", "extends", "compares", "contrasts")
