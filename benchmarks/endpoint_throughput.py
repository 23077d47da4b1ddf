"""Endpoint throughput: rollouts against a served model, measured against the latency bound.

A loopback OpenAI-compatible server (``tests/chat_server.py``, in a child process) answers every request after a
fixed ``--latency`` with a scripted reply (a test answer for a test item, a sentence otherwise). In one process, with
``--episodes`` episodes, ``--in-flight`` of them at once (``--batch-size`` and ``max_concurrency``):

1. **tutor only**: the tutor on the endpoint, simulated students;
2. **tutor + student**: the tutor and ``--student llm:openai:…`` on the endpoint.

Each has a **fixed cost**: the same command with its model seats answered in-process at zero latency with the
server's very replies (:class:`LocalBackend`), so the env does the same work on the same text. (The simulated
student with the rule tutor ``socratic``, also printed, is no such reference: socratic's own utterances cost
the env more to read than the scripted ones.) For each it prints the requests, the wall time beyond the fixed
cost, the bound ((requests per episode) x latency, times the waves of ``--in-flight`` episodes the run needs),
their ratio and the most requests the server had in flight at once. Goal: ratio <= 1.25 at 32 and 64 episodes
in flight.

The seats' backends first play one turn of ``--in-flight`` episodes, so that their connections are open when the
clock starts, as in any run past its first round. Then the fixed-cost run and the endpoint run alternate
``--repeat`` times, and the fastest of each are reported (other processes only ever add time), with each pair's
ratio and the machine's load average. The time beyond the fixed cost is the client's own work per request (the
HTTP stack's, about a millisecond of CPU, on the critical path of every lockstep round) plus whatever the
machine's other processes take from it: a single pair measured while other processes load the cores varies by
a third of the bound and more.

``--hf`` plays the tiny offline model as tutor (``hf:``) and student (``llm:hf:``) batched (``--in-flight``
episodes in lockstep) and one episode at a time, each from empty prefix caches (the backends' stores of prompt
keys and values), and prints the speed-up (goal >= 4x) and the share of prompt tokens the caches served; both modes
run on ``--threads`` torch CPU threads (by default torch's own count, the machine's cores, as the backend has it).
Every run is also checked against sequential play of its first ``--check`` episodes: the records must be identical.

    python benchmarks/endpoint_throughput.py [--episodes 32] [--in-flight 32] [--latency 0.25] [--max-turns 4]
                                             [--hf [--threads N] [--max-new-tokens 24]] [--check 4] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from chat_server import ChatServer, Reply  # noqa: E402

from tutorzoo.agents.backends.base import GenerationConfig, GenerationResult  # noqa: E402
from tutorzoo.agents.student import SimulatedStudent  # noqa: E402
from tutorzoo.agents.student.llm import LLMStudent, make_student_factory  # noqa: E402
from tutorzoo.agents.tutor import make_tutor  # noqa: E402
from tutorzoo.agents.tutor.llm import LLMTutor  # noqa: E402
from tutorzoo.envs.config import EpisodeSpec  # noqa: E402
from tutorzoo.envs.engine import play  # noqa: E402
from tutorzoo.envs.records import json_form

PERSONAS = ("all_round_partly_wrong", "weak_knowledge_asks_for_hint", "low_motivation_correct_and_extends", "anxious")
TASK_SETS = ("math", "stem", "mcq")
TUTOR_LINES = ("What do you think the first step is?", "Can you explain how you got that?",
               "Let us check it together: what does the question ask for?", "Good. Why does that work?")
STUDENT_LINES = ("I am not sure, maybe we add them?", "I think I see it now.", "Can you give me a hint?")


def make_specs(n: int, max_turns: int) -> list[EpisodeSpec]:
    return [EpisodeSpec(task_set=TASK_SETS[i % len(TASK_SETS)], persona=PERSONAS[i % len(PERSONAS)], seed=i,
                        protocol={"max_turns": max_turns}) for i in range(n)]


def reply_text(model: str, messages: list[dict]) -> str:
    """The scripted reply to a request: it depends on the request only (never on arrival order), and reads the
    same whether or not same-role messages were merged on the way."""
    words = sum(len(str(m["content"]).split()) for m in messages)
    if model == "student":
        return "The answer is (A)." if "test question" in str(messages[-1]["content"]) else \
            STUDENT_LINES[words % len(STUDENT_LINES)]
    return TUTOR_LINES[words % len(TUTOR_LINES)]


def responder(latency: float) -> Callable[[dict, int], Reply]:
    """The server's answers: :func:`reply_text` after ``latency`` seconds."""

    def answer(body: dict, index: int) -> Reply:
        return Reply(text=reply_text(str(body.get("model")), body["messages"]), delay=latency)

    return answer


