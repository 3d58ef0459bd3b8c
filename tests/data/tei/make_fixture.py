"""Write the TEI fixtures from the S2ORC JSON of the same GROBID parses.

    python tests/data/tei/make_fixture.py        # rewrites N18-3011.tei.xml, 2020.acl-main.207.tei.xml

S2ORC JSON is GROBID's TEI converted by doc2json (allenai/s2orc-doc2json, grobid2json); this
script runs that conversion backwards, laying the XML out as GROBID 0.7 writes it: the TEI
namespace, `xml:id`s (`b0`, `fig_0`, `tab_1`, `formula_0`), one flat `<div>` per heading with
`<head n="2.1">`, `<ref type="bibr" target="#b3">` for citations, body-level
`<note place="foot">` for paragraphs outside any section (doc2json's section-less paragraphs),
`<formula>` with its `<label>`, `<figure>` / `<figure type="table">` with `<label>`, `<figDesc>`
and `<table>` rows, back matter in `<back>`, the bibliography in `<listBibl>`.

Only what the JSON holds goes in: no coordinates (S2ORC has no pages), no affiliations, and a
figure's `<head>` only where the JSON gives its number. It reads the JSON directly (the standard
library only), not through litloop's readers, so the fixture does not inherit their mistakes.
"""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

HERE = Path(__file__).resolve().parent
S2ORC = HERE.parent / "s2orc"
PAPERS = ("N18-3011", "2020.acl-main.207")

HEADER = """<?xml version="1.0" encoding="UTF-8"?>
<!-- Converted by tests/data/tei/make_fixture.py from tests/data/s2orc/{source} (GROBID's parse of
     the same PDF as S2ORC JSON): GROBID's TEI layout, not GROBID's own bytes. -->
<TEI xml:space="preserve" xmlns="http://www.tei-c.org/ns/1.0" 
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" 
xsi:schemaLocation="http://www.tei-c.org/ns/1.0 https://raw.githubusercontent.com/kermitt2/grobid/master/grobid-home/schemas/xsd/Grobid.xsd"
 xmlns:xlink="http://www.w3.org/1999/xlink">
"""
NS = ' xmlns="http://www.tei-c.org/ns/1.0"'


def main(names: list[str]) -> None:
    for name in names or PAPERS:
        record = json.loads((S2ORC / f"{name}.json").read_text(encoding="utf-8"))
        out = HERE / f"{name}.tei.xml"
        out.write_text(tei(record, f"{name}.json"), encoding="utf-8")
        print(f"wrote {out}")


def tei(record: dict, source: str) -> str:
    parse = record.get("pdf_parse") or record.get("grobid_parse") or record
    bib_ids = {key: entry.get("ref_id") or f"b{n}" for n, (key, entry) in
               enumerate(sorted(parse.get("bib_entries", {}).items(), key=lambda kv: _number(kv[0])))}
    return "".join([
        HEADER.format(source=source),
        _header(record, parse),
        '\t<text xml:lang="en">\n\t\t<body>\n',
        _body(parse, bib_ids),
        "\t\t</body>\n\t\t<back>\n",
        _back(parse, bib_ids),
        "\t\t</back>\n\t</text>\n</TEI>\n",
    ])


# --- header ---------------------------------------------------------------------------------


def _header(record: dict, parse: dict) -> str:
    meta = record.get("metadata") or {}
    title = escape(record.get("title") or meta.get("title") or "")
    year = str(record.get("year") or meta.get("year") or "")
    published = f'\n\t\t\t\t<date type="published" when="{year}">{year}</date>' if year else ""
    imprint_date = f'<date type="published" when="{year}" />' if year else "<date/>"
    authors = "".join(_author(a, "\t\t\t\t\t\t") for a in record.get("authors") or meta.get("authors") or [])
    venue = meta.get("venue") or record.get("venue") or ""
    monogr_title = f'\t\t\t\t\t\t<title level="m">{escape(venue)}</title>\n' if venue else ""
    abstract = record.get("abstract") or " ".join(p["text"] for p in parse.get("abstract") or [])
    return f"""\t<teiHeader xml:lang="en">
\t\t<fileDesc>
\t\t\t<titleStmt>
\t\t\t\t<title level="a" type="main">{title}</title>
\t\t\t</titleStmt>
\t\t\t<publicationStmt>
\t\t\t\t<publisher/>
\t\t\t\t<availability status="unknown"><licence/></availability>{published}
\t\t\t</publicationStmt>
\t\t\t<sourceDesc>
\t\t\t\t<biblStruct>
\t\t\t\t\t<analytic>
{authors}\t\t\t\t\t\t<title level="a" type="main">{title}</title>
\t\t\t\t\t</analytic>
\t\t\t\t\t<monogr>
{monogr_title}\t\t\t\t\t\t<imprint>
\t\t\t\t\t\t\t{imprint_date}
\t\t\t\t\t\t</imprint>
\t\t\t\t\t</monogr>
\t\t\t\t</biblStruct>
\t\t\t</sourceDesc>
\t\t</fileDesc>
\t\t<encodingDesc>
\t\t\t<appInfo>
\t\t\t\t<application ident="GROBID">
\t\t\t\t\t<desc>GROBID - A machine learning software for extracting information from scholarly documents</desc>
\t\t\t\t\t<ref target="https://github.com/kermitt2/grobid"/>
\t\t\t\t</application>
\t\t\t</appInfo>
\t\t</encodingDesc>
\t\t<profileDesc>
\t\t\t<abstract>
<div{NS}><p>{escape(abstract)}</p></div>
\t\t\t</abstract>
\t\t</profileDesc>
\t</teiHeader>
"""


