"""The References section: entries split by hanging indent or label, and each entry's guessed
title and year; the venue and year of a paper from its first-page footer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tools.base import BibEntry

# ACL-style reference: "Authors. 2019a. Title. In Venue." -> the year and what follows it.
_REF_YEAR_RE = re.compile(r"(?:^|[\s(,])(?P<year>(?:19|20)\d{2})[a-z]?\)?[.,:]\s+(?P<rest>.*)$", re.DOTALL)


_ANY_YEAR_RE = re.compile(r"(?<![\d–-])((?:19|20)\d{2})(?![\d–-])")


_ABBREVIATIONS = ("vs.", "e.g.", "i.e.", "cf.", "etc.", "al.", "Proc.", "Vol.", "No.")


def split_references(lines: Sequence[tuple[float, str]]) -> list[str]:
    """Split a References section into entries; each line is (indent in points, text).

    ACL style uses a hanging indent: an entry's first line sits at the column's left edge,
    its continuation lines are indented. Where no line is indented (other styles), an entry
    starts at a '[12]' / '12.' label, or at a capitalised name after a line that ended an
    entry that already has a year. Lines are joined with newlines; dehyphenate afterwards.
    """
    if not lines:
        return []
    indented = sum(1 for indent, _ in lines if indent >= 3.0)
    hanging = indented >= max(1, len(lines) // 10) and indented < len(lines) * 0.9
    entries: list[list[str]] = []
    label = 0  # the last '12.' label that opened an entry: the next one opens the next entry
    for indent, text in lines:
        text = text.strip()
        if not text:
            continue
        m = re.match(r"^(\d{1,3})\.\s+[A-Z]", text) or GLUED_LABEL_RE.match(text)
        numbered = m is not None and int(m.group(1)) == label + 1
        if not entries or numbered or _starts_reference(indent, text, entries[-1], hanging):
            entries.append([text])
            label = int(m.group(1)) if numbered and m else label
        else:
            entries[-1].append(text)
    return ["\n".join(e) for e in entries]


def _starts_reference(indent: float, text: str, current: list[str], hanging: bool) -> bool:
    """Does this line open a new entry (see split_references)?"""
    if re.match(r"^\[\d{1,3}\]\s", text):
        return True
    if hanging:
        return indent < 2.0
    previous = current[-1]
    has_year = _ANY_YEAR_RE.search(" ".join(current)) is not None
    looks_like_name = re.match(r"^[A-Z][\w'’\-]+,?\s+(?:[A-Z]|and\b)", text) is not None
    return has_year and previous.rstrip().endswith(".") and looks_like_name


def bibliography_end(entries: Sequence[str]) -> int:
    """How many of the split entries are the bibliography's. A labelled list ('[1]', '1.')
    ends at its last labelled entry; an unlabelled one before the trailing entries that carry no
    year and do not open with a name. What follows (an appendix whose heading was not read, the
    authors' addresses) is the paper's own text, not entries."""
    if not entries:
        return 0
    labelled = [i for i, e in enumerate(entries) if entry_label(e) is not None]
    if len(labelled) >= max(2, len(entries) // 2):
        return labelled[-1] + 1
    end = len(entries)
    while end > 1 and not _ANY_YEAR_RE.search(entries[end - 1]) and not _NAME_START_RE.match(entries[end - 1]):
        end -= 1
    return end


def parse_reference(raw: str) -> BibEntry:
    """Best-guess title and year of one reference entry (ACL style first).

    'A. Author and B. Author. 2018. Construction of the literature graph in semantic scholar.
    In NAACL-HLT.' -> title 'Construction of the literature graph in semantic scholar'.
    """
    raw = re.sub(r"\s+", " ", raw).strip()
    title, year = "", None
    quoted = re.search(r"[“\"](?P<t>[^”\"]{8,300})[”\"]", raw)
    m = _REF_YEAR_RE.search(raw)
    if quoted:
        title = quoted.group("t").strip().rstrip(",.")
    elif m:
        title = _first_sentence(m.group("rest"))
    else:
        parts = _sentences(raw)
        title = parts[1] if len(parts) > 1 else ""
    if m:
        year = int(m.group("year"))
    else:
        years = _ANY_YEAR_RE.findall(raw)
        year = int(years[0]) if years else None
    authors = _authors_before(raw[: m.start()]) if m else _author_block(raw)
    venue = _venue_after(m.group("rest"), title) if m and not quoted else ""
    return BibEntry(title=title, year=year, raw=raw, authors=authors, venue=venue)


def _unlabelled(raw: str) -> str:
    """An entry without its label: '[3] ', '3. ', '3) ' or a glued superscript '3'."""
    raw = re.sub(r"^\s*(?:\[\d{1,3}\]|\d{1,3}[.)])\s*", "", raw)
    g = GLUED_LABEL_RE.match(raw)
    return raw[g.end() :] if g else raw


def _authors_before(head: str) -> tuple[str, ...]:
    """'A. Author, B. Author, and C. Author.' (what precedes an ACL-style year) -> the names."""
    head = _unlabelled(head).strip().rstrip(",")
    if not re.search(r"\b[A-Z]\.$", head):  # 'Sailor, W.' keeps its initial's full stop
        head = head.rstrip(".,")
    names = [n.strip() for n in re.split(r",\s*(?:and\s+)?|\s+and\s+|\s*&\s*", head)]
    # the list ends where a title ('“...') or a journal with its volume ('Phys. Rev. 94') begins
    end = next((k for k, n in enumerate(names) if k and re.search(r"\d|[“\"]", n)), len(names))
    names = names[:end]
    # 'Zeileis A, Hornik K' (JSS, Vancouver): initials without full stops after the surname
    names = [_initials_first(n) for n in names]
    # 'Lassen, S. R., Steele, M. M.' (APA): initials after their surname belong to it
    joined: list[str] = []
    for n in names:
        if (
            joined
            and re.fullmatch(r"(?:[A-Z]\.?\s?(?:-?[A-Z]\.\s?)*)", n)
            and not re.search(r"\b[A-Z]\.", joined[-1])  # 'von Davier, M.': a surname with particles
            and not re.fullmatch(r"[A-Z]{1,3}", joined[-1].split()[-1])
        ):
            joined[-1] = f"{n} {joined[-1]}"
        else:
            joined.append(n)
    return tuple(n for n in joined if len(n) >= 2 and not n.lower().startswith("et al"))


_SURNAME_INITIALS = re.compile(
    r"^(?P<s>[A-Z][\w'’\-]+(?:\s+[a-z]{1,3}\s+[A-Z][\w'’\-]+)?)\s+(?P<i>[A-Z]{1,3}|(?:[A-Z]\.\s?(?:-?[A-Z]\.\s?)*))$"
)


def _initials_first(name: str) -> str:
    """'Zeileis A' -> 'A Zeileis', 'van de Wiel MA' stays whole: the surname last, as in-text
    matching expects."""
    m = _SURNAME_INITIALS.match(name)
    return f"{m.group('i').strip()} {m.group('s')}" if m else name


# 'Zubarev D. N., Bussmann-Holder A., ' (surname, then initials): a list of such names opens the entry
_SURNAME_FIRST = re.compile(
    r"^(?:[A-Z][\w'’\-]+(?:\s+[A-Z][\w'’\-]+)?\s+(?:[A-Z]\.\s?(?:-?[A-Z]\.\s?)*)(?:,\s*|\s+and\s+|$))+"
)
# the end of the author list when the year comes last ('L. Breiman. Statistical modeling ...'):
# the first full stop after a word that is not an initial
_AUTHORS_END = re.compile(r"(?<=[a-z\u00df-\u00ff]{2})\.\s|(?<=[a-z\u00df-\u00ff]{2}\))\.\s")


_COMMA_PAIR = re.compile(
    r"(?P<s>[A-ZÀ-Þ][\w'’\-]+(?:\s[A-Z][\w'’\-]+)?)(?P<g>,\s+Jr\.)?,\s+(?P<i>[A-ZÀ-Þ][a-z]?\.(?:\s?-?[A-Z][a-z]?\.)*)"
)
_PAIR_SEP = re.compile(r",?\s+(?:and|&)\s+|,\s+(?=[A-ZÀ-Þ][\w'’\-]+(?:,\s+Jr\.)?,\s+[A-ZÀ-Þ][a-z]?\.)")


def _surname_comma_initials(body: str) -> tuple[str, ...]:
    """'Birell, N. D. and Davies, P. C. W., Quantum ...' (surname, comma, initials; REVTeX's and
    AIP's author-year styles) -> ('N. D. Birell', 'P. C. W. Davies'); () when the entry does not
    open so."""
    names: list[str] = []
    pos = 0
    while m := _COMMA_PAIR.match(body, pos):
        names.append(f"{m.group('i')} {m.group('s')}" + (" Jr." if m.group("g") else ""))
        sep = _PAIR_SEP.match(body, m.end())
        if not sep:
            break
        pos = sep.end()
    return tuple(names)


def _author_block(raw: str) -> tuple[str, ...]:
    """The names of an entry whose year comes last (most styles but ACL's): 'L. Breiman.
    Statistical ...' -> ('L. Breiman',); 'Zubarev D. N., Bussmann-Holder A., Nonequilibrium ...'
    -> ('D. N. Zubarev', 'A. Bussmann-Holder'), the surname last as in-text matching expects."""
    body = _unlabelled(raw)
    if listed := _surname_comma_initials(body):
        return listed
    m = _SURNAME_FIRST.match(body)
    if m and m.group(0).count(".") >= 1:
        names = [n.strip() for n in re.split(r",\s*|\s+and\s+", m.group(0)) if n.strip()]
        out = []
        for n in names:
            parts = re.match(
                r"^(?P<s>[A-Z][\w'’\-]+(?:\s+[A-Z][\w'’\-]+)?)\s+(?P<i>(?:[A-Z]\.\s?(?:-?[A-Z]\.\s?)*))$", n
            )
            out.append(f"{parts.group('i').strip()} {parts.group('s')}" if parts else n)
        return tuple(out)
    end = _AUTHORS_END.search(body)
    if end is None or end.start() > 300:
        return ()
    head = body[: end.start()]
    if re.match(r"\.(?:\s*[A-Z][a-z]*\.)*\s*\d", body[end.start() :]) and "," in head:
        head = head.rsplit(",", 1)[0]  # 'T. Blot, Pap. Lett. 7, 3': a journal and its volume end the list
    return _authors_before(head)


def _venue_after(rest: str, title: str) -> str:
    """'In NAACL.' after the title -> 'NAACL'."""
    after = rest[len(title) :].lstrip(" .") if title and rest.startswith(title) else ""
    first = _first_sentence(after)
    return re.sub(r"^In\s+", "", first).strip()


def _sentences(text: str) -> list[str]:
    # A sentence ends at '.', '?' or '!' after a lower-case letter, digit or ')' - not after
    # an initial such as 'E.' - followed by a space.
    parts = re.split(r"(?<=[a-z0-9)\]}’”'][.?!])\s+|(?<=[A-Z]{2}[.?!])\s+", text)
    merged: list[str] = []
    for part in (p.strip() for p in parts):
        if merged and merged[-1].endswith(_ABBREVIATIONS):  # 'Machine learning vs. rules'
            merged[-1] = f"{merged[-1]} {part}"
        elif part:
            merged.append(part)
    return merged


def _first_sentence(text: str) -> str:
    parts = _sentences(text)
    if not parts:
        return ""
    title = parts[0]
    return title.removesuffix(".")


def guess_venue_year(text: str) -> tuple[str | None, int | None]:
    """Venue and year from a page-1 footer such as 'Proceedings of the 58th Annual Meeting of
    the Association for Computational Linguistics, pages 2270-2282 July 5 - 10, 2020'.

    Only the main ACL venues are named (ACL, NAACL, EACL, EMNLP, COLING, TACL); workshops,
    Findings and anything else give venue None (the year is still returned).
    """
    flat = re.sub(r"\s+", " ", text)
    m = re.search(
        r"(Proceedings of .{0,260}|Transactions of the Association for Computational"
        r" Linguistics.{0,120})",
        flat,
    )
    if not m:
        return None, None
    line = m.group(1)
    cleaned = re.sub(r"pages? \d+\s*[–-]\s*\d+", " ", line)
    cleaned = re.sub(r"(?:©|\(c\)|Copyright)\s*(?:19|20)\d{2}", " ", cleaned)
    years = _ANY_YEAR_RE.findall(cleaned)
    year = int(years[0]) if years else None
    return _venue_of(line), year


def _venue_of(line: str) -> str | None:
    """The main ACL venue a proceedings line names; satellite events name none."""
    if re.search(
        r"Workshop|Findings|Student Research|Tutorial|Shared Task|Asian Chapter|\bAACL\b", line, re.IGNORECASE
    ):
        return None
    rules = (
        (r"Transactions of the Association for Computational Linguistics|\bTACL\b", "TACL"),
        (r"North American Chapter|\bNAACL", "NAACL"),
        (r"European Chapter|\bEACL\b", "EACL"),
        (r"Empirical Methods in Natural Language Processing|\bEMNLP\b", "EMNLP"),
        (r"International Conference on Computational Linguistics|\bCOLING\b", "COLING"),
        (r"Annual Meeting of the Association for Computational Linguistics|\bACL\b", "ACL"),
    )
    for pattern, venue in rules:
        if re.search(pattern, line):
            return venue
    return None


# An entry's first line: a label ("[12]", "12.", "12"), or names before a year.
_LABEL_RE = re.compile(r"^\s*(?:\[(?P<b>\d{1,3})\]|(?P<n>\d{1,3})[.)]?)\s+\S")
# a superscript label a PDF's text glues to the entry's first initial or surname: '34R. Ballagh,
# ...', '7Smith, J.' (REVTeX's AIP styles)
GLUED_LABEL_RE = re.compile(r"^\s*(?P<g>\d{1,3})(?=(?:[A-ZÀ-Þ]\.\s?)+[A-ZÀ-Þ]|[A-ZÀ-Þ][a-zà-ÿ]+,)")
_NAME_START_RE = re.compile(
    r"^(?:[A-Z][\w'’\-]+,\s*(?:[A-Z]\.|[A-Z][a-z]+)|(?:[A-Z]\.\s?){1,3}[A-Z][\w'’\-]+|[A-Z][\w'’\-]+\s+[A-Z]{1,3}\b[,.]?"
    r"|[A-Z][a-z]+\s+(?:[A-Z]\.\s+)?[A-Z][\w'’\-]+(?:,|\.|\s+and\s+[A-Z]))"
)


def entry_label(text: str) -> int | None:
    """The number an entry's first line opens with ('[12] ...', '12. ...'), else None."""
    m = _LABEL_RE.match(text)
    if m:
        return int(m.group("b") or m.group("n"))
    g = GLUED_LABEL_RE.match(text)
    return int(g.group("g")) if g else None


def bibliography_shape(texts: Sequence[str]) -> bool:
    """Do these lines (the first ones after a 'References' heading) read as bibliography
    entries: numbered ('[1]', '1.') in order, or opening with names and carrying years? A
    'References' subsection of the body (prose about references) does not."""
    texts = [t for t in texts if t.strip()][:20]
    if not texts:
        return False
    # bracketed labels ('[1]') when the list has them, so a wrapped line that opens with a
    # number ('11 Package for ...') is not read as a label out of order
    bracketed = [int(m.group(1)) for t in texts if (m := re.match(r"^\s*\[(\d{1,3})\]\s+\S", t))]
    labels = bracketed if len(bracketed) >= 2 else [n for n in (entry_label(t) for t in texts) if n is not None]
    if len(labels) >= 2 and labels == sorted(labels) and labels[0] <= 3:
        return True
    years = sum(bool(_ANY_YEAR_RE.search(t)) for t in texts)
    names = sum(bool(_NAME_START_RE.match(t)) for t in texts)
    # entries wrap over two to four lines, each with its year: a year on every third line at
    # least (two in a short list), and two lines that open with a name
    return years >= min(3, max(2, -(-len(texts) // 3))) and names >= min(2, len(texts))


_SURNAME_OPENS = re.compile(r"^(?P<s>[A-ZÀ-Þ][\w'’\-]+(?:\s[A-Z][\w'’\-]+)?),\s+(?:[A-ZÀ-Þ]\.\s?(?:-?[A-Z]\.\s?)*)")


def author_list_starts(texts: Sequence[str]) -> bool:
    """Does an unheaded author-year bibliography start at texts[0] ('Feynman, R. P., Phys. Rev.
    94, 262 (1954).' then more such entries, in alphabetical order, with years): REVTeX's
    author-year styles print no heading."""
    if not _SURNAME_OPENS.match(texts[0]):
        return False
    window = [t for t in texts[:12] if t.strip()]
    surnames = [m.group("s").casefold() for t in window if (m := _SURNAME_OPENS.match(t))]
    years = sum(bool(_ANY_YEAR_RE.search(t)) for t in window)
    return len(surnames) >= 4 and years >= 4 and surnames == sorted(surnames)


def numbered_list_starts(texts: Sequence[str]) -> bool:
    """Does an unheaded numbered bibliography start at texts[0] ('[1] A. Author, ...' then
    '[2]', '[3]' at line starts, with years): APS papers print no 'References' heading."""
    if entry_label(texts[0]) != 1 or not (texts[0].lstrip().startswith("[") or GLUED_LABEL_RE.match(texts[0])):
        return False
    labels = [entry_label(t) for t in texts[:16]]
    seen = [n for n in labels if n is not None]
    years = sum(bool(_ANY_YEAR_RE.search(t)) for t in texts[:16])
    return seen[:3] == [1, 2, 3] and years >= 2
