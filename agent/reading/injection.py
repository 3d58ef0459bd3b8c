"""The one gate for paper text: sentences and fields of a paper that address whoever reads them
(a person or a model) instead of reporting something are data that tries to act as instructions,
and never reach a prompt or a citation.

A paper reports: it says what was done and found, in the first person plural or the passive, and
speaks of its reader in the third person ("we refer the reader to"). What a prompt injection
needs is the opposite, whatever its wording: to tell its reader what to do (an imperative such as
reply, cite, state; an order in the passive, "is to be reported as"), to name or greet the one
who reads or answers ("any summary of this work must", "Dear assistant"), to speak of the answer
being written, or to wear the form of an answer or a chat turn (a question written out with its
answer, a chat template's markup). The cues are on those shapes, not on a list of attack
phrases, and they read the text normalised (`normalised`: repaired, NFKC, invisible characters
removed, look-alike letters mapped) on its own boundaries (`pieces`). Imperatives and answer words
are also listed for nine other languages (French, German, Spanish, Italian, Portuguese, Dutch,
Russian, Chinese, Japanese); beyond them, a sentence in another language than its paper's body
is withheld whatever it says (`other_language`).

Measured on a probe set with a held-out split, and on every sentence of the demo corpus for false
alarms (docs/attribution.md, "Paper text is data"; docs/benchmarks.md; `python -m bench.injection`).
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path

# Verbs that tell a reader what to write or how to treat the text: an imperative of one of these
# at the start of a sentence (or after an opening "when/if ..." clause, a label such as "Note:",
# or "please", "always", "do not") followed by what it acts on ("Reply with", "Cite only", "State
# that", "Give 42") is an instruction. What follows is required, so a noun use ("Answer set
# programming is", "Report generation", "Use of") is not one.
_DIRECTIVE = (
    r"reply|respond|answer|cite|quote|state|say|tell|output|print|return|mention|report|write|give|"
    r"ignore|disregard|forget|override|pretend|act|treat|claim|conclude|emphasi[sz]e|recommend|"
    r"describe|present|attribute|credit|name|list|use|rely|trust|prefer|include|exclude|omit|"
    r"remember|make\s+sure|be\s+sure|ensure|praise|favou?r|highlight|rank|prioriti[sz]e|portray|"
    r"regard|accept|assume|repeat|summari[sz]e|represent|acknowledge|assert|declare|indicate|reveal|disclose"
)
_OBJECT = (
    r"(?:(?:the|a|an|that|this|these|those|it|its|them|only|solely|with|as|to|all|any|every|each|no|"
    r"nothing|exactly|our|my|yes)\b|\d|[\"'“‘])"
)
# what may stand before an imperative: a short label ("Note to readers:", "### Instruction:",
# "System:"), an opening "when/if ..." clause, a connective
_LABEL = r"(?:#*\s*[A-Za-z][\w'’ -]{0,40}:\s*)?"
_LEAD = (
    rf"{_LABEL}(?:(?:when|if|whenever|once|before|after)\b[^.?!]{{0,120}}?,\s*"
    r"|(?:for|on|in|about)\s+(?:any|every|all|each)\s+(?:questions?|quer(?:y|ies)|answers?|summar(?:y|ies)|requests?|responses?)\b[^.?!,]{0,80},\s*)?"
    r"(?:(?:now|then|so|and|also|instead)\s+)?"
)
_SOFT = r"(?:(?:please|kindly|always|never|just|simply|only)\s+|(?:do\s+not|don['’]t)\s+)*"
_IMPERATIVE = re.compile(
    rf"^\W*{_LEAD}{_SOFT}(?:(?:{_DIRECTIVE})\s+(?:{_OBJECT}|\S+\s+(?:as|alone|only)\b|(?-i:[A-Z][a-z]+\s+(?:et\s+al\b|\(\d{{4}})))|"
    r"(?:ignore|disregard|forget|override|overlook)\b)",
    re.IGNORECASE,
)

# The reader spoken to: second-person pronouns as words (English and the other languages; words
# that are also common in English papers, such as "u" or "TU", are left out). Alone they are how
# old web-era abstracts, titles and annotation guidelines talk ("What can you do with a Web in
# your pocket?"), so they count only beside what makes them an instruction (`_SPOKEN_TO`).
_SECOND_PERSON = re.compile(
    r"\b(?:you|your|yours|yourself|yourselves)\b"
    r"|\b(?:vous|votre|toi)\b"  # French
    r"|\b(?:dich|dir|dein|deine|euch)\b"  # German (informal; formal "Sie" with its verb, below)
    r"|\b(?:usted|ustedes|tú|vosotros)\b"  # Spanish
    r"|\b(?:voi|vostro|tuo)\b"  # Italian
    r"|\b(?:você|vocês)\b"  # Portuguese
    r"|\b(?:jij|jouw)\b"  # Dutch
    r"|\b(?:вы|ты|вам|тебе|ваш)\b"  # Russian
    r"|你|您|あなた",  # Chinese, Japanese
    re.IGNORECASE,
)
# ... spoken to about answering, citing or ignoring, told what it must do, or told what it is
_ANSWER_VERB = re.compile(r"\b(?:answer|reply|respond|cite|quote|ignore|disregard)\b", re.IGNORECASE)
_MODAL = (
    r"(?:must|should|shall|has\s+to|have\s+to|needs?\s+to|is\s+to|are\s+to|is\s+required\s+to|are\s+required\s+to|"
    r"ought\s+to|may\s+only|can\s+only|is\s+expected\s+to|are\s+expected\s+to|"
    r"(?:is|are)\s+(?:asked|instructed|requested|advised|obliged|obligated|required|expected)\s+to)"
)
_YOU_TOLD = re.compile(
    rf"\byou\b[^.?!]{{0,30}}?\b{_MODAL}\s+(?:(?:always|only|never|not|also)\s+)?(?:{_DIRECTIVE})\b", re.IGNORECASE
)
_YOU_ARE = re.compile(
    r"\byou\s+are\s+(?:now\s+)?(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,2}(?:assistant|ai|model|chatbot|agent|bot|reviewer|summari[sz]er)\b",
    re.IGNORECASE,
)


# ... and what an order to a reader is about: a figure, this work or the others, a result, a
# citation. A guideline a paper quotes for its annotators tells "you" how to judge a text ("You
# should treat such a summary as incorrect") and names none of these.
_STAKE = re.compile(
    r"\d|\b(?:this|our|the\s+present|these)\s+(?:[\w-]+\s+)?(?:papers?|works?|study|studies|articles?|methods?|models?|"
    r"approach(?:es)?|results?|systems?|documents?|manuscripts?|rows?|tables?|figures?|authors?)\b"
    r"|\b(?:other|competing|previous|prior)\s+(?:papers?|sources?|results?|works?|studies|figures?|methods?|systems?)\b"
    r"|\b(?:accuracy|f1|score|scores|figure|number|result|results|citation|sources?|state\s+of\s+the\s+art|best)\b",
    re.IGNORECASE,
)


def _spoken_to(piece: str) -> bool:
    if not _SECOND_PERSON.search(piece):
        return False
    return bool(
        _ANSWER_VERB.search(piece) or _YOU_ARE.search(piece) or (_YOU_TOLD.search(piece) and _STAKE.search(piece))
    )


# Who a paper has no business giving orders to: a reader, a summary or an answer, a model or an
# automated system that processes the text; named with what it must do
_MACHINE = (
    r"(?:ai|automated|automatic|machine|llm|llm-based|language[- ]model|generative|downstream|retrieval|"
    r"summari[sz]ation|reading|search|chat|citation|literature|review(?:ing)?)[- ](?:[\w-]+\s+){0,2}?"
    r"(?:systems?|tools?|pipelines?|agents?|models?|reviewers?|readers?|assistants?|engines?|summari[sz]ers?|"
    r"services?|crawlers?|bots?|software)"
)
_ADDRESSEE = re.compile(
    rf"\b{_MACHINE}\b[^.?!]{{0,80}}?\b(?:{_MODAL}|will)\s+(?:(?:always|only|never|not|also)\s+)?(?:{_DIRECTIVE}|agree|admit)\b"
    r"|\b(?:duty|task|job|obligation|responsibility)\s+of\s+(?:any|every|each|all|the)\s+[^.?!]{0,60}?\bto\s+"
    rf"(?:(?:always|only|never|not|also)\s+)?(?:{_DIRECTIVE})\b"
    rf"|\b(?:{_MACHINE}|ai|assistants?|chatbots?|chat\s*bots?|language\s+models?|llms?|gpt|copilot|summar(?:y|ies)|"
    r"summari[sz]ers?|answers?|responses?|replies|whoever|anyone|anybody|readers?|those\s+who)\b[^.?!]{0,80}?"
    rf"\b{_MODAL}\s+(?:(?:always|only|never|not|also)\s+)?(?:{_DIRECTIVE}|agree|admit)\b",
    re.IGNORECASE,
)
# A reader greeted as one (a vocative: "Dear assistant", "Attention, language models") or named
# as the one reading this very text ("any model processing this page")
_READER = (
    rf"(?:{_MACHINE}|ai|assistants?|chatbots?|chat\s*bots?|language\s+models?|llms?|readers?|reviewers?|bots?|"
    r"models?|gpt[\w-]*|copilot)"
)
_GREETED = re.compile(
    rf"^\W*(?:dear|hello|hi|hey|attention|greetings|calling)\b[,:]?\s+(?:all\s+|any\s+|the\s+|my\s+|fellow\s+)?{_READER}\b"
    rf"|\b{_READER}\s+(?:that\s+(?:is|are)\s+|who\s+(?:is|are)\s+)?(?:reading|processing|summari[sz]ing|parsing|ingesting|"
    r"analy[sz]ing|indexing)\s+(?:this|these)\b",
    re.IGNORECASE,
)
# The answering situation named: a sentence of a paper has no business knowing it is being used
# to answer a question, summarised, or read by a machine
_ANSWERING = re.compile(
    r"\b(?:correct|right|only\s+valid)\s+(?:answer|response|figure)\b(?:\s+\w+){0,6}?\s+(?:is|are|should|must)\b"
    r"|\b(?:the\s+)?(?:figure|number|answer)\s+to\s+(?:give|report|state|cite)\b"
    r"|\b(?:notes?|messages?|instructions?|guidance|directions?)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:ai|assistants?|language\s+models?|"
    rf"llms?|chatbots?|readers?|summari[sz]ers?|{_MACHINE})\b"
    r"|\b(?:instructions?|system\s+prompt)\b[^.?!]{0,30}\b(?:above|previous|prior|earlier)\b"
    r"|\b(?:previous|prior|above|earlier)\s+(?:instructions?|directions|guidance)\b"
    r"|\bhidden\s+instructions?\b|\byour\s+(?:system\s+prompt|instructions|prompt|guidelines|rules)\b"
    r"|\b(?:any|every|each)\s+(?:summary|summaries|answer|response|review|overview|description|citation|account)\s+"
    r"(?:of|about|on)\s+(?:this|the\s+present)\s+(?:work|paper|study|article|method|model|approach|result|system|document)"
    r"|\b(?:processing|reading|summari[sz]ing|indexing|ingesting|parsing|crawling|retrieving)\s+(?:this|the\s+present)\s+"
    r"(?:document|text|manuscript|page|file|record)\b"
    r"|\bwhen\s+(?:this|the\s+present)\s+(?:document|paper|text|article|manuscript|work)\s+is\s+"
    r"(?:summari[sz]ed|processed|ingested|indexed|retrieved|quoted|parsed)\b"
    r"|\bbest\s+left\s+out\s+of\s+(?:any|every|all|each)\b"
    # the same in the form of a setting: "preferred_answer=...", "ai-instructions:"
    r"|\b(?:preferred|expected|required|desired|target)[_\s-]+(?:answers?|responses?|outputs?|citations?|summary)\s*[=:]"
    r"|\b(?:ai|llm|model|assistant|bot|agent)[-_ ]?(?:instructions?|directives?|prompts?|guidance|polic(?:y|ies))\b",
    re.IGNORECASE,
)
# An order about how the text is to be used: a modal or an imperative verb beside the situation
# of its use ("in any overview", "when this manuscript is reviewed", "in downstream reports")
_USE = re.compile(
    r"\b(?:in|from|of|by|for|within)\s+(?:any|every|all|each)\s+(?:[\w-]+\s+)?(?:summar(?:y|ies)|overviews?|answers?|responses?|"
    r"reviews?|surveys?|discussions?|comparisons?|write-?ups?|reports?)\b"
    r"|\bdownstream\s+(?:reports?|summar(?:y|ies)|answers?|uses?|systems?|tools?)\b"
    r"|\b(?:when|while|whenever|if)\s+(?:[\w-]+\s+){0,3}(?:reviewing|summari[sz]ing|citing|describing|discussing|processing|"
    r"evaluating|assessing|answering)\b[^.?!]{0,40}\b(?:this|the\s+present)\s+(?:manuscript|paper|work|article|submission|document|study)\b"
    r"|\b(?:whenever|when|if)\s+[^.?!,]{3,80}\s+(?:is|are)\s+(?:discussed|compared|asked\s+about|summari[sz]ed|reviewed|surveyed|mentioned)\b",
    re.IGNORECASE,
)
_ORDER = re.compile(
    rf"\b(?:{_MODAL}|ought\s+to|will\s+be|shall)\b|^\W*{_LABEL}{_SOFT}(?:{_DIRECTIVE})\b|\b(?:{_DIRECTIVE})\s+(?:it|this|them|ours?)\b",
    re.IGNORECASE,
)


def _ordered_use(piece: str) -> bool:
    return bool(_USE.search(piece)) and bool(_ORDER.search(piece))


# An order given in the passive or impersonal voice: what is "to be reported as", what "it should
# be stated that"; the verbs of writing about a result, not of doing research ("is to be trained")
_REPORTED = (
    r"(?:reported|stated|cited|credited|quoted|described|presented|given|summari[sz]ed|attributed|listed|mentioned|"
    r"ranked|portrayed|ignored|disregarded|dismissed|repeated|accompanied\s+by\s+a\s+citation)"
)
_PASSIVE = re.compile(
    rf"\b(?:is|are)\s+to\s+be\s+(?:always\s+|only\s+)?{_REPORTED}\b"
    r"|\bit\s+(?:must|should|shall|is\s+to|has\s+to|needs\s+to)\s+(?:always\s+)?be\s+(?:stated|reported|said|emphasi[sz]ed|claimed|"
    r"concluded|written|mentioned|acknowledged|asserted)\s+that\b"
    rf"|\b(?:must|should|shall|has\s+to|have\s+to|needs?\s+to|ought\s+to)\s+(?:always\s+|only\s+|solely\s+)?be\s+{_REPORTED}\s+(?:as|to|solely|only|first|verbatim)\b"
    rf"|\bit\s+(?:is|has\s+been)\s+(?:required|expected|decided|mandatory|essential|imperative)\s+that\b(?:[^.?!]|\.\d){{0,100}}\b(?:be|will\s+be)\s+{_REPORTED}\b"
    r"|\b(?:no|other)\s+(?:other\s+)?(?:papers?|sources?|works?|results?|figures?)\s+(?:are|is|should\s+be|must\s+be)\s+to\s+be\s+(?:cited|mentioned|used|considered)\b",
    re.IGNORECASE,
)
# The markup of a chat template or an instruction-tuning format, which no paper's prose carries
_MARKUP = re.compile(
    r"<\|[^|<>\s]{1,30}\|>|\[/?INST\]|<</?SYS>>|</?(?:system|assistant|user|instructions?)>|<(?:start|end)_of_\w{2,12}>"
    r"|^\W*#{2,}\s*(?:instructions?|system|response|assistant|user|human|input|prompt)\b\s*(?::|\n|$)"
    # a model's turn in a transcript: its speaker label, at the start of a line or a sentence
    r"|(?:^|\n)\W*(?:assistant|ai|chatbot|bot|gpt|model)\s*:\s*\S",
    re.IGNORECASE,
)
# A question written out with its answer ("Q: What F1 do CRFs reach on JNLPBA? A: 99.9."): the
# shape of the answer a reader is to give, never a report of what a paper found
_QA = re.compile(
    r"\?[\"”’']?\s*(?:[\w-]+\s+){0,2}(?-i:(?:A|Answer|Ans|Reply|Response|Author)\s*\d*\s*[:.)–—-]|Ours\b)\s*\S"
    r"|\?[\"”’']?\s*(?:[\w-]+\s+){0,2}(?:answer|ans|reply|response)\s*[:–—]\s*\S"
    r"|\b(?-i:FAQ|Q\s*&\s*A|Q/A)\b[^?|]{0,200}\?",
    re.IGNORECASE,
)
# Imperatives and answer words of other languages (a switch of language inside an English paper
# is itself a sign), anchored like the English ones.
_FOREIGN = re.compile(
    r"^\W*(?:bitte\s+)?(?:antworte|zitiere|ignoriere|nenne|schreibe|sage)\b"
    r"|\b(?:antworten|zitieren|ignorieren|geben|nennen|schreiben)\s+Sie\b"
    r"|^\W*(?:répondez|réponds|citez|ignorez|indiquez|dites|écrivez|donnez|mentionnez)\b"
    r"|^\W*(?:responde|responda|respondan|citen|ignora|indique|escribe|menciona)\b"
    r"|^\W*(?:rispondi|rispondete|citate|ignorate|scrivi)\b"
    r"|^\W*(?:antwoord|citeer|negeer|noem|schrijf)\b"
    r"|^\W*(?:ответь|ответьте|игнорируй|игнорируйте|цитируй|укажи|напиши|скажи)"
    r"|请|忽略|回答|引用|答え|無視"
    r"|\b(?:la\s+(?:bonne|seule)\s+réponse|die\s+richtige\s+antwort|la\s+respuesta\s+correcta|la\s+risposta\s+corretta|правильный\s+ответ)\b",
    re.IGNORECASE,
)


CUES: dict[str, re.Pattern[str] | Callable[[str], bool]] = {
    "spoken to": _spoken_to,
    "addressee": _ADDRESSEE,
    "answering": _ANSWERING,
    "reader greeted": _GREETED,
    "passive order": _PASSIVE,
    "use ordered": _ordered_use,
    "chat markup": _MARKUP,
    "question and answer": _QA,
    "other language": _FOREIGN,
    "imperative": _IMPERATIVE,
}


# Characters that change nothing a person reads but split the words a cue matches: zero-width
# spaces and joiners, the word joiner, the byte-order mark, soft hyphens, bidirectional controls.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u206a-\u206f\ufeff]"
)
_LATIN = re.compile(r"[A-Za-z]")
_LETTER = re.compile(r"[^\W\d_]")


@functools.cache
def _look_alikes() -> dict[str, str]:
    """Letters of other scripts that look like a Latin letter (Cyrillic "а", Greek "ο"), from the
    Unicode confusables table that `confusable-homoglyphs` ships."""
    import confusable_homoglyphs

    table = json.loads((Path(confusable_homoglyphs.__file__).parent / "confusables.json").read_text("utf-8"))
    out: dict[str, str] = {}
    for char, glyphs in table.items():
        if len(char) != 1 or char.isascii() or not _LETTER.match(char):
            continue
        latin = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii() and g["c"].isalpha()]
        if latin:
            out[char] = latin[0]
    return out


def normalised(text: str) -> str:
    """Paper text as the cues read it: mojibake repaired (`ftfy`), compatibility forms folded
    (NFKC: full-width "ｒｅｐｏｒｔ" is "report", ligatures are letters), invisible characters
    removed, and, in text written mostly in Latin letters, look-alike letters of other scripts
    read as the Latin letter they imitate ("rеpоrt" with Cyrillic е and о is "report"). Only the
    decision reads this form; what is shown and quoted stays the paper's own text."""
    import ftfy

    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", ftfy.fix_text(text, normalization="NFKC")))
    if text.isascii():
        return text
    alike = _look_alikes()
    letters = _LETTER.findall(text)
    latin = sum(1 for c in letters if _LATIN.match(c))
    foreign = sum(1 for c in letters if not _LATIN.match(c) and c not in alike)
    if latin <= foreign:  # a sentence in Russian or Greek is read as written
        return text
    return "".join(alike.get(c, c) for c in text)


