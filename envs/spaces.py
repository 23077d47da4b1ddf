"""Observation and action spaces of the tutoring env, and the text normalisation that keeps text inside them.

Text crosses the env boundary in both directions through :func:`normalize_text`: NFKC (but the characters of
:data:`CHARSET` it would rewrite -- ``½ ¼ ¾ ² ³ ¹ …`` -- are kept as written, and a fraction slash becomes ``/``),
control characters dropped (newline and tab kept), characters outside :data:`CHARSET` replaced by ``?``, and the
result clipped to the space's ``max_length``. So any string an agent sends (empty, 1 MB, control characters, any
Unicode) becomes a valid utterance, and every observation the env emits lies in its space.
"""

from __future__ import annotations

import re
import string
import unicodedata

import numpy as np
from gymnasium import spaces

from tutorzoo.envs.labels import COGNITION_STATES, INTENTS, STRATEGIES

# Printable ASCII plus the Latin-1 letters and the maths/typography symbols tutors and students use.
_EXTRA = "ÀÁÂÄÅÆÇÈÉÊËÌÍÎÏÑÒÓÔÖØÙÚÛÜÝßàáâäåæçèéêëìíîïñòóôöøùúûüýÿ×÷−–—‘’“”…°±²³¹½¼¾·√π∞≤≥≠≈∑∫Δθμ€£¥→←↑↓•"
CHARSET: str = string.printable.replace("\x0b", "").replace("\x0c", "").replace("\r", "") + _EXTRA
_CHARSET_SET = frozenset(CHARSET)
# The ASCII characters outside CHARSET (the control characters but newline and tab).
_ASCII_OUTSIDE = "".join(chr(c) for c in range(128) if chr(c) not in _CHARSET_SET)
_OUTSIDE_ASCII_CHARSET = re.compile("[" + re.escape(_ASCII_OUTSIDE) + "]")
# CHARSET's characters that NFKC would rewrite (½ -> 1⁄2 with a fraction slash outside CHARSET, so "1?2"; ² -> 2,
# so "5² = 25" would read "52 = 25"): kept as written. NFKC's fraction slash (⅓ -> 1⁄3) and the division slash
# become "/", superscripts outside CHARSET ("x⁴") "^4".
_NFKC_REWRITES = "".join(c for c in CHARSET if unicodedata.normalize("NFKC", c) != c)
_NFKC_KEPT = re.compile("([" + re.escape(_NFKC_REWRITES) + "])")
_SLASHES_AND_POWERS = str.maketrans({"\u2044": "/", "\u2215": "/", **{
    chr(c): "^" + unicodedata.normalize("NFKC", chr(c)) for c in (0x2070, *range(0x2074, 0x207A))}})
_KEPT_SLASH_OR_POWER = _NFKC_REWRITES + "".join(chr(c) for c in _SLASHES_AND_POWERS)

MAX_UTTERANCE_CHARS = 4000
MAX_OBSERVATION_CHARS = 16000

# Act mode: intent x (strategy or none) x guidance level x target KC slot x end-session flag.
MAX_KCS = 8
ACT_NVEC = (len(INTENTS), len(STRATEGIES) + 1, 3, MAX_KCS, 2)

PHASES: tuple[str, ...] = ("pretest", "dialogue", "posttest")

# Tutor features: phase one-hot (3), turn / max_turns, pre-test accuracy, per-KC pre-test accuracy (MAX_KCS,
# -1 where the task has no such KC), last student turn's cognition state one-hot (6), last student turn
# stated the answer, tutor revealed the answer so far.
TUTOR_FEATURES = 3 + 1 + 1 + MAX_KCS + len(COGNITION_STATES) + 2
# Student features: phase one-hot (3), turn / max_turns.
STUDENT_FEATURES = 3 + 1


def normalize_text(text: object, max_length: int) -> tuple[str, bool]:
    """``text`` as a valid member of a ``Text(max_length)`` space, and whether anything had to change."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    raw = text
    if text.isascii() and _OUTSIDE_ASCII_CHARSET.search(text) is None:
        # the common case (every observation and utterance the env itself writes): NFKC leaves ASCII as it is and
        # every other ASCII character is in CHARSET, so only the clip can change the text
        text = text[:max_length]
        return text, text != raw
    if len(text) > 4 * max_length:  # do not normalise megabytes we are about to clip
        text = text[: 4 * max_length]
    if not any(c in text for c in _KEPT_SLASH_OR_POWER):  # the common case (faster than a regex or a translate)
        text = unicodedata.normalize("NFKC", text)
    else:
        text = "".join(part if i % 2 else unicodedata.normalize("NFKC", part)
                       for i, part in enumerate(_NFKC_KEPT.split(text.translate(_SLASHES_AND_POWERS))))
    if "\u2044" in text:  # what NFKC makes of a vulgar fraction outside CHARSET: ⅓ -> 1⁄3
        text = text.replace("\u2044", "/")
    if not _CHARSET_SET.issuperset(text):
        text = "".join(
            c if c in _CHARSET_SET else ("" if unicodedata.category(c)[0] == "C" else "?") for c in text
        )
    text = text[:max_length]
    return text, text != raw


def text_space(max_length: int) -> spaces.Text:
    return spaces.Text(min_length=0, max_length=max_length, charset=CHARSET)


def tutor_observation_space() -> spaces.Dict:
    return spaces.Dict(
        {
            "text": text_space(MAX_OBSERVATION_CHARS),
            "features": spaces.Box(low=-1.0, high=1.0, shape=(TUTOR_FEATURES,), dtype=np.float32),
        }
    )


def student_observation_space() -> spaces.Dict:
    return spaces.Dict(
        {
            "text": text_space(MAX_OBSERVATION_CHARS),
            "features": spaces.Box(low=-1.0, high=1.0, shape=(STUDENT_FEATURES,), dtype=np.float32),
        }
    )


def tutor_action_space(action_mode: str) -> spaces.Space:
    if action_mode == "act":
        return spaces.MultiDiscrete(np.array(ACT_NVEC, dtype=np.int64))
    return text_space(MAX_UTTERANCE_CHARS)


def student_action_space() -> spaces.Text:
    return text_space(MAX_UTTERANCE_CHARS)


def decode_tutor_features(features: np.ndarray) -> dict:
    """The tutor's feature vector as named values (the inverse of the env's encoding)."""
    f = np.asarray(features, dtype=np.float32)
    base = 5 + MAX_KCS
    states = f[base : base + len(COGNITION_STATES)]
    return {
        "phase": PHASES[int(np.argmax(f[:3]))] if f[:3].any() else "done",
        "turn_fraction": float(f[3]),
        "pretest_accuracy": float(f[4]),
        "kc_pretest_accuracy": [float(v) for v in f[5:base]],
        "last_cognition_state": COGNITION_STATES[int(np.argmax(states))] if states.any() else None,
        "student_stated_answer": bool(f[base + len(COGNITION_STATES)]),
        "answer_revealed": bool(f[base + len(COGNITION_STATES) + 1]),
    }
