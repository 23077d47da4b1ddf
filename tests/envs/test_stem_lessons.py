"""The stem lesson library (configs/lessons) and its loader (envs/tasks/stem.py).

Per-lesson checks are table-driven over the files present, so a lesson that breaks a rule fails under its own
name. ``test_library_has_48_lessons`` fails until all 48 lessons are written.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import yaml

from tutorzoo.envs.errors import ConfigError, DatasetError
from tutorzoo.envs.labels import DISCIPLINES
from tutorzoo.envs.tasks import get_task_set
from tutorzoo.envs.tasks.base import Task
from tutorzoo.envs.tasks.stem import DEFAULT_LESSONS_DIR, StemTaskSet, load_lesson

FILES = sorted(DEFAULT_LESSONS_DIR.glob("*.yaml"))
FILE_IDS = [f.stem for f in FILES]
GENERIC_WORDS = {"the", "a", "an", "and", "science", "thing", "things", "stuff", "idea", "question", "answer"}
BLOOM_OF_LEVEL = {
    "L1": {"remember", "understand"},
    "L2": {"understand", "apply"},
    "L3": {"analyze", "evaluate", "create"},
}


@cache
def lesson(path: Path) -> Task:
    return load_lesson(path)


def all_lessons() -> list[Task]:
    return [lesson(f) for f in FILES]


def letters(n: int) -> list[str]:
    return [chr(ord("A") + i) for i in range(n)]


# ---------------------------------------------------------------------------------------------- library


def test_library_has_48_lessons() -> None:
    assert len(FILES) == 48, f"expected 48 lesson files in {DEFAULT_LESSONS_DIR}, found {len(FILES)}"
    assert len(StemTaskSet().task_ids()) == 48


def test_task_set_is_registered_and_ordered_by_file_name() -> None:
    task_set = get_task_set("stem")
    assert task_set.name == "stem"
    assert task_set.task_ids() == [lesson(f).id for f in FILES]


def test_item_ids_unique_across_library() -> None:
    ids = Counter(i.id for t in all_lessons() for i in t.pretest + t.posttest)
    assert [i for i, n in ids.items() if n > 1] == []


def test_answer_letters_are_spread() -> None:
    counts = Counter(i.answer for t in all_lessons() for i in t.pretest + t.posttest)
    assert len(counts) >= 2, f"every answer is {set(counts)}"
    # A keyed letter that dominates lets a student score by always picking it.
    assert max(counts.values()) <= 0.5 * sum(counts.values()), counts


def test_physics_and_geography_most_frequent() -> None:
    counts = Counter(d for t in all_lessons() for d in t.disciplines)
    others = [n for d, n in counts.items() if d not in ("physics", "geography")]
    assert min(counts["physics"], counts["geography"]) > max(others, default=0), counts


def test_disciplines_all_covered() -> None:
    seen = {d for t in all_lessons() for d in t.disciplines}
    missing = set(DISCIPLINES) - seen
    assert len(missing) <= 1, f"disciplines never used: {sorted(missing)}"


def test_most_lessons_link_disciplines() -> None:
    linked = [t.id for t in all_lessons() if any(k.links for k in t.knowledge_components)]
    assert len(linked) >= 40, f"only {len(linked)} lessons have a cross-discipline KCLink"


# ---------------------------------------------------------------------------------------------- per lesson


@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_file_name_is_number_and_id(path: Path) -> None:
    task = lesson(path)
    assert re.fullmatch(r"\d\d_[a-z0-9_]+", path.stem)
    assert path.stem[3:] == task.id
    assert task.task_set == "stem"


@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_lesson_shape(path: Path) -> None:
    task = lesson(path)
    assert task.grade in (7, 8, 9)
    assert len(task.disciplines) >= 2 and len(set(task.disciplines)) == len(task.disciplines)
    assert 4 <= len(task.knowledge_components) <= 8
    assert 3 <= len(task.solution) <= 6
    assert 2 <= len(task.objectives) <= 4
    assert 2 <= len(task.misconceptions) <= 4
    kc_disciplines = {k.discipline for k in task.knowledge_components}
    assert len(kc_disciplines) >= 2, "KCs must span at least two disciplines"
    assert kc_disciplines <= set(task.disciplines), f"KC disciplines {kc_disciplines} not in {task.disciplines}"


@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_kcs_have_questions_at_every_level(path: Path) -> None:
    task = lesson(path)
    for k in task.knowledge_components:
        levels = Counter(q.guidance_level for q in k.questions)
        assert set(levels) == {"L1", "L2", "L3"} and max(levels.values()) <= 2, f"{k.id}: {dict(levels)}"
        for q in k.questions:
            assert q.bloom in BLOOM_OF_LEVEL[q.guidance_level], f"{k.id}: {q.guidance_level} asked at {q.bloom}"
        assert 4 <= len(k.keywords) <= 8, f"{k.id}: {len(k.keywords)} keywords"
        assert len({w.lower() for w in k.keywords}) == len(k.keywords), f"{k.id}: repeated keyword"
        # The annotator matches keywords to detect the topic; words every lesson uses would match everywhere.
        assert not {w.lower() for w in k.keywords} & GENERIC_WORDS, f"{k.id}: generic keyword in {k.keywords}"


@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_keywords_tell_kcs_apart(path: Path) -> None:
    task = lesson(path)
    owners = Counter(w.lower() for k in task.knowledge_components for w in set(k.keywords))
    assert [w for w, n in owners.items() if n > 1] == [], "a keyword shared by two KCs cannot tell them apart"


@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_links_cross_disciplines_and_resolve(path: Path) -> None:
    task = lesson(path)
    by_id = {k.id: k for k in task.knowledge_components}
    assert sum(1 for k in task.knowledge_components if k.links) >= 2, "at least two KCs need a KCLink"
    for k in task.knowledge_components:
        for link in k.links:
            assert link.discipline != k.discipline, f"{k.id} links to its own discipline"
            assert 2 <= len(link.keywords) <= 4, f"{k.id}: link keywords {link.keywords}"
            if link.kc is not None:
                assert link.kc in by_id, f"{k.id} links to unknown KC {link.kc}"
                assert by_id[link.kc].discipline == link.discipline, f"{k.id} -> {link.kc}: discipline mismatch"


@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_items_are_well_formed(path: Path) -> None:
    task = lesson(path)
    kc_discipline = {k.id: k.discipline for k in task.knowledge_components}
    for item in task.pretest + task.posttest:
        assert item.options is not None and len(item.options) == 4, item.id
        assert item.answer in letters(4), item.id
        assert len(set(item.options)) == 4, f"{item.id}: repeated option"
        assert len(item.kcs) == 1 and item.subject == kc_discipline[item.kcs[0]], item.id
        for mid, letter in item.misconception_answers.items():
            assert letter != item.answer, f"{item.id}: misconception {mid} gives the right answer"


@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_pre_and_post_cover_every_kc(path: Path) -> None:
    task = lesson(path)
    kc_ids = [k.id for k in task.knowledge_components]
    assert sorted(i.id for i in task.pretest) == sorted(f"{task.id}.pre.{k}" for k in kc_ids)
    assert sorted(i.id for i in task.posttest) == sorted(f"{task.id}.post.{k}" for k in kc_ids)


@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_posttest_items_are_isomorphic_twins(path: Path) -> None:
    task = lesson(path)
    pre = {i.id: i for i in task.pretest}
    for post in task.posttest:
        twin = pre.get(post.parallel_of or "")
        assert twin is not None, f"{post.id}: parallel_of {post.parallel_of!r} is not a pretest item"
        assert post.kcs == twin.kcs and post.subject == twin.subject, post.id
        assert set(post.misconception_answers) == set(twin.misconception_answers), post.id
        assert post.stem != twin.stem, f"{post.id}: same stem as its twin"
        assert post.options != twin.options, f"{post.id}: same options as its twin"
        # The keyed option must move or change, or a student could carry the letter over.
        assert (post.answer, post.options[letters(4).index(post.answer)]) != (
            twin.answer,
            twin.options[letters(4).index(twin.answer)],  # type: ignore[index]
        ), post.id


@pytest.mark.parametrize("path", FILES, ids=FILE_IDS)
def test_every_misconception_is_tested(path: Path) -> None:
    task = lesson(path)
    for m in task.misconceptions:
        pre = [i.id for i in task.pretest if m.id in i.misconception_answers]
        post = [i.id for i in task.posttest if m.id in i.misconception_answers]
        assert pre and post, f"misconception {m.id}: pretest {pre}, posttest {post}"
        assert all(m.kc in i.kcs for i in task.pretest + task.posttest if m.id in i.misconception_answers)
        assert 1 <= len(m.wrong_steps) <= 2 and 2 <= len(m.keywords) <= 4, m.id


# ---------------------------------------------------------------------------------------------- loader


@pytest.fixture
def good_lesson() -> dict:
    return yaml.safe_load((DEFAULT_LESSONS_DIR / "01_water_rocket.yaml").read_text(encoding="utf-8"))


def _write(folder: Path, name: str, data: object) -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _set_level(d: dict) -> None:
    d["knowledge_components"][2]["questions"][0]["guidance_level"] = "L4"


def _drop_answer(d: dict) -> None:
    del d["answer"]


def _extra_field(d: dict) -> None:
    d["knowledge_components"][0]["keywrods"] = ["typo"]


def _number_option(d: dict) -> None:
    d["pretest"][1]["options"][0] = 12


def _bad_letter(d: dict) -> None:
    d["posttest"][0]["answer"] = "E"


def _bad_misconception_kc(d: dict) -> None:
    d["misconceptions"][0]["kc"] = "no_such_kc"


MALFORMED = [
    pytest.param(_set_level, "knowledge_components[2].questions[0].guidance_level", id="bad-guidance-level"),
    pytest.param(_drop_answer, "answer: Field required", id="missing-field"),
    pytest.param(_extra_field, "knowledge_components[0].keywrods", id="misspelt-field"),
    pytest.param(_number_option, "pretest[1].options[0]", id="unquoted-number"),
    pytest.param(_bad_letter, "posttest[0]", id="answer-letter"),
    pytest.param(_bad_misconception_kc, "no_such_kc", id="dangling-reference"),
]


@pytest.mark.parametrize(("mutate", "expected"), MALFORMED)
def test_malformed_lesson_names_file_and_field(tmp_path: Path, good_lesson: dict, mutate, expected: str) -> None:
    mutate(good_lesson)
    path = _write(tmp_path, "01_water_rocket.yaml", good_lesson)
    with pytest.raises(DatasetError) as err:
        StemTaskSet(str(tmp_path)).task_ids()
    message = str(err.value)
    assert str(path) in message and expected in message and "fix" in message


def test_error_names_record_id_without_cascades(tmp_path: Path, good_lesson: dict) -> None:
    _set_level(good_lesson)
    with pytest.raises(DatasetError, match="record id 'fin_stability'") as err:
        load_lesson(_write(tmp_path, "x.yaml", good_lesson))
    # pydantic also calls the questions list too short once the bad entry is dropped; that echo is noise.
    assert "1 error(s)" in str(err.value) and "at least 3 items" not in str(err.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("id: [unclosed\n", "not valid YAML", id="yaml-syntax"),
        pytest.param("- just\n- a list\n", "must be a YAML mapping", id="not-a-mapping"),
    ],
)
def test_unreadable_lesson_file(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError, match=expected) as err:
        load_lesson(path)
    assert str(path) in str(err.value)


def test_foreign_task_set_rejected(tmp_path: Path, good_lesson: dict) -> None:
    good_lesson["task_set"] = "math"
    with pytest.raises(DatasetError, match="remove the task_set field"):
        load_lesson(_write(tmp_path, "x.yaml", good_lesson))


def test_duplicate_ids_name_both_files(tmp_path: Path, good_lesson: dict) -> None:
    first = _write(tmp_path, "01_water_rocket.yaml", good_lesson)
    second = _write(tmp_path, "02_water_rocket.yaml", good_lesson)
    with pytest.raises(DatasetError, match="defined twice") as err:
        StemTaskSet(str(tmp_path)).task_ids()
    assert str(first) in str(err.value) and str(second) in str(err.value)


@pytest.mark.parametrize("make", [pytest.param(False, id="missing"), pytest.param(True, id="empty")])
def test_missing_or_empty_folder(tmp_path: Path, make: bool) -> None:
    folder = tmp_path / "lessons"
    if make:
        folder.mkdir()
    with pytest.raises(DatasetError, match=re.escape(str(folder))):
        StemTaskSet(str(folder)).task_ids()


def test_unknown_lesson_suggests_close_ids() -> None:
    with pytest.raises(ConfigError, match="Did you mean 'water_rocket'"):
        StemTaskSet().build("water_rocket2", np.random.default_rng(0))


def test_build_is_cached_and_seed_independent(tmp_path: Path, good_lesson: dict) -> None:
    path = _write(tmp_path, "01_water_rocket.yaml", good_lesson)
    task_set = StemTaskSet(str(tmp_path))
    first = task_set.build("water_rocket", np.random.default_rng(0))
    path.unlink()  # a cached library must not touch the disk again
    second = task_set.build("water_rocket", np.random.default_rng(123))
    assert first is second
    assert first.model_dump() == load_lesson(DEFAULT_LESSONS_DIR / "01_water_rocket.yaml").model_dump()
    assert task_set.file_of("water_rocket") == path


# The library, file by file: a lesson deleted, renamed or added without updating this list fails.
LESSON_FILES = (
    "01_water_rocket",
    "02_solar_oven",
    "03_floating_icebergs",
    "04_rusting_bridges",
    "05_acid_rain_monuments",
    "06_terrace_erosion",
    "07_pendulum_clocks",
    "08_seasons_tilt",
    "09_body_levers",
    "10_model_house_circuits",
    "11_greenhouse_photosynthesis",
    "12_instrument_sound",
    "13_colour_mixing",
    "14_volcano_tectonics",
    "15_weather_water_cycle",
    "16_bicycle_gears",
    "17_pond_food_chain",
    "18_house_insulation",
    "19_bridge_shapes",
    "20_map_scale",
    "21_silk_road_trade",
    "22_printing_press",
    "23_bread_fermentation",
    "24_sea_salt",
    "25_wind_turbines",
    "26_heart_pump",
    "27_eye_lenses",
    "28_fruit_battery",
    "29_compass_navigation",
    "30_river_delta",
    "31_greenhouse_effect",
    "32_pyramid_machines",
    "33_plastic_recycling",
    "34_desert_plants",
    "35_earthquake_buildings",
    "36_perspective_drawing",
    "37_poetry_rhythm",
    "38_vaccines_immunity",
    "39_tides_moon",
    "40_water_filtration",
    "41_ship_buoyancy",
    "42_paper_airplanes",
    "43_coral_acidity",
    "44_time_zones",
    "45_thermal_expansion",
    "46_natural_dyes",
    "47_phone_sensors",
    "48_climate_graphs",
)


def test_library_is_exactly_the_listed_lessons():
    on_disk = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "configs" / "lessons").glob("*.yaml"))
    assert on_disk == list(LESSON_FILES)
