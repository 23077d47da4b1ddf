r"""The simulated student's latent cognitive model: pure state plus update functions that take a Generator.

State (:class:`StudentState`, plain floats and dicts so a turn costs microseconds): per knowledge component
(KC) a mastery :math:`L_k \in [0, 1]` (knowledge tracing, docs/spec.md §8), the misconceptions the student holds
with a status ``active`` / ``suppressed`` / ``repaired``, a Bloom level :math:`b \in \{0..5\}`, engagement
:math:`e`, confidence and anxiety, and the item answers it memorised when told.

**Initialisation.** With persona prior :math:`\pi`, KC difficulty :math:`d_k`, :math:`\epsilon \sim N(0, 0.05)`:

.. math:: L_k^0 = \mathrm{clip}(\pi (1 - 0.5 d_k) + \epsilon,\ 0.01, 0.99) \cdot (0.6 + 0.4 \min_{p \in pre(k)} L_p^0)

(the prerequisite factor is 1 without prerequisites), learn rate :math:`T_k = 0.35 \cdot speed \cdot (1 - 0.4 d_k)`,
each task misconception held (``active``) with probability ``misconception_rate``, :math:`b = ` ``bloom_start``.

**Answering.** Slip grows with anxiety, :math:`S' = S + 0.15\,anxiety`. An item over KCs :math:`K` is known with
:math:`L_K = \prod_{k \in K} L_k` (conjunctive: every KC is needed), so

.. math:: P(\text{correct}) = (1 - m)\,[L_K (1 - S') + (1 - L_K) G] \quad (m = \text{misread rate})

with :math:`G` = ``guess`` for free answers and a uniformly random letter (:math:`G = 1/n`) for multiple choice.
Before that, an ``active`` misconception the item has an answer for fires with :math:`p = 0.8 (1 - 0.4 L_k) s_m`
(:math:`s_m` its strength, 1 unless exposition lowered it, see *Uptake*; the
wrong rule competes with the right one on its component :math:`k`) and produces that
answer and its wrong steps; a memorised item (its answer was told) is recalled with :math:`p = 0.9`. Memory is
keyed by item id, so it does not transfer to isomorphic items.

**Response to a tutor act.** Demand :math:`D` = ``GUIDANCE_TO_BLOOM[level]`` (L1 0, L2 1, L3 3), lowered by one
for a scaffold (read from content: a question asked with a true statement on its component -- the hint's fact,
the break-down's first step -- and nothing false in the same turn; the cue words of a hint or break-down alone
scaffold nothing; an act built by hand is taken at its ``hint`` / ``break_down`` label); gap :math:`g = D - b`;
zone *above* if :math:`g \ge 2`, *below* if :math:`g \le -2`, else *within* (the ZPD). Per turn
:math:`e \leftarrow e - decay`, and an act with no target KC (off topic, or content-free) costs another 0.08;
*below* costs a strong student :math:`0.15 \max(L_k, b/5)` engagement (boredom); *above* raises anxiety;
encouragement (praise or encouragement anywhere in the turn's words; a hand-built act: its ``encourage`` label) does
:math:`e \leftarrow e + 0.3 h (1 - e)`, multiplies anxiety by :math:`1 - 0.15 h` and raises confidence, with
:math:`h = 0.5^n` after :math:`n` earlier encouraging turns for a flagging student (:math:`e \le 0.5` after the
decay) and :math:`h = 0` for an engaged one (encouragement re-engages; praise does little for achievement, Hattie &
Timperley, 2007, and frequent praise loses its effect, Brophy, 1981; Henderlong & Lepper, 2002). Then, on the
target KC :math:`k` (none: no learning):

- *irrelevant* turn with :math:`p = 0.8 \max(0, (0.4 - e)/0.4) + 0.25\,distractibility` (no learning);
- *repair*: a misconception of :math:`k` (or named by ``addresses_misconception``) is met by a counterexample
  (named and not plain ``corrective_feedback``, or ``scenario_question`` / ``analogy`` on its KC) →
  ``repaired`` with :math:`p = 0.85` if the student has voiced it (in its last turn, earlier in the dialogue,
  or as a test answer) and the act names it (its own counterexample), else 0.3 (times :math:`0.6 + 0.4e`),
  and :math:`L_k \mathrel{+}= 0.4 (1 - L_k)` (conceptual change brings understanding); read from content the
  chance is 0.85 when the counterexample answers what the student just showed (its last answer or turn), 0.3
  when the student said the idea earlier in the dialogue, 0.15 otherwise (a pre-test answer included), times
  :math:`0.75^r` (answering a showing) or :math:`0.5^r` (unsolicited) after :math:`r` earlier refutations of the
  same idea, and in a turn refuting :math:`n` ideas times :math:`1/n`; by plain negation
  (``corrective_feedback``) only → ``suppressed`` (:math:`p` 0.9 voiced / 0.7). A suppressed misconception
  fires rarely (0.05) in the dialogue and returns to ``active`` with probability ``relapse`` before the
  post-test;
- *question* mode (``is_question``, a generative strategy or ``guide_reasoning`` / ``check_understanding``): an
  active misconception of :math:`k` fires with 0.75 (``incorrect``); else the student succeeds with
  :math:`p = (1 - m)[L_k(1-S') + (1-L_k)G] \cdot z` (:math:`z` 1 within, 0.8 at :math:`g = 1`, 0.25 above), a
  scaffold (or an exposition of :math:`k` not yet practised, see *Uptake*) adding :math:`0.4 (1 - p)`. Success
  at :math:`D > b` raises :math:`b` by one; on a transfer question (read: its demand; built by hand: L3) a curious
  student extends (``higher_order``) with
  :math:`p = curiosity (0.5 + 0.5 e)`. Weight :math:`w` = 2 on success (the generation effect), 0.25 on
  failure or when a misconception fired (0.5 for a failure inside a scaffold: it is worked through); a stuck
  student asks for a hint with :math:`p = help\_seeking (0.5 + 0.5\,metacognition)`;
- *explain* mode (anything else with content): :math:`w = 0.85 (1 - 0.8 L_k)\,uptake` (worked examples help
  novices most; a ``summarize`` turn 0.3 of that); a ``reveals_answer`` turn memorises the ``revealed_items``
  (:math:`p = 0.95`) and, unless it also states the right idea on :math:`k` (an explanation that happens to
  answer a test item teaches as an explanation), has :math:`w = 0.1`; plain ``encourage`` has :math:`w = 0`.

Learning on :math:`k` (an expected BKT transition :math:`L' = L + (1 - L) T`):

.. math:: L_k \leftarrow L_k + (1 - L_k) \min(0.95,\ T_k\, w\, \kappa\, \zeta\, (0.2 + 0.8e)\,\rho\, \phi\, \mu\, \tau)

(:math:`w` after the repeat decay below, :math:`\tau` the trust in the tutor, see *Content*) with
:math:`\kappa` the coherence (1 when the act stays on the previous act's component, 0.6 when it hops to
another: building on the last turn is cheaper than setting up a new topic), :math:`\zeta` 1 within / 0.15
above / 0.3 below, :math:`\rho` 1.15 when the act matches the persona's strategy preference, :math:`\phi` the
prerequisite readiness (questions :math:`0.3 + 0.7 r`, telling :math:`0.6 + 0.4 r`, :math:`r = \min_{p} L_p`),
:math:`\mu` 0.6 while a misconception of :math:`k` is active. A turn that makes a cross-discipline link of
:math:`k` (read: says the link's bridge or two of its keywords, ``Reading.links``; naming another discipline is no
link; built by hand: a ``trigger_transfer`` or ``discipline_transfer`` act whose disciplines include the link's)
multiplies :math:`w` by 1.5 and gives
each linked KC :math:`j` the step :math:`(1 - L_j) \min(0.95, 0.8\, T_j\, \zeta (0.2 + 0.8e))`.

**Content, not labels.** In the env every act carries ``act.content`` (:mod:`tutorzoo.envs.content`): the component
:math:`k` is the one the turn's *checked* content works on (``None``: off topic, whatever its cue words);
question mode needs a gradeable question on :math:`k`, whose demand (recall 0, apply 1, explain 2, transfer 3)
sets :math:`D`; explain mode needs a true statement on :math:`k` (two or more: a worked example, :math:`w` x1.6),
and true steps on other components in the same turn teach those at half an explanation's weight;
a turn with neither teaches nothing, and each false statement in a turn halves what its true content teaches
(the student cannot tell which part to trust), and makes the tutor less credible: every later learning step is
scaled by a trust that each false statement multiplies by 0.8 (floor 0.3) — children track an informant's
accuracy and learn less from one who erred (Koenig & Harris, 2005). A counterexample is ``content.refuted``
(in a turn without false statements) and repairs only a misconception the student holds (``active`` or
``suppressed``). Each *false* statement on a component first takes
:math:`0.2 L_k` of its mastery, and one that states a misconception's rule (or belief) makes it ``active``
(held: at once; else with :math:`p = 0.6 (1 - L_k)`): teaching errors teaches errors. Acts built by hand
(``content is None``) are taken at their labels.

**Uptake is bounded and responsive** (each rule with its source):

- *a turn saturates* (cognitive load; Sweller, 1988): in the order of the turn the first two true statements get
  full attention and each later one half the one before; a component's explanation weight is scaled by
  :math:`\min(1, A_k / \min(n_k, 2))` (:math:`A_k` its statements' attention, :math:`n_k` their number) and a
  secondary component's by :math:`\min(1, A_j)`, so material past the first ideas of a turn teaches little;
  a turn longer than 900 characters costs :math:`0.15 \min(1, (c - 900)/1500)` engagement;
- *repair needs the idea engaged now* (conceptual change needs dissatisfaction with one's own idea; Posner et
  al., 1982): the timing and repeat factors of the *repair* rule above -- the pre-test showing every
  misconception once does not keep a refutation strong all session, and refuting every idea at once splits the
  student's attention;
- *exposition competes with a held wrong rule* (refutation text beats plain exposition by d ~ 0.4-0.6 and
  exposition still beats nothing; Guzzetti et al., 1993; Tippett, 2010): a turn stating the right idea on
  :math:`k` (true statements that are not themselves refutations, nothing false) primes a cut
  :math:`c = 0.8\,a\,(0.6 + 0.4e)` (:math:`a` the component's attention share above) of the strength
  :math:`s_m` of each active misconception of :math:`k`: 15% of it at once (only what exceeds what is
  already primed: the same exposition again adds nothing), the rest when the student next works a question on
  :math:`k` (example-problem pairs, Sweller & Cooper, 1985; Trafton & Reiser, 1993: an example studied and then a
  problem solved teaches more than either alone), whose success chance the example in mind raises as a scaffold
  does (:math:`+0.4 (1 - p)`), and whose learning weight is 1.5x when it is a problem (apply, explain or
  transfer demand, not a recall) -- the same for a problem asked after the turn's own exposition; a right
  answer there cuts :math:`s_m` by another 30% (the right rule gains strength by use); :math:`s_m \ge 0.2`.
  An active misconception fires on a test item with :math:`s_m` times its rate, so the right answer becomes
  more likely while the wrong rule is still held; only a counterexample removes it.

**Adaptivity** (each rule with its source and the size it reproduces): explanations weigh
:math:`(1 - 0.8 L_k)` — the expertise-reversal effect (Kalyuga et al., 2003: worked examples help novices,
hinder experts; here a near-master gains a fifth of a novice's); questions succeed with the BKT probability
and teach :math:`w = 2` on success, 0.25 on failure — the testing/generation effect (Roediger & Karpicke,
2006), which needs prior knowledge, so questioning pays strong students and fails novices (the reverse of
explanations); a demand two Bloom levels above the student confuses and two below bores (ZPD, Vygotsky);
ICAP (Chi & Wylie, 2014): passive (explanation, x0.85 with uptake) < active (recall question) < constructive
(apply/explain question, success x2) < interactive (a scaffold on the student's own turn, +0.4 success);
transfer (x1.5 and the linked component's step) pays only from :math:`L_k \ge 0.5` and distracts before
(x0.6) — transfer needs a base (Bransford & Schwartz, 1999); plain negation only suppresses (relapse before
the post-test), a counterexample repairs — conceptual change (Posner et al., 1982), which needs
dissatisfaction: it repairs with 0.85 right after the student used the idea, 0.3 if it said it earlier in the
dialogue, 0.15 blind, less with each earlier refutation of the same idea; an active misconception fires with
:math:`(1 - 0.4 L_k)` of its rate, competing with the right rule (Siegler's overlapping waves); the same move again
(on any component; read, a move is what the turn does -- its mode, a worked example, a question's demand, a
scaffold, a counterexample -- not its cue words; built by hand, its labels) keeps :math:`\max(0.5, 0.85^r)` of its
weight after :math:`r` repeats and costs :math:`0.01
\min(r, 4)` engagement (diminishing returns of massed, monotonous practice); mastery moves by the expected BKT
transition (Corbett & Anderson, 1995).

**Forgetting** applies once, before the first post-test item, to what was learned in the session:
:math:`L_k \leftarrow L_k^0 + (L_k - L_k^0)(1 - F)` when :math:`L_k > L_k^0` (prior knowledge is not lost in
minutes; fresh learning is fragile).

Why one module of ~950 lines: the state, the answering rule, the response to an act, repair and forgetting are one
system of equations whose constants interact (a repair's mastery bonus feeds the firing competition, the repeat
decay and the expertise reversal scale the same learning step); they are documented together above and pinned
together by ``tests/agents/test_student_equations.py``, and a split would scatter one model over files that each make
sense only with the others. What is not the model lives elsewhere: the persona parameters
(``agents/student/personas.py``), the words (``verbaliser.py``) and the PettingZoo-facing policy (``policy.py``).

Example::

    import numpy as np
    from tutorzoo.agents.student.model import init_state, respond
    state = init_state(task, persona, np.random.default_rng(0))
    plan = respond(state, act, np.random.default_rng(1))
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from tutorzoo.agents.student.personas import Persona
from tutorzoo.envs.acts import TutorAct
from tutorzoo.envs.labels import BLOOM_LEVELS, GUIDANCE_TO_BLOOM
from tutorzoo.envs.tasks.base import Item, KCLink, KnowledgeComponent, Misconception, Task

if TYPE_CHECKING:
    from tutorzoo.envs.content import Reading

BASE_LEARN = 0.35
ACTIVE, SUPPRESSED, REPAIRED = "active", "suppressed", "repaired"

GENERATIVE_STRATEGIES = frozenset({"follow_up_question", "hint", "break_down", "scenario_question"})
GENERATIVE_INTENTS = frozenset({"guide_reasoning", "check_understanding"})
SCAFFOLDS = frozenset({"hint", "break_down"})
COUNTER_STRATEGIES = frozenset({"scenario_question", "analogy"})

W_SUCCESS, W_FAIL, W_EXPLAIN, W_REVEAL = 2.0, 0.25, 0.85, 0.1
W_FAIL_SCAFFOLDED = 0.5  # a failed attempt inside a hint/break-down still gets worked through with help
ZONE_SUCCESS = {"within": 1.0, "stretch": 0.8, "above": 0.25, "below": 1.0}
ZONE_LEARN = {"within": 1.0, "stretch": 1.0, "above": 0.15, "below": 0.3}
SCAFFOLD_BOOST = 0.4
P_FIRE_DIALOGUE, P_FIRE_EXPLAIN, P_FIRE_SUPPRESSED, P_FIRE_TEST = 0.75, 0.4, 0.05, 0.8
P_REPAIR_SHOWN, P_REPAIR_UNSHOWN, P_SUPPRESS_SHOWN, P_SUPPRESS_UNSHOWN = 0.85, 0.3, 0.9, 0.7
# conceptual change needs dissatisfaction: a counterexample right after the student used the idea convinces
# (0.85); one to an idea it said earlier in the dialogue less (0.3); one to an idea it never said there rarely (0.15)
P_REPAIR_EARLIER, P_REPAIR_BLIND = 0.3, 0.15
SECONDARY = 0.5  # true steps on other components in the same turn teach them at half an explanation's weight
COMPETITION = 0.4  # an active misconception fires with p (1 - 0.4 L) of its component (see _competing)
MONOTONY = 0.01  # engagement lost per earlier repeat of the same move (up to four)
REPAIR_BONUS, TRANSFER_BOOST, TRANSFER_LINKED = 0.4, 1.5, 0.8
P_RECALL, P_MEMORISE = 0.9, 0.95
BOREDOM = 0.15
W_SUMMARY = 0.3
PHI_QUESTION = 0.3  # readiness floor of questions: without the prerequisites a question reaches little
COHERENCE_SWITCH = 0.6
OFF_TOPIC_COST = 0.08
PREFERENCE_BONUS = 1.15
EXPERTISE_REVERSAL = 0.8  # explanation weight (1 - 0.8 L): a novice gains 5x what a near-master does
WORKED_EXAMPLE = 1.6  # two or more true steps on the component: a worked example
REPEAT_DECAY, REPEAT_FLOOR = 0.85, 0.5  # each repeat of the same move on a component keeps 85%, down to half
TRANSFER_READY, TRANSFER_EARLY = 0.5, 0.6  # transfer pays from L >= 0.5; before that it distracts
FALSE_CLAIM = 0.2  # a false statement on a component takes 20% of its mastery
CONTRADICTED = 0.5  # each false statement in a turn halves what its true content teaches
TRUST_LOSS, TRUST_FLOOR = 0.8, 0.3  # each false statement: the tutor is believed 20% less (down to 30%)
P_ADOPT = 0.6  # P(adopt a stated wrong rule) = 0.6 (1 - L)
DEMAND_TO_BLOOM = {"recall": 0, "apply": 1, "explain": 2, "transfer": 3}
# cognitive load (Sweller, 1988): working memory holds an idea or two; a turn's first two true statements get full
# attention, each later one half the attention of the one before (a turn saturates near three ideas' worth)
FULL_ATTENTION, SATURATION = 2, 0.5
# a very long turn overloads and tires: engagement -0.15 x min(1, (chars - 900) / 1500) beyond 900 characters
LONG_TURN_CHARS, LONG_TURN_SPAN, LONG_TURN_COST = 900, 1500.0, 0.15
# conceptual change needs dissatisfaction with one's own idea (Posner et al., 1982): a refutation the student did
# not ask for by showing the idea just before weakens by half with each earlier unsolicited one of the same idea
UNSOLICITED_DECAY, SOLICITED_DECAY = 0.5, 0.75
# a turn refuting n ideas splits the student's attention: each repairs 1/n as often, the idea it just showed too
# (feedback works when it is focused on the error the student made; Shute, 2008)
# exposition of the correct idea (Guzzetti et al., 1993; Tippett, 2010: refutation text beats plain exposition by
# d ~ 0.4-0.6, exposition still beats nothing): each explained turn on a held misconception's component lowers
# how often the wrong rule wins by up to 80% x attention x (0.6 + 0.4 e), down to 20% of its strength -- the right
# rule competes better (Siegler's overlapping waves); only a counterexample removes the wrong rule (repair)
EXPOSITION, EXPOSITION_FLOOR = 0.8, 0.2
# a right answer on the component while the wrong rule is held: the right rule gains strength by use (Siegler)
USE_CUT = 0.3
# a held wrong rule interferes with learning on its component: learning there is scaled by 0.6 (mu)
INTERFERENCE = 0.6
# example-problem pairs (Sweller & Cooper, 1985; Trafton & Reiser, 1993; van Gog et al., 2011: an example studied
# and then a problem solved teaches more than problems alone): a problem (apply, explain or transfer; not a recall)
# worked with an exposition of its component in mind -- in the same turn or primed before -- weighs 1.5x
PAIRED = 0.5
EXPOSED_NOW = 0.15  # the share of an exposition's cut that holds without practice (the rest waits for a question)
# affect: encouragement lifts engagement by 0.3 (1 - e), multiplies anxiety by 0.85, raises confidence by 0.1 (1 - c)
ENCOURAGE_LIFT, ENCOURAGE_CALM, ENCOURAGE_CONFIDENCE = 0.3, 0.85, 0.1
PRAISE_HABITUATION = 0.5  # each earlier encouraging turn halves what the next one lifts
PRAISE_NEED = 0.5  # encouragement lifts a flagging student (engagement at or below this), not an engaged one
ABOVE_ANXIETY, ABOVE_CONFIDENCE = 0.1, 0.95  # a demand above the ZPD: anxiety + 0.1 (1 - a), confidence x0.95
ENGAGEMENT_FLOOR = 0.02  # engagement never falls below this
# drifting off: p = 0.8 max(0, (0.4 - e) / 0.4) + 0.25 distractibility
DRIFT, DRIFT_BELOW, DISTRACTION = 0.8, 0.4, 0.25
CLOSING_CLEAR = 0.6  # the closing reply is clear when the component's mastery exceeds this
REVEAL_HELP = 0.5  # a question that gives its answer away: success + 0.5 (1 - p)
# confidence after a question: x0.97 when the wrong rule answered, x0.95 on a failure, + 0.05 (1 - c) on success
MISCONCEPTION_CONFIDENCE, FAIL_CONFIDENCE, SUCCESS_CONFIDENCE = 0.97, 0.95, 0.05
SUCCESS_ENGAGEMENT = 0.02  # a right answer lifts engagement a little
# the opening: a held misconception is tried with p 0.6; a student with mean mastery above 0.6 may attempt the task
P_OPEN_WITH_MISCONCEPTION, OPEN_CONFIDENT = 0.6, 0.6


@dataclass(slots=True)
class StudentState:
    """The hidden state of one simulated student during one episode (mutable; updated in place)."""

    persona: Persona
    task: Task
    kcs: dict[str, KnowledgeComponent]
    mastery: dict[str, float]
    learn: dict[str, float]
    prerequisites: dict[str, tuple[str, ...]]
    misconceptions: dict[str, Misconception]
    status: dict[str, str]  # held misconceptions only, in task order
    bloom: int
    engagement: float
    confidence: float
    anxiety: float
    initial: dict[str, float] = field(default_factory=dict)  # mastery at the start (forgetting hits the gain)
    memorised: dict[str, int] = field(default_factory=dict)  # item id -> turn told
    last_shown: str | None = None
    last_kc: str | None = None  # the component of the previous on-topic act (coherence)
    voiced: set[str] = field(default_factory=set)  # misconceptions the student has stated (tests or dialogue)
    said: set[str] = field(default_factory=set)  # misconceptions the student has stated in the dialogue
    steps_cache: dict = field(default_factory=dict)  # the verbaliser's solution steps per KC (fixed per task)
    forgotten: bool = False
    turns: int = 0
    moves: dict = field(default_factory=dict)  # a move's signature (see _repeat) -> times played
    praised: int = 0  # encouraging turns heard (praise habituates)
    trust: float = 1.0  # how far the student believes this tutor: each false statement costs (see _mislead)
    strength: dict[str, float] = field(default_factory=dict)  # misconception -> how often its rule wins (default 1)
    unsolicited: dict[str, int] = field(default_factory=dict)  # misconception -> refutations heard (not repaired)
    primed: dict[str, float] = field(default_factory=dict)  # component -> exposition's cut awaiting practice

    @property
    def seen_items(self) -> frozenset[str]:
        """The items the student has met (the pre-test): only their answers can be memorised when told; an
        answer said for a question the student never saw is a number without a question."""
        return frozenset(i.id for i in self.task.pretest) | {"task"}


@dataclass(frozen=True, slots=True)
class Plan:
    """What the student does on its turn: the verbaliser turns it into text, the labels are the truth.

    ``kind`` is one of ``opening_question``, ``opening_attempt``, ``correct``, ``higher_order``,
    ``misconception``, ``wrong``, ``confused``, ``ask_hint``, ``irrelevant``, ``acknowledge``, ``paraphrase``,
    ``off_topic``, ``closing``.
    """

    kind: str
    cognition_state: str
    bloom: int
    kc: str | None = None
    misconception: str | None = None
    disciplines: tuple[str, ...] = ("math",)
    discipline_transfer: bool = False
    linked_kc: str | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """A test-item answer: ``how`` is ``memorised``, ``misconception``, ``known``, ``slip`` or ``guess``."""

    how: str
    answer: str
    correct: bool
    misconception: str | None = None


def init_state(task: Task, persona: Persona, rng: np.random.Generator) -> StudentState:
    """The student's state at the start of an episode on ``task`` (draws misconceptions and mastery noise)."""
    kcs = {k.id: k for k in task.knowledge_components}
    prereq = {k.id: tuple(p for p in k.prerequisites if p in kcs and p != k.id) for k in task.knowledge_components}
    base = {}
    for kid, k in kcs.items():  # draws in task order: deterministic
        noisy = persona.prior_knowledge * (1.0 - 0.5 * k.difficulty) + rng.normal(0.0, 0.05)
        base[kid] = min(0.99, max(0.01, noisy))
    mastery: dict[str, float] = {}

    def resolve(kid: str, visiting: frozenset[str]) -> float:
        if kid in mastery:
            return mastery[kid]
        pres = [p for p in prereq[kid] if p not in visiting]  # a cycle in the prerequisites is cut, not followed
        ready = min((resolve(p, visiting | {kid}) for p in pres), default=1.0)
        mastery[kid] = base[kid] * (0.6 + 0.4 * ready)
        return mastery[kid]

    for kid in kcs:
        resolve(kid, frozenset())
    mastery = {kid: mastery[kid] for kid in kcs}
    speed = BASE_LEARN * persona.learning_speed
    learn = {kid: speed * (1.0 - 0.4 * k.difficulty) for kid, k in kcs.items()}
    misconceptions = {m.id: m for m in task.misconceptions}
    status = {m.id: ACTIVE for m in task.misconceptions if rng.random() < persona.misconception_rate}
    return StudentState(
        persona=persona,
        task=task,
        kcs=kcs,
        mastery=mastery,
        learn=learn,
        prerequisites=prereq,
        misconceptions=misconceptions,
        status=status,
        bloom=BLOOM_LEVELS.index(persona.bloom_start),
        engagement=persona.engagement,
        confidence=persona.confidence,
        anxiety=persona.anxiety,
        initial=dict(mastery),
    )


