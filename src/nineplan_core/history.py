"""Turning an agent's free-text query into plain search words that no engine can choke on.

A word of a script written with spaces between words (Latin, Cyrillic, Greek, …) matches
whole words only, however short: `a` or `or` never matches inside `database` or `work`. A
word of a script written without spaces (Chinese, Japanese, Korean, Thai, …) is a run of
several words to every word index, so a part of it is searched as a substring when the word
search finds nothing; `excerpt` then shows where it matched.
"""

import re
import unicodedata

from nineplan_core.results import SNIPPET_MARKS

#: A word: a run of letters and digits (search terms, and the memory store's index).
WORD = re.compile(r"[^\W_]+")
MAX_TERMS = 32
#: Scripts written without spaces between words, by the start of their characters' names.
_SPACELESS_SCRIPTS = (
    "CJK",
    "HIRAGANA",
    "KATAKANA",
    "HALFWIDTH KATAKANA",
    "HANGUL",
    "HALFWIDTH HANGUL",
    "BOPOMOFO",
    "THAI",
    "LAO",
    "KHMER",
    "MYANMAR",
    "TIBETAN",
    "YI ",
    "IDEOGRAPHIC",
)
#: The characters an excerpt shows before and after its first match.
_BEFORE, _AFTER = 24, 56


def search_terms(query: str) -> list[str]:
    """The distinct words of `query`, lower-cased, in order, at most MAX_TERMS.

    Operators (`AND`, `OR`, `NOT`, `NEAR`), quotes and punctuation are never syntax: the
    punctuation separates words, and the operators are words like any other. Adapters quote
    each word and OR them, so all-word matches rank first through BM25.
    """
    words = dict.fromkeys(word.lower() for word in WORD.findall(query))
    return list(words)[:MAX_TERMS]


def is_spaceless(term: str) -> bool:
    """Whether `term` is written in a script without spaces between words (CJK, Thai, …)."""
    return any(unicodedata.name(char, "").startswith(_SPACELESS_SCRIPTS) for char in term)


def substring_terms(terms: list[str]) -> list[str]:
    """The terms the substring fallback looks for: those of scripts without spaces."""
    return [term for term in terms if is_spaceless(term)]


#: A trigram index finds parts of words this long or longer; shorter ones need a scan.
TRIGRAM_CHARS = 3


def trigram_terms(terms: list[str]) -> list[str]:
    """The substring terms a trigram index can look up (a part of a longer run of text)."""
    return [term for term in substring_terms(terms) if len(term) >= TRIGRAM_CHARS]


def needs_scan(terms: list[str]) -> bool:
    """Whether some substring term is too short for a trigram index and needs a scan."""
    return any(len(term) < TRIGRAM_CHARS for term in substring_terms(terms))


def excerpt(text: str, terms: list[str]) -> str:
    """A window of the line of `text` where one of `terms` first occurs (in any case), every
    occurrence in it wrapped in SNIPPET_MARKS, whitespace runs shown as one space; '' when
    none occurs. For substring matches, which a word index cannot mark."""
    if not terms:
        return ""
    pattern = re.compile(
        "|".join(re.escape(term) for term in sorted(terms, key=len, reverse=True)),
        re.IGNORECASE,
    )
    first = pattern.search(text)
    if first is None:
        return ""
    line_start = text.rfind("\n", 0, first.start()) + 1
    line_end = text.find("\n", first.end())
    start = max(line_start, first.start() - _BEFORE)
    if start > line_start and (space := text.find(" ", start, first.start())) >= 0:
        start = space + 1  # begin at a word where the script has words
    text = text[: len(text) if line_end < 0 else line_end]
    end = min(len(text), first.end() + _AFTER)
    if end < len(text) and (space := text.rfind(" ", first.end(), end)) >= 0:
        end = space  # end at a word where the script has words
    marked = pattern.sub(lambda m: f"{SNIPPET_MARKS[0]}{m[0]}{SNIPPET_MARKS[1]}", text[start:end])
    shown = " ".join(marked.split())
    return ("…" if start > line_start else "") + shown + ("…" if end < len(text) else "")
