"""The content reader's public names, kept where callers import them: the reader lives in :mod:`tutorzoo.envs.reading`.

Example::

    from tutorzoo.envs.content import ContentReader
    reading = ContentReader.for_task(task).read("1/2 + 1/3 = 5/6")
"""

from __future__ import annotations

from tutorzoo.envs.reading.claims import DEMANDS, EMPTY, FALSE, TRUE, UNCHECKED, Claim, Reading, with_reading
from tutorzoo.envs.reading.expressions import evaluate, parse
from tutorzoo.envs.reading.normalise import normalise, sentences
from tutorzoo.envs.reading.operations import KC_OPERATIONS
from tutorzoo.envs.reading.reader import ContentReader
from tutorzoo.envs.reading.wrong_rules import WRONG_RULES

__all__ = ["DEMANDS", "EMPTY", "FALSE", "KC_OPERATIONS", "TRUE", "UNCHECKED", "WRONG_RULES", "Claim", "ContentReader",
           "Reading", "evaluate", "normalise", "parse", "sentences", "with_reading"]