class LocalBackend:
    """The server's replies from inside the process at zero latency: the fixed-cost run's model seats."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.name = f"local:{model}"

    def generate(self, conversations: list[list[dict]], config: GenerationConfig) -> list[GenerationResult]:
        return [GenerationResult(text=reply_text(self.model, c)) for c in conversations]

    def generate_many(self, requests: list[tuple[list[dict], GenerationConfig]]) -> list[GenerationResult]:
        return [GenerationResult(text=reply_text(self.model, c)) for c, _ in requests]


class RemoteServer:
    """:class:`ChatServer` in a child process, so its request handling does not share this process's GIL (a
    served model runs elsewhere too); ``request_count`` and ``max_in_flight`` are read from the child."""

    def __init__(self, latency: float) -> None:
        self.latency = latency

    def __enter__(self) -> RemoteServer:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._process = ctx.Process(target=_serve, args=(child, self.latency), daemon=True)
        self._process.start()
        self.url = self._conn.recv()
        return self

    def _ask(self, command: str) -> int:
        self._conn.send(command)
        return self._conn.recv()

    @property
    def request_count(self) -> int:
        return self._ask("requests")

    @property
    def max_in_flight(self) -> int:
        return self._ask("max_in_flight")

    @max_in_flight.setter
    def max_in_flight(self, value: int) -> None:
        self._ask("reset_max_in_flight")

    def __exit__(self, *exc: object) -> None:
        self._conn.send("stop")
        self._process.join(timeout=10)


def _serve(conn: Any, latency: float) -> None:
    """The child process: serve until told to stop, answering the parent's questions about the counts."""
    with ChatServer(responder=responder(latency)) as server:
        conn.send(server.url)
        while True:
            command = conn.recv()
            if command == "stop":
                return
            if command == "requests":
                conn.send(server.request_count)
            elif command == "max_in_flight":
                conn.send(server.max_in_flight)
            elif command == "reset_max_in_flight":
                server.max_in_flight = 0
                conn.send(0)


def canonical(records: list[dict]) -> list[str]:
    return [json.dumps(json_form(r), sort_keys=True, default=str) for r in records]


def timed(run: Callable[[], list[dict]]) -> tuple[float, list[dict]]:
    begin = time.perf_counter()
    records = run()
    return time.perf_counter() - begin, records


def endpoint(episodes: int, in_flight: int, latency: float, max_turns: int, check: int,
             repeat: int = 3) -> dict[str, Any]:
    """The fixed-cost run, then tutor-only and tutor + student on the loopback endpoint, each ``repeat`` times."""
    specs = make_specs(episodes, max_turns)
    out: dict[str, Any] = {}
    with RemoteServer(latency) as server:
        options = {"base_url": server.url, "max_concurrency": in_flight, "max_retries": 0, "timeout": 60.0}

        def tutor() -> Any:
            return make_tutor("openai:tutor", **options)

        def llm_student() -> Callable[[str], Any]:
            return make_student_factory("llm:openai:student", **options)

        student_config = GenerationConfig(max_new_tokens=260)  # make_student_factory's

        def local_student(persona: str) -> LLMStudent:
            return LLMStudent(LocalBackend("student"), persona=persona, config=student_config)

        warm = play(specs[:2], tutor(), llm_student(), batch_size=2)  # imports, clients, first-call costs
        assert all(not r["failures"] for r in warm), warm[0]["failures"]
        out["rule_s"], _ = timed(lambda: play(specs, make_tutor("socratic"), SimulatedStudent, batch_size=in_flight))
        runs = (("tutor only", lambda: SimulatedStudent, SimulatedStudent),
                ("tutor + student", llm_student, local_student))
        warm_specs = make_specs(min(in_flight, episodes), 1)
        for name, make_student, make_local in runs:
            local = LLMTutor(LocalBackend("tutor"), GenerationConfig())
            seat, students = tutor(), make_student()  # built before the clock starts, as the fixed run's are
            # a run keeps its backends, and their connections, from the first round to the last: one round of
            # every episode in flight opens the connections before the clock starts
            play(warm_specs, seat, students, batch_size=in_flight, tutor_name="endpoint")
            fixed_runs, walls, cpus, requests, max_in_flight = [], [], [], 0, 0
            for _ in range(repeat):  # interleaved, so that a neighbour's burst of load hits both alike
                fixed_runs.append(timed(lambda: play(specs, local, make_local, batch_size=in_flight))[0])  # noqa: B023
                server.max_in_flight = 0
                before, cpu = server.request_count, time.process_time()
                wall, records = timed(lambda: play(specs, seat, students, batch_size=in_flight,  # noqa: B023
                                                   tutor_name="endpoint"))
                cpus.append(time.process_time() - cpu)
                walls.append(wall)
                requests, max_in_flight = server.request_count - before, max(max_in_flight, server.max_in_flight)
            failures = sum(len(r["failures"]) for r in records)
            bound = requests / episodes * latency * math.ceil(episodes / in_flight)
            fixed, wall = min(fixed_runs), min(walls)  # other processes only ever add time
            beyond = wall - fixed
            pairs = zip(walls, fixed_runs, strict=True)
            ratios = sorted((w - f) / bound for w, f in pairs) if bound else [float("nan")]
            row = {"requests": requests, "wall_s": wall, "fixed_s": fixed, "beyond_s": beyond, "bound_s": bound,
                   "ratio": beyond / bound if bound else float("nan"), "ratios": ratios,
                   "cpu_s": min(cpus), "max_in_flight": max_in_flight, "failures": failures}
            if check:
                sequential = play(specs[:check], tutor(), make_student(), batch_size=1, tutor_name="endpoint")
                row["identical"] = canonical(sequential) == canonical(records[:check])
            out[name] = row
    return out


