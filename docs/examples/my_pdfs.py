"""my_pdfs: a folder of your PDFs as a litloop corpus (the worked example of docs/corpora.md).

Drop this file into tools/corpora/ (found automatically), or ship it in a package of your own
and name it in that package's pyproject.toml:

    [project.entry-points."litloop.corpora"]
    my_pdfs = "my_package.my_pdfs"

Then:
    MY_PDFS_DIR=~/papers litloop corpora build my_pdfs
    litloop ask "Which of my papers report results on SQuAD?" --corpus my_pdfs
"""

from __future__ import annotations

import os
from pathlib import Path

from agent.settings import Settings
from tools.registry import Corpus


def pdf_folder(settings: Settings) -> list[Path]:
    """The folder to index: $MY_PDFS_DIR, else ~/papers. A NAME.meta.json beside NAME.pdf may give
    title, authors, venue, year and paper_id; without it they are read from the PDF."""
    return [Path(os.environ.get("MY_PDFS_DIR", "~/papers")).expanduser()]


CORPUS = Corpus(
    name="my_pdfs",  # what --corpus and `litloop corpora list` use; ids become my_pdfs:<paper_id>
    description="My PDF papers, full text (pages, sections, tables and figure captions)",
    inputs=pdf_folder,  # files or folders: PDFs, JSONL paper records, S2ORC/GROBID JSON, GROBID TEI
    licence="the papers' own",
    # the index goes to data_dir/corpora/my_pdfs; give location=lambda s: Path(...) to move it
)
