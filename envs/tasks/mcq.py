"""The ``mcq`` task set: multiple-choice question banks (EducationQ, MMLU-Pro, and TutorZoo's own bank).

One task per question item. The item's category is the task's single knowledge component, with generic
teaching material per category from ``data/mcq_categories.yaml``; ``Item.subject`` is the category, so
EducationQ's per-subject metrics (CSS) work. The tutor sees the stem but not the options (EducationQ): the
env renders the item with ``Item.render(with_options=False)``, and ``Task.answer`` is the *text* of the
keyed option, since an option letter means nothing to a tutor who never sees the options.

Pre-test = the item. Post-test = the item's isomorphic twin when the bank has one (``isomorphic_of``), else
the same item. EducationQ's released data and MMLU-Pro have no twins, so for those banks the post-test is
the same item, exactly as in EducationQ; TutorZoo's shipped bank has 20 twin pairs.

Bank files (EducationQ's and MMLU-Pro's formats, TutorZoo's bank) are read and written by
:mod:`tutorzoo.envs.tasks.mcq_bank`; :func:`load_bank`, :func:`dump_bank` and the record types are importable from here
too.

Post-test kinds: a bank whose items lack twins cannot give an isomorphic post-test. A protocol with
``posttest: isomorphic`` or ``both`` on such a bank is refused before anything runs
(:meth:`McqTaskSet.check_posttest`, called by ``make_config`` and suites), with an error that names
``posttest: same``; an isomorphic gain is never computed from the same item.

Externally loaded items carry no grade; they are taken as grade 12, the top of the scale (MMLU-Pro and
GPQA are undergraduate to graduate level).

Example::

    import numpy as np
    from tutorzoo.envs.tasks.mcq import McqTaskSet, load_bank
    bank = McqTaskSet()                        # TutorZoo's shipped bank
    task = bank.build("phys_inertia_a", np.random.default_rng(0))
    task.posttest[0].id                        # 'phys_inertia_b', the isomorphic twin
    records = load_bank("mmlu_pro_test.jsonl")  # any local EducationQ or MMLU-Pro file
"""

from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from tutorzoo.envs.errors import ConfigError, DatasetError
from tutorzoo.envs.tasks.base import BankQuestion, Item, KCLink, KnowledgeComponent, Misconception, Task
from tutorzoo.envs.tasks.mcq_bank import (
    DATA_DIR,
    DEFAULT_BANK,
    EXTERNAL_GRADE,
    FORMATS,
    McqMisconception,
    McqRecord,
    dump_bank,
    load_bank,
    option_letter,
    snake_case,
)

MATERIAL_FILE = DATA_DIR / "mcq_categories.yaml"


# --------------------------------------------------------------------------------------------- material


@dataclass(frozen=True)
class _Material:
    templates: dict[str, str]
    aliases: dict[str, str]
    categories: dict[str, dict]


@functools.cache  # read once: task_from_text builds a task per dialogue
def _load_material(path: Path = MATERIAL_FILE) -> _Material:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise DatasetError(f"{path}: cannot read the MCQ category material ({err})") from err
    for key in ("templates", "aliases", "categories"):
        if not isinstance(data, dict) or not isinstance(data.get(key), dict):
            raise DatasetError(f"{path}: top-level key {key!r} must be a mapping")
    if "other" not in data["categories"]:
        raise DatasetError(f"{path}: categories must include 'other', the fallback for unknown subjects")
    missing = [t for t in ("title", "opening", "summary", "objective") if t not in data["templates"]]
    if missing:
        raise DatasetError(f"{path}: templates lack {missing}")
    return _Material(templates=data["templates"], aliases=data["aliases"], categories=data["categories"])


def _difficulty(symbols: str) -> float:
    """EducationQ's difficulty symbols as 0..1: '+' harder (up to '+++++' = 1.0), '-' easier ('-----' = 0.0)."""
    s = symbols.strip()
    if s and set(s) == {"+"}:
        return min(1.0, 0.5 + 0.1 * len(s))
    if s and set(s) == {"-"}:
        return max(0.0, 0.5 - 0.1 * len(s))
    return 0.5


def _solution(rec: McqRecord) -> tuple[str, ...]:
    steps: list[str] = []
    for line in rec.explanation.splitlines():
        line = line.strip()
        if line:
            steps.append(line)
    steps.append(f"So the answer is: {rec.answer_text}.")
    return tuple(steps)


def _shorten(text: str, n: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3].rstrip() + "..."


# --------------------------------------------------------------------------------------------- task set


