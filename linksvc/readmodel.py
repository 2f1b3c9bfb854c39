"""Read models: what the hot paths read, held in memory by each worker, exact.

A :class:`ReadModel` keeps entries read from the store until the store's generation of its model moves
(:meth:`linksvc.store.Store.generation`: one load from memory shared by every process on the store). A write
that changes what a model holds advances the generation before it is answered, so the next request on any
worker reads afresh: read-your-writes holds across workers. Entries are only what was found (a missing key is
read each time, so a new link or token needs no invalidation), and at most ``max_entries`` are held (the
oldest goes first).

The generation is read before the store and compared again before an entry is kept: an entry read while a
change committed is either dropped at once or kept under the old generation and dropped at the next request.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar
from weakref import WeakKeyDictionary

from linksvc.store import Store

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ReadModel(Generic[K, V]):
    def __init__(self, store: Store, model: str, max_entries: int) -> None:
        self._store = store
        self._model = model
        self._max = max_entries
        self._entries: dict[K, V] = {}
        self._generation = -1
        # Taken only to drop or add entries: the catalog is read on the event loop and on the writer's thread.
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    async def get(self, key: K, load: Callable[[], Awaitable[V | None]]) -> V | None:
        """The entry of ``key``: held, or ``load()``-ed and held when found."""
        generation = self._follow()
        entries = self._entries
        if key in entries and self._generation == generation:
            self.hits += 1
            return entries[key]
        self.misses += 1
        value = await load()
        if value is not None:
            with self._lock:  # kept only if no change committed meanwhile (on any thread's watch)
                if self._store.generation(self._model) == generation == self._generation:
                    if len(entries) >= self._max:
                        del entries[next(iter(entries))]
                    entries[key] = value
        return value

    def peek(self, key: K) -> V | None:
        """The entry of ``key`` if held now (after the generation check), else None: never reads the store."""
        generation = self._generation
        if self._follow() != generation:
            return None
        return self._entries.get(key)

    def keep(self, key: K, value: V, generation: int) -> None:
        """Holds ``value`` (worked out from what the store held at ``generation``), unless the generation moved
        since: for entries made without awaiting (derived from another model's entries)."""
        with self._lock:
            if self._store.generation(self._model) == generation == self._generation:
                entries = self._entries
                if len(entries) >= self._max:
                    del entries[next(iter(entries))]
                entries[key] = value

    def _follow(self) -> int:
        """The store's generation of the model now; the entries are dropped if it moved past theirs."""
        generation = self._store.generation(self._model)
        if generation != self._generation:
            with self._lock:
                if generation > self._generation:
                    self._entries.clear()
                    self._generation = generation
        return generation

    async def fill(self, load: Callable[[], Awaitable[list[tuple[K, V]]]]) -> int:
        """Holds what ``load()`` reads (up to the bound), unless the generation moved meanwhile; returns how
        many entries are held."""
        generation = self._store.generation(self._model)
        found = await load()
        with self._lock:
            if self._store.generation(self._model) != generation or generation < self._generation:
                return len(self._entries)  # read while a change committed: the requests fill the model instead
            if generation != self._generation:
                self._entries.clear()
                self._generation = generation
            for key, value in found[:self._max - len(self._entries)]:
                self._entries.setdefault(key, value)
            return len(self._entries)

    def items(self) -> list[tuple[K, V]]:
        """The entries held now (after the generation check), as a list: never reads the store."""
        self._follow()
        with self._lock:
            return list(self._entries.items())

    def __len__(self) -> int:
        return len(self._entries)


_MODELS: WeakKeyDictionary[Store, dict[str, ReadModel[Any, Any]]] = WeakKeyDictionary()


def read_model(store: Store, model: str, max_entries: int) -> ReadModel[Any, Any]:
    """The process's read model of ``model`` on ``store`` (made at the first use)."""
    models = _MODELS.get(store)
    if models is None:
        models = _MODELS[store] = {}
    found = models.get(model)
    if found is None:
        found = models[model] = ReadModel(store, model, max_entries)
    return found
