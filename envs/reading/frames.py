"""Who asserts what: a denial before a proposition (:data:`DENIAL`), a closing denial or a retraction after it, an
endorsement, reported speech and warnings, and what each does to a claim (:func:`negated_claim`,
:func:`quoted_claim`)."""

from __future__ import annotations

import re
from dataclasses import replace

from tutorzoo.envs.reading.claims import FALSE, TRUE, UNCHECKED, Claim

# a belief quoted or named as wrong, not asserted ("A common misconception is that …", "Myth: …")
REPORTED = re.compile(r"\b(?:says?|said|thinks?|thought|claims?|believes?|belief|someone|a friend|a classmate|"
                       r"your rule|by this rule|you said|your idea|the rule gives|would you|if you|"
                       r"misconceptions?|myths?|mistak(?:e|es|en|enly)|heard|contrary|false|wrong(?:ly)?|"
                       r"incorrect(?:ly)?|errors?|fallac(?:y|ies)|assum(?:e|es|ed|ing|ption)|supposedly|"
                       r"misunderstand\w*|trap|pitfall)\b", re.IGNORECASE)


# frames that say who holds a proposition. A denial before it negates it ("It is a myth that …", "Nobody should believe
# that …"); a retraction after it negates the sentence before ("Actually, no: that is false.", "They are wrong.");
# an endorsement affirms the reported speech before it ("Some say that …. And they are right."); reported speech and
# warnings ("A common mistake is to write …", "Don't …") quote a falsehood without asserting it
_LEAD = r"^\W*(?:(?:but|and|so|well|however|also|remember|note|in fact|contrary to (?:popular|common) belief)\b\W*)*"
DENIAL = re.compile(
    _LEAD + r"(?:(?:it\s+is|it's|it\s+was|that\s+is|that's)\s+(?:simply\s+|just\s+|completely\s+|absolutely\s+|"
    r"certainly\s+)?(?:false|untrue|not\s+true|not\s+the\s+case|a\s+myth|wrong|incorrect|not\s+correct|nonsense|"
    r"an?\s+(?:common\s+)?(?:mistake|misconception|error))(?:\s+to\s+(?:say|think|believe|claim|assume))?\s+that"
    r"|(?:nobody|no\s+one|no-one)\s+should\s+(?:believe|think|say|claim|assume)(?:\s+that)?"
    r"|(?:do\s+not|don't|never)\s+(?:believe|think|assume)\s+that"
    r"|there\s+is\s+no\s+truth\s+(?:in\s+(?:the\s+)?(?:idea|claim)\s+)?that)\s+", re.IGNORECASE)
# "…, but that's wrong." / "… — just kidding." closing a sentence: the rest of it is denied
_JOKING = r"(?:just|only)\s+(?:kidding|joking)"
DENIED_AFTER = re.compile(r"\s*(?:[,;:]|\s[-–—])\s*(?:(?:but|and)?\s*(?:that|this|it)(?:'s|\s+is|\s+was)\s+"
                          r"(?:simply\s+|just\s+|completely\s+)?(?:false|untrue|not\s+true|wrong|incorrect|a\s+myth|not\s+correct)"
                          r"|" + _JOKING + r")\W*$", re.IGNORECASE)
# a sentence that only takes back the one before: fillers ("Actually, no", "Just kidding") and retracting clauses
# ("that is false", "ignore that", "I was wrong"), in any order, and nothing else
_FILLER = (r"(?:actually|wait|sorry|oops|hmm|well|but|no|nope|correction|oh|uh|um|ok|okay|haha|lol|my\s+bad|"
           + _JOKING + r"|kidding|joking)")
_RETRACTING = (
    r"(?:(?:that|this|it|which)(?:'s|\s+is|\s+was)\s+(?:simply\s+|just\s+|completely\s+|all\s+|actually\s+)?"
    r"(?:false|untrue|not\s+true|not\s+right|not\s+correct|wrong|incorrect|a\s+myth|nonsense|a\s+mistake|made\s+up)"
    r"|(?:that|this|it)\s+(?:isn't|wasn't)\s+(?:true|right|correct|so)"
    r"|(?:they|those\s+people|these\s+people|people|he|she|some|others)\s*(?:'re|are|were|is|'s)\s+"
    r"(?:simply\s+|just\s+|completely\s+|quite\s+)?(?:wrong|mistaken|incorrect)"
    r"|i\s+take\s+(?:that|it)\s+back|scratch\s+that|never\s+mind|i\s+(?:was|am|'m)\s+(?:wrong|mistaken|kidding|joking)"
    r"|i\s+lied|i\s+made\s+(?:that|it)\s+up|(?:please\s+)?(?:ignore|disregard|forget)\s+(?:that|it|this|"
    r"what\s+i\s+(?:just\s+)?said|everything\s+i\s+(?:just\s+)?said|the\s+last\s+(?:part|sentence|bit))"
    r"|don't\s+(?:listen\s+to|believe)\s+(?:me|that|it))")
