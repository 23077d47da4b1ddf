"""The content reader's public names, kept where callers import them: the reader lives in :mod:`tutorzoo.envs.reading`.

Example::

    from tutorzoo.envs.content import ContentReader
    reading = ContentReader.for_task(task).read("1/2 + 1/3 = 5/6")
"""

from __future__ import annotations

from tutorzoo.envs.reading import (
    DEMANDS,
    EMPTY,
    FALSE,
    KC_OPERATIONS,
    TRUE,
    UNCHECKED,
    WRONG_RULES,
    Claim,
    ContentReader,
    Reading,
    evaluate,
    normalise,
    parse,
    sentences,
    with_reading,
)

__all__ = ["DEMANDS", "EMPTY", "FALSE", "KC_OPERATIONS", "TRUE", "UNCHECKED", "WRONG_RULES", "Claim", "ContentReader",
           "Reading", "evaluate", "normalise", "parse", "sentences", "with_reading"]
