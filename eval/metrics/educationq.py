"""EducationQ's learning metrics (docs/spec.md §4): ACC, ALG, PNIR, CSS and UIC over pre/post test-item pairs.

A post-test item is paired with the pre-test item it tests again: a ``same`` item has the pre item's
``item_id``; an ``isomorphic`` item names it in ``parallel_of``. The default metrics use the isomorphic pairs
(telling the answer does not pay there); the ``*_same`` variants use the same-item pairs, EducationQ's own
protocol. Accuracies are in percent and ALG in percentage points, as EducationQ prints them; an invalid
(unextractable) answer counts as wrong, as in EducationQ.

Example::

    from tutorzoo.eval.metrics.educationq import item_pairs, pair_counts
    counts = pair_counts(item_pairs(record, "isomorphic", where="line 1"))
    counts.alg  # e.g. 50.0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from tutorzoo.envs.errors import DatasetError

PAIR_KINDS: tuple[str, ...] = ("isomorphic", "same")
UNSPECIFIED_SUBJECT = "unspecified"

ItemKey = tuple[str, str, str, int, str]


@dataclass(frozen=True)
class ItemPair:
    """One pre-test item and one post-test item testing the same knowledge, with the student's results.

    ``key`` identifies the item across tutors: (task_set, task_id, persona, seed, pre-test item_id).
    """

    key: ItemKey
    subject: str
    pre_correct: bool
    post_correct: bool


@dataclass(frozen=True)
class PairCounts:
    """Counts over a set of pairs; ``n_pos`` = wrong->right, ``n_neg`` = right->wrong."""

    n: int = 0
    pre: int = 0
    post: int = 0
    n_pos: int = 0
    n_neg: int = 0

    @property
    def acc_pre(self) -> float | None:
        return 100.0 * self.pre / self.n if self.n else None

    @property
    def acc_post(self) -> float | None:
        return 100.0 * self.post / self.n if self.n else None

    @property
    def alg(self) -> float | None:
        return 100.0 * (self.post - self.pre) / self.n if self.n else None

    @property
    def pnir(self) -> float | None:
        return pnir(self.n_pos, self.n_neg)


def pnir(n_pos: int, n_neg: int) -> float | None:
    """N_neg / N_pos, lower is better; ``None`` when no item went wrong->right (``pnir(0, 3) is None``)."""
    return n_neg / n_pos if n_pos else None


def pair_counts(pairs: Iterable[ItemPair]) -> PairCounts:
    """Counts of ``pairs``, e.g. one wrong->right pair gives ``PairCounts(1, 0, 1, 1, 0)``."""
    n = pre = post = pos = neg = 0
    for p in pairs:
        n += 1
        pre += p.pre_correct
        post += p.post_correct
        pos += (not p.pre_correct) and p.post_correct
        neg += p.pre_correct and not p.post_correct
    return PairCounts(n, pre, post, pos, neg)


def subject_counts(pairs: Iterable[ItemPair]) -> dict[str, PairCounts]:
    """Counts per subject, subjects in sorted order (so CSS never depends on input order)."""
    by_subject: dict[str, list[ItemPair]] = {}
    for p in pairs:
        by_subject.setdefault(p.subject, []).append(p)
    return {s: pair_counts(by_subject[s]) for s in sorted(by_subject)}


def css(per_subject: Mapping[str, PairCounts]) -> float | None:
    """Population std of per-subject ALG (percentage points); 0 with one subject, ``None`` with none."""
    gains = [c.alg for c in per_subject.values() if c.n]
    if not gains:
        return None
    return float(np.std(np.asarray(gains, dtype=float)))


def uic(improved: Mapping[str, Iterable[ItemKey]]) -> dict[str, int]:
    """Per group, the items it turned wrong->right and no other group did.

    Example: ``uic({"a": {k1, k2}, "b": {k2}})`` gives ``{"a": 1, "b": 0}``.
    """
    sets = {g: set(items) for g, items in improved.items()}
    out: dict[str, int] = {}
    for group, items in sets.items():
        others: set = set().union(*(s for g, s in sets.items() if g != group))
        out[group] = len(items - others)
    return out


def improved_items(pairs: Iterable[ItemPair]) -> set[ItemKey]:
    """Keys of the pairs that went wrong->right."""
    return {p.key for p in pairs if not p.pre_correct and p.post_correct}


def _items(record: Mapping, field: str, where: str) -> list[Mapping]:
    items = record.get(field)
    if items is None:
        return []
    if not isinstance(items, list):
        raise DatasetError(f"{where}: field {field!r} must be a list of test-item results, got {type(items).__name__}")
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise DatasetError(f"{where}: {field}[{i}] must be an object, got {type(item).__name__}")
        if not isinstance(item.get("item_id"), str):
            raise DatasetError(f"{where}: {field}[{i}] needs a string 'item_id'")
        if not isinstance(item.get("correct"), bool):
            raise DatasetError(f"{where}: {field}[{i}] ({item['item_id']}) needs a boolean 'correct'")
        subject = item.get("subject")
        if subject is not None and not isinstance(subject, str):
            raise DatasetError(f"{where}: {field}[{i}] ({item['item_id']}) 'subject' must be a string or null")
    return items


def _identity(record: Mapping) -> tuple[str, str, str, int]:
    raw = record.get("spec")
    spec: Mapping = raw if isinstance(raw, Mapping) else {}
    seed = spec.get("seed")
    return (
        str(spec.get("task_set", "")),
        str(spec.get("task_id", "")),
        str(spec.get("persona", "")),
        seed if isinstance(seed, int) and not isinstance(seed, bool) else -1,
    )


def _fallback_subject(record: Mapping) -> str:
    task = record.get("task")
    disciplines = task.get("disciplines") if isinstance(task, Mapping) else None
    if isinstance(disciplines, list) and disciplines and isinstance(disciplines[0], str):
        return disciplines[0]
    return UNSPECIFIED_SUBJECT


def item_pairs(record: Mapping, kind: str, where: str) -> list[ItemPair]:
    """The (pre, post) pairs of one episode record for post-test items of ``kind`` ("isomorphic" or "same").

    The subject of a pair is the pre item's ``subject``, else the post item's, else the task's first
    discipline. Raises :class:`DatasetError` naming ``where`` and the item when a post item names no pre item.
    """
    if kind not in PAIR_KINDS:
        raise ValueError(f"kind must be one of {PAIR_KINDS}, got {kind!r}")
    pre_items = _items(record, "pretest", where)
    post_items = _items(record, "posttest", where)
    pre_by_id: dict[str, Mapping] = {}
    for item in pre_items:
        if item["item_id"] in pre_by_id:
            raise DatasetError(f"{where}: pretest item_id {item['item_id']!r} appears twice; ids must be unique")
        pre_by_id[item["item_id"]] = item
    identity = _identity(record)
    fallback = _fallback_subject(record)
    pairs: list[ItemPair] = []
    for i, post in enumerate(post_items):
        post_kind = post.get("kind", "isomorphic")
        if post_kind not in PAIR_KINDS:
            raise DatasetError(f"{where}: posttest[{i}] 'kind' must be one of {PAIR_KINDS}, got {post_kind!r}")
        if post_kind != kind:
            continue
        pre_id = post["item_id"] if kind == "same" else post.get("parallel_of")
        pre = pre_by_id.get(pre_id) if isinstance(pre_id, str) else None
        if pre is None:
            field = "item_id" if kind == "same" else "parallel_of"
            raise DatasetError(
                f"{where}: posttest[{i}] ({post['item_id']}, {kind}) has {field}={pre_id!r}, which names no "
                f"pretest item; a {kind} post item must name the pre item it re-tests"
            )
        subject = pre.get("subject") or post.get("subject") or fallback
        pairs.append(ItemPair((*identity, pre["item_id"]), subject, pre["correct"], post["correct"]))
    return pairs
