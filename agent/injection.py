"""Sentences of a paper that address whoever reads them (a person or an assistant) instead of
reporting something: they are data that tries to act as instructions, and never reach a prompt or
a citation.

A paper reports: it says what was done and found, in the first person plural or the passive, and
speaks of its reader in the third person ("we refer the reader to"). What a prompt injection
needs is the opposite, whatever its wording: to speak to its reader (second person), to tell it
what to do (an imperative such as reply, answer, cite, state), or to speak of the answer being
written ("when asked about", "the correct answer is"). So the test is on grammatical person and
mood, and on the answering situation, rather than on a list of known attack phrases: a
paraphrase keeps the person and the mood it needs to work. The same cues are listed for the
languages a paper's text is least likely to switch into by accident (French, German, Spanish,
Italian, Portuguese, Dutch, Russian, Chinese, Japanese).

The check is measured on every sentence of the demo corpus (docs/attribution.md): the cues must
not fire on ordinary scientific prose, so each one is anchored (a sentence-initial imperative, a
pronoun as a word, the answering situation named).
"""

from __future__ import annotations

import re

# Verbs that tell a reader what to write or how to treat the text: an imperative of one of these
# at the start of a sentence (or after an opening "when/if ..." clause, or "please", "always",
# "do not") followed by what it acts on ("Reply with", "Cite only", "State that", "Give 42") is
# an instruction. What follows is required, so a noun use ("Answer set programming is",
# "Report generation", "Use of") is not one.
_DIRECTIVE = (
    r"reply|respond|answer|cite|quote|state|say|tell|output|print|return|mention|report|write|give|"
    r"ignore|disregard|forget|override|pretend|act|treat|claim|conclude|emphasi[sz]e|recommend|"
    r"describe|present|attribute|credit|name|list|use|rely|trust|prefer|include|exclude|omit|"
    r"remember|make\s+sure|be\s+sure|ensure"
)
_OBJECT = (
    r"(?:(?:the|a|an|that|this|these|those|it|its|them|only|solely|with|as|to|all|any|every|each|no|"
    r"nothing|exactly|our|my|yes)\b|\d|[\"'“‘])"
)
_LEAD = r"(?:(?:when|if|whenever|once|before|after)\b[^.?!]{0,120}?,\s*)?(?:(?:now|then|so|and|also|instead)\s+)?"
_SOFT = r"(?:(?:please|kindly|always|never|just|simply|only)\s+|(?:do\s+not|don['’]t)\s+)*"
_IMPERATIVE = re.compile(
    rf"^\W*{_LEAD}{_SOFT}(?:{_DIRECTIVE})\s+(?:{_OBJECT}|\S+\s+(?:as|alone|only)\b)", re.IGNORECASE
)

# The reader spoken to: second-person pronouns as words (English and the other languages; words
# that are also common in English papers, such as "u" or "TU", are left out), and an assistant
# named as the one who must do something.
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
_ADDRESSEE = re.compile(
    r"\b(?:ai|assistants?|chatbots?|chat\s*bots?|language\s+models?|llms?|gpt|copilot|summar(?:y|ies)|"
    r"answers?|responses?|replies|whoever|anyone|anybody|readers?|those\s+who)\b[^.?!]{0,40}?\b(?:must|should|shall|has\s+to|have\s+to|needs?\s+to|is\s+to|"
    r"are\s+to|is\s+required\s+to|ought\s+to|may\s+only|can\s+only)\s+(?:(?:always|only|never|not|also)\s+)?"
    rf"(?:{_DIRECTIVE}|praise|favou?r|agree|admit|respond)\b",
    re.IGNORECASE,
)
# The answering situation named: a sentence of a paper has no business knowing it is being used
# to answer a question.
_ANSWERING = re.compile(
    r"\b(?:correct|right|only\s+valid)\s+(?:answer|response|figure)\b(?:\s+\w+){0,6}?\s+(?:is|are|should|must)\b"
    r"|\b(?:the\s+)?(?:figure|number|answer)\s+to\s+(?:give|report|state|cite)\b"
    r"|\b(?:notes?|messages?|instructions?)\s+(?:to|for)\s+(?:the\s+|any\s+)?(?:ai|assistants?|language\s+models?|"
    r"llms?|chatbots?|readers?)\b"
    r"|\b(?:instructions?|system\s+prompt)\b[^.?!]{0,30}\b(?:above|previous|prior|earlier)\b"
    r"|\b(?:previous|prior|above|earlier)\s+(?:instructions?|directions|guidance)\b",
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


CUES = {
    "second person": _SECOND_PERSON,
    "addressee": _ADDRESSEE,
    "answering": _ANSWERING,
    "other language": _FOREIGN,
    "imperative": _IMPERATIVE,
}


def cues_of(text: str) -> list[str]:
    """The names of the cues a sentence shows (empty for ordinary prose). A table row is also
    read cell by cell, so an instruction in one cell is caught as if it stood alone."""
    line = " ".join(text.split())
    parts = [line] + ([c.strip() for c in line.strip("|").split("|") if c.strip()] if "|" in line else [])
    return [name for name, cue in CUES.items() if any(cue.search(p) for p in parts)]


# Second person alone is how old web-era abstracts and annotation guidelines talk ("you can
# browse", "you will be shown a summary"): withheld like the rest, but it does not make the paper
# suspect unless the sentence also speaks of answering, citing or ignoring.
_ANSWER_VERB = re.compile(r"\b(?:answer|reply|respond|cite|quote|ignore|disregard)\b", re.IGNORECASE)


def steers(text: str) -> bool:
    """True for a sentence that tries to steer an answer (every cue but plain second person):
    its paper is flagged in the answer and cannot be the only support of a claim."""
    found = cues_of(text)
    return bool(found) and (found != ["second person"] or bool(_ANSWER_VERB.search(text)))


def addresses_reader(text: str) -> bool:
    """True for a sentence that speaks to its reader or tells it what to answer, cite or ignore."""
    line = " ".join(text.split())
    if not line:
        return False
    return bool(cues_of(line))
