"""Serve speed: episodes per second through ``tutorzoo serve`` (OpenEnv WebSocket sessions) vs in process.

The same specs, played by the socratic tutor:

1. **local**: :func:`tutorzoo.eval.rollout.run_episode`, one episode after the other;
2. **served**: a ``build_app`` server on loopback (in this process, one thread for every session's env), with
   ``--sessions`` clients each playing its share of the specs through :func:`tutorzoo.eval.serve_client.play_remote`.

Both must give the same learning gain and reward per spec (checked). The served/local ratio is the price of the
wire (JSON, WebSocket, the event loop) per tutor turn; sessions add no parallelism to the pure-Python engine.

    python benchmarks/serve_speed.py [--episodes 16] [--sessions 8] [--max-turns 4]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import threading
import time

import uvicorn

from tutorzoo.agents.student import SimulatedStudent
from tutorzoo.agents.tutor import make_tutor
from tutorzoo.envs.config import EpisodeSpec
from tutorzoo.eval.rollout import run_episode
from tutorzoo.eval.serve import Ledger, SpecSource, build_app
from tutorzoo.eval.serve_client import TutorZooClient, play_remote


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=16)
    p.add_argument("--sessions", type=int, default=8)
    p.add_argument("--max-turns", type=int, default=4)
    args = p.parse_args()
    protocol = {"max_turns": args.max_turns}
    specs = [EpisodeSpec(task_set="math", persona="all_round_partly_wrong", seed=s, protocol=protocol)
             for s in range(args.episodes)]
    for spec in specs:  # warm the caches (tasks, personas, the content reader's) so neither timed run pays for them
        run_episode(spec, make_tutor("socratic"), SimulatedStudent(spec.persona))
    started = time.perf_counter()
    local = [run_episode(s, make_tutor("socratic"), SimulatedStudent(s.persona), "socratic") for s in specs]
    local_s = time.perf_counter() - started

    app = build_app(SpecSource(specs), Ledger(), max_sessions=args.sessions, idle_timeout_s=None)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"

    async def client(share: list[int]) -> list:
        async with TutorZooClient(url) as c:
            return [(i, await play_remote(c, make_tutor("socratic"), index=i)) for i in share]

    async def everyone() -> list:
        shares = [list(range(k, len(specs), args.sessions)) for k in range(args.sessions)]
        return [pair for part in await asyncio.gather(*(client(s) for s in shares if s)) for pair in part]

    started = time.perf_counter()
    served = dict(asyncio.run(everyone()))
    served_s = time.perf_counter() - started
    server.should_exit = True
    thread.join(10)
    same = all(served[i].learning_gain == r["learning_gain"] and served[i].reward == r["reward"]
               for i, r in enumerate(local))
    turns = sum(r["n_tutor_turns"] for r in local)
    print(f"{len(specs)} episodes, {turns} tutor turns, {args.sessions} sessions, max_turns {args.max_turns}")
    print(f"local : {local_s:.2f} s  {len(specs) / local_s:.2f} episodes/s")
    print(f"served: {served_s:.2f} s  {len(specs) / served_s:.2f} episodes/s  ({served_s / local_s:.2f}x local time)")
    print(f"same learning gain and reward per spec: {same}")


if __name__ == "__main__":
    main()
