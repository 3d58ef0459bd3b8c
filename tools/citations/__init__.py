"""Citation contexts: where a paper cites another, in which sentence, and why.

`extract` finds in-text citations in parsed papers and links them to bibliography entries,
`store` keeps them with the index, and `intent` labels a citing sentence (background, uses,
extends, compares, contrasts).
"""