def _author(author: dict, indent: str) -> str:
    names = [f'<forename type="first">{escape(author["first"])}</forename>'] if author.get("first") else []
    names += [f'<forename type="middle">{escape(m)}</forename>' for m in author.get("middle") or []]
    if author.get("last"):
        names.append(f'<surname>{escape(author["last"])}</surname>')
    if author.get("suffix"):
        names.append(f'<genName>{escape(author["suffix"])}</genName>')
    email = f"\n{indent}\t<email>{escape(author['email'])}</email>" if author.get("email") else ""
    return f"{indent}<author>\n{indent}\t<persName>{''.join(names)}</persName>{email}\n{indent}</author>\n"


# --- body -----------------------------------------------------------------------------------


def _body(parse: dict, bib_ids: dict[str, str]) -> str:
    out, current, div = [], None, []
    formulas = iter(range(10_000))

    def close() -> None:
        if current is not None and div:
            num, section = current
            n = f" n={quoteattr(num)}" if num else ""
            head = f"<head{n}>{escape(section)}</head>" if section or num else ""
            out.append(f"<div{NS}>{head}{''.join(div)}</div>\n")

    for paragraph in parse.get("body_text") or []:
        key = (paragraph.get("sec_num") or "", paragraph.get("section") or "")
        if key == ("", ""):  # doc2json's section-less paragraphs: GROBID's body-level notes
            close()
            current, div = None, []
            out.append(f'<note{NS} place="foot">{_inline(paragraph, bib_ids)}</note>\n')
            continue
        if key != current:
            close()
            current, div = key, []
        div.append(_paragraph(paragraph, bib_ids, formulas))
    close()
    out.extend(_object(ref_id, entry) for ref_id, entry in (parse.get("ref_entries") or {}).items())
    return "".join(out)


def _paragraph(paragraph: dict, bib_ids: dict[str, str], formulas) -> str:
    spans = paragraph.get("eq_spans") or []
    if paragraph.get("text", "").strip().upper() == "EQUATION" and spans:
        return "".join(
            f'<formula xml:id="formula_{next(formulas)}">{escape(s.get("raw_str") or s.get("latex") or "")}'
            f'<label>{escape(s.get("eq_num") or "")}</label></formula>' for s in spans)
    return f"<p>{_inline(paragraph, bib_ids)}</p>"


def _inline(paragraph: dict, bib_ids: dict[str, str]) -> str:
    """The paragraph's text with its cite and ref spans as GROBID's <ref> elements."""
    text = paragraph.get("text") or ""
    spans = [("bibr", s) for s in paragraph.get("cite_spans") or []]
    spans += [(_ref_type(s), s) for s in paragraph.get("ref_spans") or []]
    spans.sort(key=lambda ts: ts[1]["start"])
    out, at = [], 0
    for kind, span in spans:
        start, end = span["start"], span["end"]
        if start < at or text[start:end] != span["text"]:
            continue  # overlapping or stale offsets: leave the words as text
        target = _target(kind, span.get("ref_id"), bib_ids)
        out.append(escape(text[at:start]))
        out.append(f'<ref type="{kind}"{target}>{escape(text[start:end])}</ref>')
        at = end
    out.append(escape(text[at:]))
    return "".join(out)


def _ref_type(span: dict) -> str:
    ref_id = (span.get("ref_id") or "").upper()
    if ref_id.startswith("TABREF") or span["text"].lower().startswith("tab"):
        return "table"
    return "figure"