def p_correct(state: StudentState, kc: str) -> float:
    """BKT probability of a correct free answer on one KC: ``L(1 - S') + (1 - L) G``."""
    s = _slip(state)
    lk = state.mastery[kc]
    return lk * (1.0 - s) + (1.0 - lk) * state.persona.guess


def snapshot(state: StudentState) -> dict:
    """A JSON-able copy of the hidden state (the StudentTurn's ``privileged`` field)."""
    return {
        "mastery": {k: round(v, 6) for k, v in state.mastery.items()},
        "misconceptions": dict(state.status),
        "bloom": BLOOM_LEVELS[state.bloom],
        "engagement": round(state.engagement, 6),
        "confidence": round(state.confidence, 6),
        "anxiety": round(state.anxiety, 6),
        "memorised": sorted(state.memorised),
    }


def _slip(state: StudentState) -> float:
    return min(0.6, state.persona.slip + 0.15 * state.anxiety)


def _kc_discipline(state: StudentState, kc: str | None) -> tuple[str, ...]:
    if kc is None:
        return (state.task.disciplines[0],)
    return (state.kcs[kc].discipline,)


def open_dialogue(state: StudentState, rng: np.random.Generator) -> Plan:
    """The student's opening turn (SID: the student opens): its question, or its attempt at the task."""
    p = state.persona
    first_kc = state.task.pretest[0].kcs[0] if state.task.pretest[0].kcs[0] in state.kcs else next(iter(state.kcs))
    active = [mid for mid, s in state.status.items() if s == ACTIVE]
    disc = _kc_discipline(state, first_kc)
    if active and rng.random() < P_OPEN_WITH_MISCONCEPTION:
        mid = active[0]
        state.last_shown = mid
        state.voiced.add(mid)
        state.said.add(mid)
        mkc = state.misconceptions[mid].kc
        return Plan(kind="opening_attempt", cognition_state="incorrect", bloom=min(2, max(state.bloom, 1)), kc=mkc,
                    misconception=mid, disciplines=_kc_discipline(state, mkc))
    state.last_shown = None
    mean_l = sum(state.mastery.values()) / len(state.mastery)
    if mean_l > OPEN_CONFIDENT and rng.random() < 0.5 + 0.5 * p.curiosity:
        return Plan(kind="opening_attempt", cognition_state="clear_understanding", bloom=min(2, state.bloom + 1),
                    kc=first_kc, disciplines=disc)
    return Plan(kind="opening_question", cognition_state="vague_understanding", bloom=min(1, state.bloom),
                kc=first_kc, disciplines=disc)