def hf(episodes: int, in_flight: int, max_turns: int, check: int, max_new_tokens: int,
       threads: int | None = None) -> dict[str, Any]:
    """The tiny model as tutor and student: batched in lockstep vs one episode at a time."""
    from tutorzoo.train.tiny_model import build_tiny_model

    specs = make_specs(episodes, max_turns)
    with tempfile.TemporaryDirectory() as tmp:
        model = str(build_tiny_model(tmp, seed=0))
        options: dict[str, Any] = {"batch_size": in_flight, "max_new_tokens": max_new_tokens}
        if threads is not None:  # else torch's own default, as the backend has it
            options["threads"] = threads
        tutor = make_tutor(f"hf:{model}", **options)
        make_student = make_student_factory(f"llm:hf:{model}", **options)
        # one backend when both seats ask for the same model with the same options (make_backend shares it)
        backends = tuple(dict.fromkeys((tutor.backend, make_student(PERSONAS[0]).backend)))
        play(specs[:2], tutor, make_student, batch_size=2)  # first-call costs

        def cold(batch_size: int) -> Callable[[], list[dict]]:
            def run() -> list[dict]:
                return play(specs, tutor, make_student, batch_size=batch_size)

            for backend in backends:  # each run starts from empty prefix caches, as a run of new episodes does
                backend.prefix_cache.clear()
            return run

        t_batched, batched = timed(cold(in_flight))
        reused = [backend.prefix_cache.hits / max(1, backend.prefix_cache.hits + backend.prefix_cache.misses)
                  for backend in backends]
        t_sequential, sequential = timed(cold(1))
    return {"batched_s": t_batched, "sequential_s": t_sequential, "speedup": t_sequential / t_batched,
            "identical": canonical(batched) == canonical(sequential),
            "failures": sum(len(r["failures"]) for r in batched), "reused": reused, "shared": len(backends) == 1}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--in-flight", type=int, default=32, help="episodes in lockstep and requests in flight")
    parser.add_argument("--latency", type=float, default=0.25, help="seconds the server waits before each reply")
    parser.add_argument("--max-turns", type=int, default=4)
    parser.add_argument("--check", type=int, default=4, help="episodes replayed one at a time to compare records")
    parser.add_argument("--hf", action="store_true", help="the tiny HF model instead of the endpoint")
    parser.add_argument("--max-new-tokens", type=int, default=24, help="reply cap of the HF runs")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads of the HF runs (both modes); default: torch's (the machine's cores)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="endpoint runs (and fixed-cost runs) per seat; the fastest of each are reported")
    args = parser.parse_args(argv)
    for name in ("episodes", "in_flight", "max_turns", "max_new_tokens", "repeat", "threads"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.latency < 0 or args.check < 0:
        parser.error("--latency and --check must be >= 0")
    if args.hf:
        r = hf(args.episodes, args.in_flight, args.max_turns, args.check, args.max_new_tokens, args.threads)
        reused = (f"{r['reused'][0]:.0%} (one backend for both seats)" if r["shared"] else
                  f"tutor {r['reused'][0]:.0%}, student {r['reused'][1]:.0%}")
        import torch

        count = torch.get_num_threads()
        threads = f"{count} thread" + "s" * (count > 1) + (" (torch's default)" if args.threads is None else "")
        print(f"hf tiny, tutor + llm student, {args.episodes} episodes, {threads}: batched x{args.in_flight} "
              f"{r['batched_s']:.2f}s, one at a time {r['sequential_s']:.2f}s, speed-up {r['speedup']:.2f}x "
              f"(goal >= 4x); identical records: {r['identical']}; failures: {r['failures']}; prompt tokens from "
              f"the prefix cache: {reused}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        return r
    r = endpoint(args.episodes, args.in_flight, args.latency, args.max_turns, args.check, args.repeat)
    print(f"{args.episodes} episodes, {args.in_flight} in flight, latency {args.latency:g}s, fastest of "
          f"{args.repeat} runs; simulated student and socratic: {r['rule_s']:.2f}s; load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for name in ("tutor only", "tutor + student"):
        row = r[name]
        same = f", first {args.check} identical to sequential: {row['identical']}" if args.check else ""
        spread = "/".join(f"{x:.2f}" for x in row["ratios"])
        print(f"  {name:16s} {row['requests']:5d} requests  {row['wall_s']:6.2f}s ({row['cpu_s']:.2f}s CPU), fixed "
              f"cost {row['fixed_s']:.2f}s, {row['beyond_s']:6.2f}s beyond it  "
              f"bound {row['bound_s']:5.2f}s  ratio {row['ratio']:.2f}x (pairs {spread}; goal <= 1.25)  "
              f"max in flight {row['max_in_flight']}  failures {row['failures']}{same}")
    return r


if __name__ == "__main__":
    main()