_PIECE = re.compile(r"(?<=[.!?:;])\s+(?=[\"'“‘(\[]?[A-Z0-9])")


def pieces(text: str) -> list[str]:
    """What a cue is tried on: the text as one line, and each of its parts on boundaries of the
    text's own (its lines, its sentences by punctuation, a table row's cells), so an instruction
    is read as if it stood alone whatever the chunker joined it to (a title and the abstract's
    first sentence, a caption and a row)."""
    text = normalised(text)
    line = " ".join(text.split())
    out = [line]
    for part in [ln for ln in text.splitlines() if ln.strip()] + _PIECE.split(line):
        part = " ".join(part.split())
        if part and part not in out:
            out.append(part)
    for part in list(out):
        if "|" in part:
            out.extend(c.strip() for c in part.strip("|").split("|") if c.strip() and c.strip() not in out)
    return out


def _fires(cue: re.Pattern[str] | Callable[[str], bool], piece: str) -> bool:
    return bool(cue.search(piece)) if isinstance(cue, re.Pattern) else cue(piece)


def cues_of(text: str) -> list[str]:
    """The names of the cues a sentence shows (empty for ordinary prose), on its normalised
    form and on each of its parts (`pieces`)."""
    parts = pieces(text)
    return [name for name, cue in CUES.items() if any(_fires(cue, p) for p in parts)]