@dataclass(frozen=True, slots=True)
class TurnReading:
    """One tutor turn as the student takes it, built once by :func:`read_turn`: from the turn's content (what it
    says, checked against the task), or from a hand-built act's labels (``read`` is False: one true statement on its
    target, a question or a scaffold by its labels, nothing false)."""

    kc: str | None  # the component the turn works on (None: off topic, invalid, or content-free)
    read: bool  # read from content; False: taken at the labels of an act built by hand
    question: bool  # asks a question the student can work on ``kc``
    demand: int  # the Bloom demand, one lower for a scaffold
    scaffold: bool  # a question with its hint's fact or first step beside it (or a hint / break-down label)
    n_true: int  # true statements on ``kc`` (labels: 1)
    n_false: int  # false statements anywhere in the turn (labels: 0)
    worked_example: bool  # two or more true statements on ``kc`` (content only)
    focus: float  # ``kc``'s share of the turn's attention (1: its first idea or two came while the student attended)
    attention: dict[str, float] = field(default_factory=dict)  # per component, its true statements' attention
    shown_right: int = 0  # true statements on ``kc`` that state the right idea (not questions, not refutations)
    problem: bool = False  # the question is a problem to work (apply, explain or transfer), not a recall
    extends: bool = False  # the question asks for transfer (read: its demand; labels: L3): a success can extend
    reading: Reading | None = None


