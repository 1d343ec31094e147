"""Turning an agent's free-text query into plain search words that no engine can choke on."""

import re

#: A word: a run of letters and digits (search terms, and the memory store's index).
WORD = re.compile(r"[^\W_]+")
MAX_TERMS = 32


def search_terms(query: str) -> list[str]:
    """The distinct words of `query`, lower-cased, in order, at most MAX_TERMS.

    Operators, quotes and punctuation are separators, never syntax: adapters quote each
    word and OR them, so all-word matches rank first through BM25.
    """
    words = dict.fromkeys(word.lower() for word in WORD.findall(query))
    return list(words)[:MAX_TERMS]


#: A trigram index finds parts of words this long or longer; shorter ones need a scan.
TRIGRAM_CHARS = 3


def trigram_terms(terms: list[str]) -> list[str]:
    """The terms a trigram index can look up (text without spaces: a part of a longer word)."""
    return [term for term in terms if len(term) >= TRIGRAM_CHARS]


def needs_scan(terms: list[str]) -> bool:
    """Whether some term is too short for a trigram index and needs a substring scan."""
    return any(len(term) < TRIGRAM_CHARS for term in terms)
