"""Plan ids (5 random characters of [0-9a-z] without 0, o, 1, l) and three-word session names."""

import copy
import functools
import random
import secrets
import string
from pathlib import Path
from typing import Any

import attrs

# No look-alikes: 0/o and 1/l are left out, so an id read aloud or copied by hand survives.
# Any five of [0-9a-z] stays a valid id (ids drawn before this alphabet still work).
PLAN_ID_ALPHABET = "".join(c for c in string.digits + string.ascii_lowercase if c not in "01ol")
_PATTERN = "aan"  # adjective-adjective-animal: always exactly three words


_PLAN_IDS = len(PLAN_ID_ALPHABET) ** 5


def random_plan_id() -> str:
    """A cryptographically random plan id: 32^5 ≈ 3.4e7 values, lowercase only so that
    case-insensitive file systems cannot collide two ids. One draw from the OS (a
    `secrets.choice` per character was five getrandom calls per plan added)."""
    number = secrets.randbelow(_PLAN_IDS)
    characters = []
    for _ in range(5):
        number, digit = divmod(number, len(PLAN_ID_ALPHABET))
        characters.append(PLAN_ID_ALPHABET[digit])
    return "".join(characters)


@functools.cache
def _word_lists() -> Any:
    """coolname's generator over its adjective-adjective-animal pattern, loaded once."""
    import coolname  # noqa: PLC0415 - coolname builds its default generator when imported
    from coolname import RandomGenerator  # noqa: PLC0415
    from coolname.loader import load_config  # noqa: PLC0415

    config = load_config(str(Path(coolname.__file__).parent / "data"))
    config[_PATTERN] = {**config[_PATTERN], "generator": True}
    return RandomGenerator(config)


@attrs.define
class ThreeWordNames:
    """Session names like `brave-quiet-otter` from coolname's curated word lists.

    coolname's own three-part slugs are sometimes four words (`x-y-of-z`), so this draws
    from its adjective-adjective-animal pattern only (about 2.4e8 names). Words that are
    not plain lowercase letters are redrawn, so every name matches `^[a-z]+-[a-z]+-[a-z]+$`.
    """

    seed: int | None = None
    _generator: Any = attrs.field(init=False, default=None)

    def _words(self) -> Any:
        # The word lists are built once per process (tens of milliseconds), with the first
        # name, not when the server starts; each instance draws from them with its own
        # random source (a shallow copy shares the lists).
        if self._generator is None:
            generator = copy.copy(_word_lists())
            generator.random = (
                random.Random(self.seed) if self.seed is not None else random.SystemRandom()  # noqa: S311 - names need spread, not secrecy; a seed is for tests
            )
            self._generator = generator
        return self._generator

    @property
    def combinations(self) -> int:
        return int(self._words().get_combinations_count(_PATTERN))

    def __call__(self) -> str:
        while True:
            name: str = self._words().generate_slug(_PATTERN)
            if all(
                word.isascii() and word.isalpha() and word.islower() for word in name.split("-")
            ):
                return name


@attrs.define
class SequentialPlanIds:
    """Predictable ids for tests and examples: 00001, 00002, ..."""

    count: int = 0

    def __call__(self) -> str:
        self.count += 1
        return f"{self.count:05d}"