def read_turn(state: StudentState, act: TutorAct) -> TurnReading:
    """The turn as the student takes it (see :class:`TurnReading`); pure."""
    reading = act.content
    if reading is None:
        kc = act.target_kc if act.target_kc in state.mastery and not act.invalid else None
        question = act.is_question or act.strategy in GENERATIVE_STRATEGIES or act.intent in GENERATIVE_INTENTS
        scaffold = act.strategy in SCAFFOLDS
        demand = GUIDANCE_TO_BLOOM[act.guidance_level]
        return TurnReading(kc=kc, read=False, question=question, demand=demand - 1 if scaffold and demand else demand,
                           scaffold=scaffold, n_true=1, n_false=0, worked_example=False, focus=1.0,
                           extends=demand >= GUIDANCE_TO_BLOOM["L3"])
    kc = reading.kc if reading.kc in state.mastery and not act.invalid else None
    asked = reading.questions(kc) if kc is not None else []
    n_true = reading.true_statements(kc) if kc is not None else 0
    n_false = reading.false_statements()
    demand = DEMAND_TO_BLOOM[asked[0].demand or "apply"] if asked else GUIDANCE_TO_BLOOM[act.guidance_level]
    # a scaffold: a question asked with true content on its component in the same turn -- the hint's fact or the
    # break-down's first step it builds on -- and nothing false beside it (a "step by step" cue alone scaffolds
    # nothing)
    scaffold = bool(asked) and n_true >= 1 and not n_false
    attention = _attention(reading)
    focus = 1.0 if n_true == 0 else min(1.0, attention.get(kc, 0.0) / min(n_true, FULL_ATTENTION))
    # exposition is the right idea stated, not a refutation (a case against the wrong idea acts through repair)
    shown_right = sum(1 for c in reading.claims if c.kc == kc and c.verdict == "true" and not c.question
                      and not c.refutes)
    return TurnReading(kc=kc, read=True, question=bool(asked), demand=demand - 1 if scaffold and demand else demand,
                       scaffold=scaffold, n_true=n_true, n_false=n_false, worked_example=n_true >= 2, focus=focus,
                       attention=attention, shown_right=shown_right, problem=bool(asked) and demand >= 1,
                       extends=bool(asked) and demand >= GUIDANCE_TO_BLOOM["L3"], reading=reading)