def steers(text: str) -> bool:
    """True for a sentence that tries to steer an answer (any cue): its paper is flagged in the
    answer and cannot be the only support of a claim."""
    return bool(text.strip()) and bool(cues_of(text))


def addresses_reader(text: str, language: str | None = None) -> bool:
    """True for a sentence that speaks to its reader or tells it what to answer, cite or ignore
    (the cues, `steers`), or, given its paper's body language (`body_language`), one written in
    another language (`other_language`): withheld from every prompt and every quote."""
    return steers(text) or other_language(text, language)


# ----------------------------------------------------------------------------- language is structure
#
# A paper is written in one language; a sentence in another inside it is either a quotation (a
# title, an example, a name) or text that does not belong to the paper's own report. The cues
# above list imperatives of nine languages; an instruction in the tenth passes them. So a
# sentence whose own words (quoted spans, brackets, capitalised names, numbers and formulas
# removed) are confidently in another language than its paper's body is withheld and flags its
# paper, whatever it says. Identified by py3langid (BSD-3; its naive Bayes model over 97
# languages ships inside the package).

# How unlikely the paper's language must be, and how many of the sentence's own words there must
# be, before a sentence is read as written in another language (docs/attribution.md has the
# false alarms on the demo corpus at these settings)
FOREIGN_MAX_P = 0.001
FOREIGN_MIN_WORDS = 5
FOREIGN_MIN_LETTERS = 12  # for scripts written without spaces (Chinese, Japanese, Thai)
BODY_MIN_P = 0.9

