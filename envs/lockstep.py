"""Lockstep model calls: the episodes' seats in worker threads, their batched backend's requests pooled per round.

When the engine (:mod:`tutorzoo.envs.engine`) plays several episodes whose seats call a model (an LLM student,
a model content reader), it runs each episode's turns in its own worker thread. A backend that answers best in
one batch (a local Hugging Face model) hands its requests to the thread's :class:`Gate` instead of generating
at once; when every worker is either blocked on the gate or done, the engine's thread runs all pooled requests
together, one batch per backend, and wakes the workers. An endpoint backend needs no gate: its requests go out
from the workers directly, up to its own ``max_concurrency`` in flight.

A backend joins with :func:`current_gate`::

    gate = current_gate()
    if gate is not None:
        return gate.submit(self, requests)   # the engine calls self.run_pooled(all requests) later
    return self.run_pooled(requests)

Each episode's work stays in its own thread, in its own order, so the pooled run plays the same episodes as one
at a time, provided the backend's reply to a request does not depend on the other requests of its batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
_local = threading.local()


class PooledBackend(Protocol):
    """A backend that answers a list of requests at once (the gate calls it from the engine's thread)."""

    def run_pooled(self, requests: Sequence[Any]) -> list[Any]: ...


def current_gate() -> Gate | None:
    """The gate of the calling worker thread, None outside a lockstep round."""
    return getattr(_local, "gate", None)


class Gate:
    """Pools the requests of the workers of one round; see the module docstring."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._running = 0  # workers started and not finished
        self._blocked = 0  # of those, waiting on a batch not run yet
        self._pending: list[tuple[PooledBackend, Sequence[Any], list]] = []
        self.rounds = 0  # pooled runs, for benchmarks

    def submit(self, backend: PooledBackend, requests: Sequence[Any]) -> list[Any]:
        """Block until the engine has run ``requests`` with the other workers' (called from a worker)."""
        slot: list = []
        with self._cond:
            self._pending.append((backend, list(requests), slot))
            self._blocked += 1
            self._cond.notify_all()
            while not slot:
                self._cond.wait()
        outcome = slot[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def _flush(self) -> None:
        """Run every pending request, one ``run_pooled`` call per backend, in submission order."""
        with self._cond:
            pending, self._pending = self._pending, []
        groups: dict[int, list[tuple[PooledBackend, Sequence[Any], list]]] = {}
        for entry in pending:
            groups.setdefault(id(entry[0]), []).append(entry)
        outcomes: list[tuple[list, Any]] = []
        for entries in groups.values():
            flat = [r for _, requests, _ in entries for r in requests]
            try:
                results: Any = entries[0][0].run_pooled(flat)
                if len(results) != len(flat):
                    raise RuntimeError(f"run_pooled returned {len(results)} results for {len(flat)} requests")
            except Exception as exc:  # every worker of the batch sees the backend's error as its own call's
                outcomes += [(slot, exc) for _, _, slot in entries]
                continue
            start = 0
            for _, requests, slot in entries:
                outcomes.append((slot, list(results[start:start + len(requests)])))
                start += len(requests)
        with self._cond:
            self.rounds += 1
            self._blocked -= len(outcomes)  # counted here, not on waking: a woken worker is running again
            for slot, outcome in outcomes:
                slot.append(outcome)
            self._cond.notify_all()

    def run(self, jobs: Sequence[Callable[[], T]], pool: ThreadPoolExecutor) -> list[Future[T]]:
        """Run ``jobs`` in ``pool``'s workers, pooling their gated requests until all are done."""

        def work(job: Callable[[], T]) -> T:
            _local.gate = self
            try:
                return job()
            finally:
                _local.gate = None
                with self._cond:
                    self._running -= 1
                    self._cond.notify_all()

        with self._cond:
            self._running += len(jobs)
        futures = [pool.submit(work, job) for job in jobs]
        while True:
            with self._cond:
                while self._running and (self._blocked < self._running or not self._pending):
                    self._cond.wait()
                if not self._running:
                    return futures
            self._flush()


__all__ = ["Gate", "PooledBackend", "current_gate"]