def respond(state: StudentState, act: TutorAct, rng: np.random.Generator, chars: int = 0,
            praise: bool | None = None) -> Plan:
    """Apply one tutor act to ``state`` (learning, repair, affect) and return the student's planned reply.

    The student learns from ``act.content`` (what the turn says, checked against the task: see the module
    docstring); an act without content (built by hand) is taken at its labels. ``chars`` is the length of the
    turn's text (0: unknown, no load cost); ``praise`` whether its words praise or encourage (None: the act's
    ``encourage`` label says). The steps, in order: read the turn, follow its component, feel it
    (engagement, anxiety), believe its falsehoods, end or drift off, repair, answer or listen, learn, expose."""
    state.turns += 1
    turn = read_turn(state, act)
    coherence = _follow(state, turn.kc)
    zone = _feel(state, act.strategy == "encourage" if praise is None else praise, turn, chars)
    engaged = state.engagement
    if turn.read:
        _mislead(state, turn.reading, rng)  # false content teaches falsehood, whatever else the turn does
    shown_before = state.last_shown
    state.last_shown = None
    if (early := _no_uptake(state, act, turn.kc, rng)) is not None:
        return early
    kc = turn.kc
    changed = _repair(state, act, kc, shown_before, rng)
    held = [mid for mid, s in state.status.items()
            if state.misconceptions[mid].kc == kc and mid not in changed and s != REPAIRED]
    lk = state.mastery[kc]
    links = _transfer_links(state, act, kc)
    fired = _fire(state, held, P_FIRE_DIALOGUE if turn.question else P_FIRE_EXPLAIN, rng)
    mode, w = _mode(state, act, turn, lk, rng)
    if mode == "question":
        plan, w = _answer(state, act, turn, zone, fired, held, links, engaged, rng)
    else:
        plan = _listen(state, turn, mode, zone, fired, lk, rng)
    repeats = _repeat(state, act, turn, mode)
    exposed = (turn.shown_right and not turn.n_false) or state.primed.get(kc, 0.0) > 0.0
    if mode == "question" and turn.problem and exposed:
        w *= 1.0 + PAIRED  # a problem worked with the studied example in mind (example-problem pairs)
    if w > 0.0:
        _learn(state, act, turn, mode, w * max(REPEAT_FLOOR, REPEAT_DECAY ** repeats), zone, coherence, held, links,
               lk)
    if turn.read:
        _expose(state, kc, held, 0 if turn.n_false else turn.shown_right, turn.focus, mode == "question")
    state.last_shown = plan.misconception if plan.cognition_state == "incorrect" else None
    if state.last_shown is not None:
        state.voiced.add(state.last_shown)
        state.said.add(state.last_shown)
    return plan


def _follow(state: StudentState, kc: str | None) -> float:
    """The coherence :math:`\\kappa`: a tutor who stays with a component lets the student build on the last turn;
    hopping to another costs set-up."""
    coherence = 1.0 if kc is None or state.last_kc in (None, kc) else COHERENCE_SWITCH
    if kc is not None:
        state.last_kc = kc
    return coherence


def _feel(state: StudentState, praise: bool, turn: TurnReading, chars: int) -> str:
    """Affect: engagement decays, encouragement lifts it and calms, a demand outside the ZPD bores or worries, a
    very long turn tires. Returns the zone (``within``, ``stretch``, ``above``, ``below``)."""
    p = state.persona
    e = state.engagement - p.engagement_decay
    if praise:
        # encouragement re-engages a flagging student, and less each time it is heard; an engaged student has
        # nothing to gain from it: praise does little for achievement (Hattie & Timperley, 2007) and frequent praise
        # loses its effect (Brophy, 1981; Henderlong & Lepper, 2002)
        fresh = PRAISE_HABITUATION ** state.praised if e <= PRAISE_NEED else 0.0
        state.praised += 1
        e += fresh * ENCOURAGE_LIFT * (1.0 - e)
        state.anxiety *= 1.0 - fresh * (1.0 - ENCOURAGE_CALM)
        state.confidence += fresh * ENCOURAGE_CONFIDENCE * (1.0 - state.confidence)
    gap = turn.demand - state.bloom
    zone = "above" if gap >= 2 else "below" if gap <= -2 else "stretch" if gap == 1 else "within"
    if zone == "below" and turn.kc is not None:
        e -= BOREDOM * max(state.mastery[turn.kc], state.bloom / 5.0)
    elif zone == "above" and turn.kc is not None:
        state.anxiety += ABOVE_ANXIETY * (1.0 - state.anxiety)
        state.confidence *= ABOVE_CONFIDENCE
    if chars > LONG_TURN_CHARS:  # cognitive overload: a wall of text tires whatever it says
        e -= LONG_TURN_COST * min(1.0, (chars - LONG_TURN_CHARS) / LONG_TURN_SPAN)
    state.engagement = min(1.0, max(ENGAGEMENT_FLOOR, e))
    return zone


def _no_uptake(state: StudentState, act: TutorAct, kc: str | None, rng: np.random.Generator) -> Plan | None:
    """The turns the student takes nothing from: the closing, a turn about nothing it is working on (which
    disengages), and a turn it drifts off in (low engagement, distractibility); None otherwise."""
    if act.ends_session:
        label = "clear_understanding" if kc and state.mastery[kc] > CLOSING_CLEAR else "vague_understanding"
        return Plan(kind="closing", cognition_state=label, bloom=min(1, state.bloom), kc=kc,
                    disciplines=_kc_discipline(state, kc))
    if kc is None:
        state.engagement = max(ENGAGEMENT_FLOOR, state.engagement - OFF_TOPIC_COST)
        return Plan(kind="off_topic", cognition_state="expression_difficulty" if act.invalid else "vague_understanding",
                    bloom=0, disciplines=_kc_discipline(state, None))
    p = state.persona
    p_irr = DRIFT * max(0.0, (DRIFT_BELOW - state.engagement) / DRIFT_BELOW) + DISTRACTION * p.distractibility
    if rng.random() < p_irr:
        return Plan(kind="irrelevant", cognition_state="irrelevant", bloom=0, kc=kc,
                    disciplines=_kc_discipline(state, kc))
    return None


def _transfer_links(state: StudentState, act: TutorAct, kc: str) -> tuple[KCLink, ...]:
    """The links of ``kc`` the turn makes: read, those whose bridge or keywords it says (``Reading.links``; naming
    another discipline is no transfer); built by hand, those of the act's disciplines on a transfer act."""
    if act.content is not None:
        made = act.content.links
        return tuple(link for link in state.kcs[kc].links if (kc, link.discipline) in made)
    if act.intent == "trigger_transfer" or act.discipline_transfer:
        return tuple(link for link in state.kcs[kc].links if link.discipline in act.disciplines)
    return ()


def _memorise(state: StudentState, act: TutorAct, rng: np.random.Generator) -> None:
    """A turn that gives answers away: the student memorises those of the items it has seen."""
    for item_id in act.revealed_items:
        if item_id in state.seen_items and rng.random() < P_MEMORISE:
            state.memorised[item_id] = state.turns