_SET_APART = re.compile(
    r"[\"“”„«][^\"“”„«»]{0,300}[\"“”»]|(?<!\w)['‘][^'‘’]{0,300}['’](?!\w)|\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}"
)
_WORD = re.compile(r"[^\W\d_]+")
_NO_SPACES = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


@functools.cache
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def own_words(text: str) -> list[str]:
    """The words of a sentence that say which language it is written in: what stands in quotes
    or brackets (titles, examples, citations) removed, and capitalised words after the first
    (names: "Deutsche Forschungsgemeinschaft", "Les Misérables"), numbers, one-letter variables."""
    words = _WORD.findall(_SET_APART.sub(" ", normalised(text)))
    return [w for i, w in enumerate(words) if (i == 0 or not w[0].isupper()) and (len(w) > 1 or not w.isascii())]


def language_scores(text: str) -> dict[str, float]:
    """Each language's probability for a text (py3langid, normalised over its 97 languages)."""
    return dict(_identifier().rank(text))


def body_language(texts: Iterable[str], max_chars: int = 20_000) -> str | None:
    """The language a paper's body is written in (ISO 639-1), from its text, or None when it is
    too short or too mixed to tell (then no sentence of it is read as foreign)."""
    sample, size = [], 0
    for t in texts:
        sample.append(t)
        size += len(t)
        if size >= max_chars:
            break
    words = own_words(" ".join(sample))
    if len(words) < 3 * FOREIGN_MIN_WORDS:
        return None
    lang, p = _identifier().classify(" ".join(words))
    return lang if p >= BODY_MIN_P else None


def other_language(text: str, language: str | None) -> bool:
    """Whether a sentence is written in another language than `language` (its paper's body
    language): enough words of its own (`own_words`), and the paper's language all but ruled
    out for them. False when the paper's language is unknown."""
    if not language:
        return False
    words = own_words(text)
    letters = sum(len(_NO_SPACES.findall(w)) for w in words)
    if len(words) < FOREIGN_MIN_WORDS and letters < FOREIGN_MIN_LETTERS:
        return False
    return language_scores(" ".join(words)).get(language, 0.0) < FOREIGN_MAX_P


def shown_field(value: object, name: str) -> str:
    """A paper's field as a prompt or a page shows it (title, venue, authors, a section name):
    itself, or a note that it was withheld when it addresses its reader. The one gate for text
    that is not split into sentences; sentences go through `addresses_reader`."""
    text = "" if value is None else str(value)
    return f"[{name} withheld: it addresses its reader]" if text and addresses_reader(text) else text