class McqTaskSet:
    """Multiple-choice banks as tasks, one per item (see the module docstring).

    ``path=None`` uses TutorZoo's shipped bank; else any local EducationQ or MMLU-Pro file.

    Example::

        import numpy as np
        from tutorzoo.envs.tasks import get_task_set
        mcq = get_task_set("mcq")
        task = mcq.build(mcq.task_ids()[0], np.random.default_rng(0))
    """

    name = "mcq"

    def __init__(self, path: str | None = None, records: list[McqRecord] | None = None) -> None:
        self.path = Path(path) if path is not None else DEFAULT_BANK
        self.records = load_bank(self.path) if records is None else list(records)
        self._by_id = {r.id: r for r in self.records}
        self._twin: dict[str, str] = {}
        for r in self.records:
            if r.isomorphic_of is not None:
                self._twin[r.id] = r.isomorphic_of
                self._twin[r.isomorphic_of] = r.id
        self._material = _load_material()

    def check_posttest(self, posttest: str, task_id: str | None = None) -> None:
        """Refuse an isomorphic post-test (``isomorphic``/``both``) on items without a twin, in one line.

        ``task_id=None`` checks every item of the bank. Example: ``McqTaskSet("gpqa.json").check_posttest("same")``.
        """
        if posttest == "same":
            return
        ids = [task_id] if task_id is not None else self.task_ids()
        lonely = [t for t in ids if t in self._by_id and t not in self._twin]
        if lonely:
            raise ConfigError(
                f"posttest: {posttest} needs an isomorphic twin (isomorphic_of) for every item, but {len(lonely)} of "
                f"{len(ids)} item(s) of the mcq bank {self.path.name} have none (e.g. {lonely[0]!r}); use "
                "posttest: same (EducationQ's own protocol: every gain is then a same-item gain)"
            )

    def task_ids(self) -> list[str]:
        """Every item id, in file order."""
        return [r.id for r in self.records]

    def twin_of(self, task_id: str) -> str | None:
        """The id of the item's isomorphic twin, or None when the bank has none."""
        return self._twin.get(task_id)

    def _record(self, task_id: str) -> McqRecord:
        rec = self._by_id.get(task_id)
        if rec is None:
            close = difflib.get_close_matches(task_id, list(self._by_id), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"task {task_id!r} is not in the mcq bank {self.path} "
                              f"({len(self._by_id)} items; see task_ids()).{hint}")
        return rec

    def _kc(self, rec: McqRecord) -> KnowledgeComponent:
        kc_id = snake_case(rec.category)
        key = self._material.aliases.get(kc_id, kc_id)
        known = key in self._material.categories
        m = self._material.categories[key if known else "other"]
        return KnowledgeComponent(
            id=kc_id,
            name=m["name"] if known else rec.category.strip().title(),
            discipline=m["discipline"],
            keywords=tuple(m["keywords"]),
            links=tuple(KCLink(**link) for link in m.get("links", ())),
            explanation=m["explanation"],
            worked_example=m["worked_example"],
            questions=tuple(BankQuestion(**q) for q in m["questions"]),
            hints=tuple(m["hints"]),
            analogies=tuple(m["analogies"]),
            contexts=tuple(m.get("contexts", ())),
            difficulty=_difficulty(rec.difficulty),
        )

    @staticmethod
    def _item(rec: McqRecord, kc_id: str, parallel_of: str | None = None) -> Item:
        return Item(
            id=rec.id,
            stem=rec.question,
            options=rec.options,
            answer=rec.answer,
            kcs=(kc_id,),
            misconception_answers={m.id: m.option for m in rec.misconceptions},
            solution_steps=_solution(rec),
            subject=rec.category,
            parallel_of=parallel_of,
        )

    def build(self, task_id: str, rng: np.random.Generator) -> Task:
        """The task for one item. The bank is fixed text, so ``rng`` is not drawn from (kept for the protocol)."""
        rec = self._record(task_id)
        kc = self._kc(rec)
        pre = self._item(rec, kc.id)
        twin_id = self._twin.get(rec.id)
        twin = self._by_id[twin_id] if twin_id is not None else None
        post = self._item(twin, kc.id, parallel_of=rec.id) if twin is not None else pre
        # The pre-test item's own wording wins when both twins describe the same misconception.
        misconceptions: dict[str, Misconception] = {}
        for source in (rec, twin) if twin is not None else (rec,):
            for m in source.misconceptions:
                misconceptions.setdefault(m.id, Misconception(
                    id=m.id, kc=kc.id, belief=m.belief, counterexample=m.counterexample, negation=m.negation,
                    keywords=m.keywords,
                ))
        t = self._material.templates
        fill = {
            "name": kc.name, "name_lower": kc.name.lower(), "stem": rec.question, "answer": rec.answer_text,
            # The item's own explanation is the better summary; the subject's is the fallback.
            "explanation": " ".join(rec.explanation.split()) or kc.explanation,
        }
        return Task(
            id=rec.id,
            task_set=self.name,
            title=t["title"].format(**{**fill, "stem": _shorten(rec.question)}),
            statement=rec.question,
            solution=_solution(rec),
            answer=rec.answer_text,
            disciplines=(kc.discipline,),
            grade=rec.grade if rec.grade is not None else EXTERNAL_GRADE,
            knowledge_components=(kc,),
            misconceptions=tuple(misconceptions.values()),
            pretest=(pre,),
            posttest=(post,),
            opening_question=t["opening"].format(**fill),
            summary=t["summary"].format(**fill),
            objectives=(t["objective"].format(**fill),),
        )


def task_from_text(task_id: str, question: str, answer: str | None = None, category: str = "other",
                   options: list[str] | None = None) -> Task:
    """A one-item task for a dialogue that comes with no task (a peer's transcript), so that the annotators,
    which read a task's vocabulary and answer, can label its turns.

    ``options`` (with ``answer`` among them or not) make it a multiple-choice item; without them the item's
    options are the answer and a placeholder. The category picks the teaching material of
    ``data/mcq_categories.yaml`` (unknown categories use ``other``).

    Example::

        task = task_from_text("6000025", "How many spoons were in Julia's package?", "10", "math")
    """
    text = question.strip() or task_id
    key = answer.strip() if answer and answer.strip() else "(no answer given)"
    opts = [str(o) for o in options if str(o).strip()] if options else []
    if key not in opts:
        opts = [key, *opts] if opts else [key, "(another answer)"]
    index = opts.index(key)
    rec = McqRecord(id=task_id, question=text, options=tuple(opts), answer=option_letter(index), answer_index=index,
                    category=category.strip() or "other")
    return McqTaskSet(records=[rec]).build(task_id, np.random.default_rng(0))


__all__ = [  # the bank's names (envs/tasks/mcq_bank.py) stay importable from here
    "DEFAULT_BANK",
    "FORMATS",
    "McqMisconception",
    "McqRecord",
    "McqTaskSet",
    "dump_bank",
    "load_bank",
    "snake_case",
    "task_from_text",
]