def _mode(state: StudentState, act: TutorAct, turn: TurnReading, lk: float,
          rng: np.random.Generator) -> tuple[str, float]:
    """How the student takes the turn (``reveal``, ``question``, ``encourage`` or ``explain``) and the weight
    :math:`w` of its learning step before the repeat decay (a question's weight waits for its outcome)."""
    p = state.persona
    if act.reveals_answer:  # the answers a turn gives away are remembered (a question's: remembered, not generated)
        _memorise(state, act, rng)
    if act.reveals_answer and not turn.question and not (turn.read and turn.shown_right):
        w, mode = W_REVEAL, "reveal"  # an answer told and nothing explained
    elif turn.question:
        w, mode = 0.0, "question"
    elif act.strategy == "encourage" and not turn.read:
        w, mode = 0.0, "encourage"
    elif turn.n_true == 0:
        w, mode = 0.0, "encourage"  # nothing true said about the component: nothing to learn from
    else:
        # expertise reversal: explanations and worked examples help novices most and strong students least
        w, mode = W_EXPLAIN * (1.0 - EXPERTISE_REVERSAL * lk) * p.explanation_uptake, "explain"
        if turn.worked_example:
            w *= WORKED_EXAMPLE  # a run of true steps is a worked example
    if turn.read and w > 0.0:
        w *= CONTRADICTED ** min(3, turn.n_false)  # true and false mixed: the student cannot tell
        if mode == "explain":
            w *= turn.focus  # material past the first ideas of a turn is barely processed
        if act.intent == "summarize":
            w *= W_SUMMARY  # a recap consolidates; it does not teach what was never worked on
    return mode, w


def _answer(state: StudentState, act: TutorAct, turn: TurnReading, zone: str, fired: str | None, held: list[str],
            links: tuple[KCLink, ...], engaged: float, rng: np.random.Generator) -> tuple[Plan, float]:
    """The student works the turn's question: its wrong rule fires, or it succeeds (the generation effect) or
    fails; returns its reply and the learning weight."""
    kc, disc = turn.kc, _kc_discipline(state, turn.kc)
    if fired is not None:
        state.confidence *= MISCONCEPTION_CONFIDENCE
        return Plan(kind="misconception", cognition_state="incorrect", bloom=min(turn.demand, state.bloom), kc=kc,
                    misconception=fired, disciplines=disc), W_FAIL
    if rng.random() < _p_success(state, act, turn, zone):
        return _succeed(state, act, turn, held, links, engaged, rng), W_SUCCESS
    state.confidence *= FAIL_CONFIDENCE
    p = state.persona
    asks = rng.random() < p.help_seeking * (0.5 + 0.5 * p.metacognition)
    bloom = min(turn.demand, state.bloom)
    if zone == "above":
        label = "expression_difficulty" if rng.random() < 0.5 else "vague_understanding"
        plan = Plan(kind="ask_hint" if asks else "confused", cognition_state=label, bloom=min(1, state.bloom), kc=kc,
                    disciplines=disc)
    elif asks:
        plan = Plan(kind="ask_hint", cognition_state="vague_understanding", bloom=bloom, kc=kc, disciplines=disc)
    elif rng.random() < p.metacognition:
        plan = Plan(kind="confused", cognition_state="vague_understanding", bloom=bloom, kc=kc, disciplines=disc)
    else:
        plan = Plan(kind="wrong", cognition_state="incorrect", bloom=bloom, kc=kc, disciplines=disc)
    return plan, W_FAIL_SCAFFOLDED if turn.scaffold else W_FAIL


def _p_success(state: StudentState, act: TutorAct, turn: TurnReading, zone: str) -> float:
    """P(a right answer to the question): the BKT probability on its component, times the zone's factor, helped by
    a scaffold and by an answer given away."""
    p, lk = state.persona, state.mastery[turn.kc]
    success = lk * (1.0 - _slip(state)) + (1.0 - lk) * p.guess
    success *= (1.0 - p.misread_rate) * ZONE_SUCCESS[zone]
    if turn.scaffold or state.primed.get(turn.kc, 0.0) > 0.0:
        # a hint or first step beside the question, or an exposition of its component not yet practised (the
        # example in mind: example-problem pairs, Trafton & Reiser, 1993)
        success += SCAFFOLD_BOOST * (1.0 - success)
    if act.reveals_answer:
        success += REVEAL_HELP * (1.0 - success)
    return success


def _succeed(state: StudentState, act: TutorAct, turn: TurnReading, held: list[str], links: tuple[KCLink, ...],
             engaged: float, rng: np.random.Generator) -> Plan:
    """A right answer: the right rule gains strength against a held wrong one, confidence and Bloom level rise,
    and on L3 a curious student extends (``higher_order``)."""
    kc, demand = turn.kc, turn.demand
    for mid in held:  # using the right rule successfully strengthens it against the wrong one
        if state.status.get(mid) == ACTIVE:
            state.strength[mid] = max(EXPOSITION_FLOOR, state.strength.get(mid, 1.0) * (1.0 - USE_CUT))
    state.confidence += SUCCESS_CONFIDENCE * (1.0 - state.confidence)
    state.engagement = min(1.0, state.engagement + SUCCESS_ENGAGEMENT)
    if demand > state.bloom:
        state.bloom += 1
    linked = links[0] if links else None
    disc = _transfer_disc(_kc_discipline(state, kc), linked)
    transfer = {"discipline_transfer": linked is not None, "linked_kc": linked.kc if linked else None}
    if turn.extends and rng.random() < state.persona.curiosity * (0.5 + 0.5 * engaged):
        state.bloom = min(5, max(state.bloom, demand) + 1)
        return Plan(kind="higher_order", cognition_state="higher_order", bloom=state.bloom, kc=kc,
                    disciplines=disc, **transfer)
    return Plan(kind="correct", cognition_state="clear_understanding", bloom=max(0, min(demand, state.bloom)), kc=kc,
                disciplines=disc, **transfer)


def _listen(state: StudentState, turn: TurnReading, mode: str, zone: str, fired: str | None, lk: float,
            rng: np.random.Generator) -> Plan:
    """The reply to a turn that asks nothing: a wrong rule voiced, confusion above the ZPD, else an
    acknowledgement or a paraphrase (clear with probability :math:`L_k`)."""
    kc, disc = turn.kc, _kc_discipline(state, turn.kc)
    if fired is not None:
        return Plan(kind="misconception", cognition_state="incorrect", bloom=min(1, state.bloom), kc=kc,
                    misconception=fired, disciplines=disc)
    if zone == "above":
        return Plan(kind="confused", cognition_state="vague_understanding", bloom=min(1, state.bloom), kc=kc,
                    disciplines=disc)
    return Plan(kind="acknowledge" if mode in ("reveal", "encourage") else "paraphrase",
                cognition_state="clear_understanding" if rng.random() < lk else "vague_understanding",
                bloom=max(0, min(turn.demand, state.bloom, 1 if mode == "explain" else 0)), kc=kc, disciplines=disc)


def _repeat(state: StudentState, act: TutorAct, turn: TurnReading, mode: str) -> int:
    """How often the same move was played before (on any component; a worked example is not an explanation, a
    counterexample not a plain question): a monotonous session wears engagement down (diminishing returns of
    massed, monotonous practice)."""
    # read, the move is what the turn does (a question's demand, a scaffold, a counterexample), not the cue words it
    # says them with; an act built by hand is its labels
    signature = (mode, turn.worked_example, turn.demand, turn.scaffold, bool(act.content.refuted)) if turn.read \
        else (mode, turn.worked_example, act.intent, act.strategy, act.guidance_level)
    repeats = state.moves.get(signature, 0)
    state.moves[signature] = repeats + 1
    if repeats:
        state.engagement = max(ENGAGEMENT_FLOOR, state.engagement - MONOTONY * min(repeats, 4))
    return repeats