RETRACTION = re.compile(r"^\W*(?:" + _FILLER + r"\b\W*)*(?:" + _RETRACTING + r"|" + _JOKING + r")"
                        r"(?:\W+(?:" + _FILLER + r"|" + _RETRACTING + r")\b)*\W*$", re.IGNORECASE)
ENDORSEMENT = re.compile(
    r"^\W*(?:(?:and|but|so|well|yes|indeed)\b\W*)*"
    r"(?:(?:they|those\s+people|these\s+people|people|he|she|some|others|your\s+friend)\s*(?:'re|are|were|is|'s)\s+"
    r"(?:quite\s+|absolutely\s+|completely\s+|exactly\s+|perfectly\s+|totally\s+)?(?:right|correct)"
    r"|(?:that|this|it)(?:'s|\s+is)\s+(?:quite\s+|absolutely\s+|completely\s+|exactly\s+|perfectly\s+|totally\s+)?"
    r"(?:true|right|correct))\W*$", re.IGNORECASE)
# reported speech: the proposition after it is someone's, not the tutor's
REPORT_FRAME = re.compile(
    _LEAD + r"(?:(?:(?:some|many|most|lots\s+of|a\s+lot\s+of)(?:\s+(?:people|students|kids|learners))?|people|students|"
    r"kids|learners|someone|somebody|others|an?\s+(?:friend|classmate|student)|your\s+(?:friend|classmate)|you|they|he|"
    r"she)\s+(?:(?:often|sometimes|usually|may|might|still|also|once)\s+)*(?:say|says|said|think|thinks|thought|believe|"
    r"believes|believed|claim|claims|claimed|argue|argues|assume|assumes|write|writes|wrote|(?:have|has)\s+heard|"
    r"heard|guess|guessed|answered)(?:\s+that)?"
    r"|(?:it\s+is|it's)\s+(?:often|commonly|sometimes|widely)\s+(?:said|thought|believed|claimed)\s+that"
    r"|(?:a|one|the)\s+(?:common|popular|typical|classic|widespread|frequent)\s+(?:belief|idea|view|misconception|myth|"
    r"mistake|error)\s+is\s+(?:to\s+(?:think|believe|say|assume|write)\s+)?(?:that)?)\s*[:,]?\s+", re.IGNORECASE)
# a warning against a mistake: the falsehood it names is quoted, not stated
WARNING = re.compile(
    r"\b(?:(?:common|typical|classic|frequent|usual|big)\s+(?:mistake|error|slip|trap|pitfall)s?|don't|do\s+not|never|"
    r"avoid|beware|watch\s+out|be\s+careful|careful\s+not|tempting|tempted|instead\s+of|rather\s+than|"
    r"would\s+(?:give|get|say|make|be)|wrongly|incorrectly|by\s+mistake)\b", re.IGNORECASE)


def negated_claim(c: Claim) -> Claim:
    """What denying ``c`` says: a denied truth is a falsehood; a denied falsehood is no statement of the truth, but
    a misconception it stated is denied (corrective negation); a denied denial affirms again. Questions stand."""
    if c.question:
        return c
    if c.verdict == TRUE:
        return replace(c, verdict=FALSE, affirms=None, refutes=(), denies=None)
    if c.verdict == FALSE:
        mid = c.affirms or c.mentions
        return replace(c, verdict=UNCHECKED, affirms=None, refutes=(), denies=mid, mentions=mid)
    if c.denies:
        return replace(c, verdict=FALSE, affirms=c.denies, denies=None)
    return replace(c, denies=c.mentions) if c.mentions else c


def quoted_claim(c: Claim) -> Claim:
    """``c`` said as someone's or warned against: a falsehood in it is named, not asserted."""
    if c.verdict != FALSE or c.question:
        return c
    return replace(c, verdict=UNCHECKED, affirms=None, mentions=c.affirms or c.mentions)