def _target(kind: str, ref_id: str | None, bib_ids: dict[str, str]) -> str:
    """doc2json's ids back to GROBID's: BIBREF12 -> #b12, FIGREF0 -> #fig_0, TABREF3 -> #tab_3."""
    if not ref_id:
        return ""
    if kind == "bibr":
        return f' target="#{bib_ids[ref_id]}"' if ref_id in bib_ids else ""
    m = re.fullmatch(r"(FIG|TAB)REF(\d+)", ref_id)
    return f' target="#{m.group(1).lower()}_{m.group(2)}"' if m else ""


def _object(ref_id: str, entry: dict) -> str:
    m = re.fullmatch(r"(FIG|TAB)REF(\d+)", ref_id)
    if not m:
        return ""
    is_table = m.group(1) == "TAB" or entry.get("type_str") == "table"
    xml_id = f"{m.group(1).lower()}_{m.group(2)}"
    num = "" if entry.get("num") in (None, "") else str(entry["num"])
    head = f"<head>{'Table' if is_table else 'Figure'} {escape(num)} :</head>" if num else "<head/>"
    parts = [head, f"<label>{escape(num)}</label>" if num else "<label/>",
             f"<figDesc>{escape(entry.get('text') or '')}</figDesc>"]
    if is_table:
        parts.append(_table(entry.get("content") or ""))
    kind = ' type="table"' if is_table else ""
    return f'<figure{NS}{kind} xml:id="{xml_id}">{"".join(parts)}</figure>\n'


def _table(content: str) -> str:
    """S2ORC's '<table><tr><td>..' (doc2json renamed GROBID's row/cell) back to row/cell."""
    rows = []
    for row in re.findall(r"<tr>(.*?)</tr>", content, re.DOTALL):
        cells = [html.unescape(re.sub(r"<[^>]+>", " ", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL)]
        rows.append("<row>" + "".join(f"<cell>{escape(c)}</cell>" for c in cells) + "</row>")
    return f"<table>{''.join(rows)}</table>" if rows else "<table/>"


# --- back matter and bibliography -----------------------------------------------------------


def _back(parse: dict, bib_ids: dict[str, str]) -> str:
    out = []
    for paragraph in parse.get("back_matter") or []:
        section = paragraph.get("section") or ""
        kind = "acknowledgement" if section.lower().startswith("acknowledg") else "annex"
        # doc2json names a headless back division by its type ('annex'): no <head> then
        head = "" if section == kind else f"<head>{escape(section)}</head>"
        out.append(f'\t\t\t<div type="{kind}">\n<div{NS}>{head}<p>{_inline(paragraph, bib_ids)}</p></div>\n'
                   "\t\t\t</div>\n")
    entries = sorted((parse.get("bib_entries") or {}).items(), key=lambda kv: _number(kv[0]))
    out.append('\n\t\t\t<div type="references">\n\n\t\t\t\t<listBibl>\n\n')
    out.extend(_bib(bib_ids[key], entry) for key, entry in entries)
    out.append("\t\t\t\t</listBibl>\n\t\t\t</div>\n")
    return "".join(out)


def _bib(xml_id: str, entry: dict) -> str:
    authors = "".join(_author(a, "\t\t") for a in entry.get("authors") or [])
    title = escape(entry.get("title") or "")
    venue = escape(entry.get("venue") or "")
    year = entry.get("year")
    date = f'<date type="published" when="{year}" />' if isinstance(year, int) else "<date />"
    scopes = "".join(
        f'\t\t\t<biblScope unit="{unit}">{escape(str(entry[key]))}</biblScope>\n'
        for key, unit in (("volume", "volume"), ("issue", "issue"), ("pages", "page")) if entry.get(key))
    analytic = f'\t<analytic>\n\t\t<title level="a" type="main">{title}</title>\n{authors}\t</analytic>\n' if title else ""
    if title:
        monogr_title = f'\t\t<title level="m">{venue}</title>\n' if venue else ""
    else:  # a book: its title is the monograph's
        monogr_title = f'\t\t<title level="m" type="main">{venue}</title>\n{authors}'

    raw = entry.get("raw_text") or ""
    note = f'\t<note type="raw_reference">{escape(raw)}</note>\n' if raw else ""
    return (f'<biblStruct xml:id="{xml_id}">\n{analytic}\t<monogr>\n{monogr_title}'
            f"\t\t<imprint>\n{scopes}\t\t\t{date}\n\t\t</imprint>\n\t</monogr>\n{note}</biblStruct>\n\n")


def _number(key: str) -> int:
    m = re.search(r"(\d+)$", key)
    return int(m.group(1)) if m else 1 << 62


if __name__ == "__main__":
    main(sys.argv[1:])