def _learn(state: StudentState, act: TutorAct, turn: TurnReading, mode: str, w: float, zone: str, coherence: float,
           held: list[str], links: tuple[KCLink, ...], lk: float) -> None:
    """The expected BKT step on the turn's component (see the module docstring for its factors), a transfer's step
    on the linked components, and a worked example's half-weight step on the other components it runs through."""
    p, kc = state.persona, turn.kc
    eng = 0.2 + 0.8 * state.engagement
    z = ZONE_LEARN[zone]
    ready = min((state.mastery[q] for q in state.prerequisites[kc]), default=1.0)
    phi = (PHI_QUESTION + (1.0 - PHI_QUESTION) * ready) if mode == "question" else (0.6 + 0.4 * ready)
    rho = _preference(p.strategy_preference, act, turn, mode)
    mu = INTERFERENCE if any(state.status.get(mid) == ACTIVE for mid in held) else 1.0
    if links:
        if lk >= TRANSFER_READY:  # transfer builds on a base that is partly there; before that it confuses
            w *= TRANSFER_BOOST
            for link in links:
                j = link.kc
                if j is not None and j != kc and j in state.mastery:
                    step = min(0.95, TRANSFER_LINKED * state.learn[j] * z * eng)
                    state.mastery[j] += (1.0 - state.mastery[j]) * step
        else:
            w *= TRANSFER_EARLY
    step = min(0.95, state.learn[kc] * w * z * eng * rho * phi * mu * coherence * state.trust)
    state.mastery[kc] = lk + (1.0 - lk) * step
    if mode == "explain" and turn.read:
        # a worked example that runs through other components' steps teaches those too, at half weight and only
        # as far as the student still attends (the turn's first ideas take its working memory)
        for j in state.mastery:
            if j != kc and turn.reading.true_statements(j):
                lj = state.mastery[j]
                wj = SECONDARY * W_EXPLAIN * (1.0 - EXPERTISE_REVERSAL * lj) * p.explanation_uptake
                wj *= min(1.0, turn.attention.get(j, 0.0))
                state.mastery[j] = lj + (1.0 - lj) * min(0.95, state.learn[j] * wj * z * eng * state.trust)


def _mislead(state: StudentState, reading, rng: np.random.Generator) -> None:
    """False content: each false statement on a component lowers its mastery, and one that states a
    misconception's rule (or belief) makes that misconception active (a novice adopts it more readily)."""
    for claim in reading.claims:
        if claim.verdict != "false" or claim.question:
            continue
        state.trust = max(TRUST_FLOOR, state.trust * TRUST_LOSS)  # any falsehood, on the task or not
        if claim.kc not in state.mastery:
            continue
        lk = state.mastery[claim.kc]
        state.mastery[claim.kc] = lk - FALSE_CLAIM * lk
        mid = claim.affirms
        if mid is None or mid not in state.misconceptions:
            continue
        s = state.status.get(mid)
        if s == ACTIVE:
            continue
        if s in (SUPPRESSED, REPAIRED) or rng.random() < P_ADOPT * (1.0 - lk):
            state.status[mid] = ACTIVE


def _transfer_disc(disc: tuple[str, ...], link: KCLink | None) -> tuple[str, ...]:
    if link is None:
        return disc
    return disc if link.discipline in disc else disc + (link.discipline,)


def _preference(pref: str, act: TutorAct, turn: TurnReading, mode: str) -> float:
    """The persona's strategy preference :math:`\\rho`: read, an example is a worked example said; an analogy is
    taken at its label on a turn with true content on the component (an analogy's content is not checked)."""
    if pref == "analogy":
        return PREFERENCE_BONUS if act.strategy == "analogy" and turn.n_true else 1.0
    if pref == "examples":
        example = turn.worked_example if turn.read else act.strategy in (None, "contextualize")
        return PREFERENCE_BONUS if mode == "explain" and example else 1.0
    if pref == "questions":
        return PREFERENCE_BONUS if mode == "question" else 1.0
    if pref == "rely_on_teacher":
        return 1.2 if mode == "explain" else 0.8 if mode == "question" else 1.0
    return 1.0


def _competing(state: StudentState, kc: str) -> float:
    """How strongly an active misconception competes with the correct knowledge of its component: the wrong
    rule is chosen less often as the right one gains strength (strategy choice by relative strength,
    Siegler's overlapping waves): ``1 - 0.4 L``."""
    return 1.0 - COMPETITION * state.mastery.get(kc, 0.0)


def _expose(state: StudentState, kc: str, held: list[str], n_true: int, focus: float, practised: bool) -> None:
    """Exposition of the right idea on ``kc`` (``n_true`` true statements, nothing false) primes it against the
    active wrong rules held there: a share of the cut at once (only what the turn primes beyond what is already
    primed: the same exposition again adds nothing), the rest once the student works a question on ``kc`` with the
    example in mind (example-problem pairs, Sweller & Cooper, 1985; retrieval consolidates, Roediger & Karpicke,
    2006)."""
    before = state.primed.get(kc, 0.0)
    primed = before
    if n_true:
        primed = max(before, EXPOSITION * focus * (0.6 + 0.4 * state.engagement))
    cut = (primed - before) * EXPOSED_NOW
    if practised and primed:
        cut += primed * (1.0 - EXPOSED_NOW)
        primed = 0.0
    state.primed[kc] = primed
    if cut <= 0.0:
        return
    for mid in held:
        if state.status.get(mid) == ACTIVE:
            state.strength[mid] = max(EXPOSITION_FLOOR, state.strength.get(mid, 1.0) * (1.0 - cut))


def _wins(state: StudentState, mid: str) -> float:
    """How often an active misconception's rule beats the right one: the competition with its component's mastery
    times the strength the exposition of the right idea has left it (1 untaught)."""
    return _competing(state, state.misconceptions[mid].kc) * state.strength.get(mid, 1.0)


def _attention(reading) -> dict[str, float]:
    """Per component, the attention its true statements get in the turn's order: the first two statements full
    attention, each later one half the one before (working memory saturates; Sweller, 1988)."""
    out: dict[str, float] = {}
    i = 0
    for c in reading.claims:
        if c.kc is None or c.verdict != "true" or c.question:
            continue
        i += 1
        out[c.kc] = out.get(c.kc, 0.0) + (1.0 if i <= FULL_ATTENTION else SATURATION ** (i - FULL_ATTENTION))
    return out


def _fire(state: StudentState, held: list[str], p_active: float, rng: np.random.Generator) -> str | None:
    for mid in held:
        s = state.status[mid]
        if s == ACTIVE and rng.random() < p_active * _competing(state, state.misconceptions[mid].kc):
            return mid
        if s == SUPPRESSED and rng.random() < P_FIRE_SUPPRESSED:
            return mid
    return None


def _repair(state: StudentState, act: TutorAct, kc: str, shown: str | None, rng: np.random.Generator) -> set[str]:
    """Counterexamples repair, plain negation suppresses; returns the misconceptions changed this turn.

    Only a misconception the student holds can be repaired (``active`` or ``suppressed``). With content, a
    counterexample is a case the content reader found on which the misconception's rule and the correct rule
    differ (``reading.refuted``); a negation is corrective feedback on the misconception's component."""
    changed: set[str] = set()
    reading = act.content
    # a turn that also states falsehoods is no counterexample: the contrast it draws cannot be trusted
    refuted = reading.refuted if reading is not None and not reading.false_statements() else ()
    # refuting many ideas at once splits the student's attention: each, the one it just showed too, 1/n as often
    spread = 1.0 / len(refuted) if refuted else 1.0
    for mid, s in state.status.items():
        if s == REPAIRED:
            continue
        mkc = state.misconceptions[mid].kc
        if reading is None:
            named = act.addresses_misconception == mid
            counter = (named and (act.strategy != "corrective_feedback" or act.is_question)) or (
                act.strategy in COUNTER_STRATEGIES and kc == mkc
            )
        else:
            named = counter = mid in refuted
        negation = not counter and act.strategy == "corrective_feedback" and (named or kc == mkc)
        if counter:
            # a misconception the student has put into words (just now, or earlier) can be confronted
            # ... with this misconception's own counterexample (named), not any scenario on its component
            if reading is None:  # hand-built acts keep the labelled model's two levels
                voiced = (shown == mid or mid in state.voiced) and named
                base = P_REPAIR_SHOWN if voiced else P_REPAIR_UNSHOWN
            else:
                # each earlier refutation of the same idea that did not convince makes the next one weaker: the
                # student has heard it; one that answers what it just showed keeps more (0.75 a time), one it did
                # not ask for (a test answer is no showing in the dialogue) halves
                k = state.unsolicited.get(mid, 0)
                state.unsolicited[mid] = k + 1
                if shown == mid:
                    base = P_REPAIR_SHOWN * spread * SOLICITED_DECAY ** k
                else:
                    # a pre-test answer showed the idea once: it counts as said earlier for the first refutation only
                    earlier = mid in state.said or (mid in state.voiced and k == 0)
                    base = (P_REPAIR_EARLIER if earlier else P_REPAIR_BLIND) * spread * UNSOLICITED_DECAY ** k
            prob = base * (0.6 + 0.4 * state.engagement)
            if rng.random() < prob:
                state.status[mid] = REPAIRED
                state.mastery[mkc] += REPAIR_BONUS * (1.0 - state.mastery[mkc])
                changed.add(mid)
        elif negation and s == ACTIVE:
            if rng.random() < (P_SUPPRESS_SHOWN if (shown == mid or mid in state.voiced) else P_SUPPRESS_UNSHOWN):
                state.status[mid] = SUPPRESSED
                changed.add(mid)
    return changed


