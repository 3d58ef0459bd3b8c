"""Ingestion: files to Documents (jsonl, s2orc, tei, pdf) and Documents to chunks (chunker)."""

# Bumped when a parser or the chunker cuts the same input into different chunks. An index
# records the oldest version that cut any of its papers (manifest `ingest_version`); the
# built-in corpora are rebuilt when theirs is older, other indexes are told how to rebuild.
# 2: PDF paragraphs whole across breaks, footnotes apart, equations with their lead-in.
# 3: PDF layouts beyond ACL's (fonts, headings, front matter, bibliographies); words that lost
#    a ligature in extraction ("speci c") repaired in every format.
# 4: bibliographies of more templates (bracketed and "12." labels, author lists of styles that
#    print the year last, two-entry lists), "References" set large in a regular face, CMB bold.
# 5: the PDF text floor: runs of a page's plain text layer (pypdfium2) that the reader lost are
#    put back as paragraphs of their page; bibliographies without a heading (REVTeX), labels
#    glued to the entry, surname-first authors; line numbers on every fifth line.
INGEST_VERSION = 5