def begin_posttest(state: StudentState, rng: np.random.Generator) -> None:
    """Between dialogue and post-test: forgetting ``L <- L0 + (L - L0)(1 - F)`` once (what was learned in the
    session is fragile; prior knowledge is not lost in minutes), and suppressed misconceptions relapse. One draw
    per task misconception, held or not, in the task's order: every tutor's student meets the same draws."""
    if state.forgotten:
        return
    _forget(state)
    for mid in state.misconceptions:
        u = rng.random()
        if state.status.get(mid) == SUPPRESSED and u < state.persona.relapse:
            state.status[mid] = ACTIVE


def _forget(state: StudentState) -> None:
    """Forgetting, once: ``L <- L0 + (L - L0)(1 - F)`` on what the session added."""
    state.forgotten = True
    f = state.persona.forget
    for kid, lk in state.mastery.items():
        l0 = state.initial.get(kid, lk)
        if lk > l0:
            state.mastery[kid] = l0 + (lk - l0) * (1.0 - f)


def item_mastery(state: StudentState, item: Item) -> float:
    """P(knows every KC of the item) = product of the KC masteries (unknown KC ids count as 0.5)."""
    return math.prod(state.mastery.get(k, 0.5) for k in item.kcs)


def copy_state(state: StudentState) -> StudentState:
    """An independent copy of ``state`` for playing a turn ahead (the task, persona and tables are shared: nothing
    updates them)."""
    return replace(state, mastery=dict(state.mastery), status=dict(state.status), strength=dict(state.strength),
                   unsolicited=dict(state.unsolicited), primed=dict(state.primed), moves=dict(state.moves),
                   voiced=set(state.voiced), said=set(state.said), memorised=dict(state.memorised))


class AnswerPath(NamedTuple):
    """One way of answering a test item: ``how`` as :class:`Answer`'s, the answer it gives (``None``: a wrong
    answer drawn when taken), whether it is right, and its probability (a named tuple: every test item builds
    several)."""

    how: str
    answer: str | None
    correct: bool
    p: float
    misconception: str | None = None


def answer_paths(state: StudentState, item: Item, relapse: float = 0.0) -> list[AnswerPath]:
    """Every way the student answers ``item`` from ``state``, with probabilities that sum to 1 (see the module
    docstring): recalled if memorised (0.9), else each held wrong rule of the item's components in turn fires,
    else the student knows it (item mastery, not misread) and slips or not, or guesses. A suppressed
    misconception fires only once it relapses, with probability ``relapse`` (0 once the post-test has begun:
    :func:`begin_posttest` has drawn the relapses)."""
    p = state.persona
    recall = P_RECALL if item.id in state.memorised else 0.0
    paths = [AnswerPath("memorised", item.answer, True, recall)] if recall else []
    rest = 1.0 - recall  # no earlier path answered
    for mid, wrong in item.misconception_answers.items():
        s = state.status.get(mid)
        if s not in (ACTIVE, SUPPRESSED) or state.misconceptions[mid].kc not in item.kcs:
            continue
        fire = P_FIRE_TEST * _wins(state, mid) * (1.0 if s == ACTIVE else relapse)
        if fire > 0.0:
            paths.append(AnswerPath("misconception", wrong, wrong == item.answer, rest * fire, mid))
            rest *= 1.0 - fire
    knows = item_mastery(state, item) * (1.0 - p.misread_rate)
    slip = _slip(state)
    guess = 1.0 / len(item.options or ()) if item.is_choice else p.guess
    paths += [AnswerPath("known", item.answer, True, rest * knows * (1.0 - slip)),
              AnswerPath("slip", None, False, rest * knows * slip),
              AnswerPath("guess", item.answer, True, rest * (1.0 - knows) * guess),
              AnswerPath("guess", None, False, rest * (1.0 - knows) * (1.0 - guess))]
    return paths


def expected_score(state: StudentState, items: Sequence[Item]) -> float:
    """The expected share of ``items`` answered right if the post-test began now: :func:`begin_posttest`'s
    forgetting and relapse, then :func:`answer_paths`' probabilities, in closed form (no draws, ``state``
    unchanged)."""
    if not items:
        return 0.0
    relapse = 0.0 if state.forgotten else state.persona.relapse
    if not state.forgotten:
        state = copy_state(state)
        _forget(state)
    return sum(q.p for item in items for q in answer_paths(state, item, relapse) if q.correct) / len(items)


def answer_item(state: StudentState, item: Item, rng: np.random.Generator) -> Answer:
    """Answer one test item from the current state: one uniform ``u`` picks a path of :func:`answer_paths` by its
    cumulative probability, the right paths first, so the answer is right exactly when ``u < P(right)``; two more
    uniforms make a wrong answer's value. Three draws an item whatever the answer: students of two tutors on the
    same episode seed meet the same ``u`` on each item (common random numbers), so a paired difference measures the
    tutors' effect on ``P(right)``, not the dice."""
    u, v, w = rng.random(), rng.random(), rng.random()
    paths = [q for q in answer_paths(state, item) if q.p > 0.0]
    paths.sort(key=lambda q: not q.correct)  # stable: the right paths first, each group in answer_paths' order
    chosen, acc = paths[-1], 0.0  # u at the top of [0, 1) past rounding: the last path
    for q in paths:
        acc += q.p
        if u < acc:
            chosen = q
            break
    state.last_shown = chosen.misconception
    if chosen.misconception is not None:
        state.voiced.add(chosen.misconception)
    answer = chosen.answer if chosen.answer is not None else _wrong_answer(item, _Uniforms(v, w))
    return Answer(chosen.how, answer, chosen.correct, chosen.misconception)


class _Uniforms:
    """Uniforms already drawn, served as a Generator's ``random()`` and ``integers()`` (no generator is built)."""

    __slots__ = ("left",)

    def __init__(self, *uniforms: float) -> None:
        self.left = list(uniforms)

    def random(self) -> float:
        return self.left.pop(0)

    def integers(self, low: int, high: int | None = None) -> int:
        low, high = (0, low) if high is None else (low, high)
        return low + int(self.random() * (high - low))


_FRACTION = re.compile(r"^(-?\d+)\s*/\s*(\d+)$")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def _wrong_answer(item: Item, rng: np.random.Generator | _Uniforms) -> str:
    """A plausible wrong answer: another option, a known wrong value, or the right value nudged."""
    if item.is_choice:
        letters = [chr(ord("A") + i) for i in range(len(item.options or ())) if chr(ord("A") + i) != item.answer]
        return letters[int(rng.integers(len(letters)))]
    known = [a for a in item.misconception_answers.values() if a != item.answer]
    if known and rng.random() < 0.5:
        return known[int(rng.integers(len(known)))]
    return nudge_answer(item.answer, rng)


def nudge_answer(answer: str, rng: np.random.Generator | _Uniforms) -> str:
    """A near-miss of a free answer: ``3/4 -> 4/4``, ``12 -> 13``, ``2.5 -> 3.5``; text becomes ``not <text>``."""
    ans = answer.strip()
    delta = int(rng.integers(1, 3))
    if m := _FRACTION.match(ans):
        return f"{int(m.group(1)) + delta}/{m.group(2)}"
    if _NUMBER.match(ans):
        if "." in ans:
            return f"{float(ans) + delta:g}"
        return str(int(ans) + delta)
    return "not " + ans
