"""The one owner of the sidecar's heavy imports: the MCP SDK, numpy, keyring.

They load lazily (`initialize` answers before any of them), and each is imported by exactly one
`Load`, in this module's one worker thread, one load after the other. Everything else waits for
the load instead of importing on its own thread:

* on the event loop, `await LOAD.ready()`: the first caller starts the load, every caller
  awaits the same one, and a caller that is cancelled does not cancel it;
* on another thread (a worker of `asyncio.to_thread`), `LOAD.wait(timeout)`;
* where waiting is not wanted, `LOAD.loaded` says whether the modules may be touched now;
* our own modules that import a heavy package at their top, when the event loop must go on
  meanwhile (the gateway's front), are imported there too: `await import_modules(...)`.

Once a load is done its modules are complete in `sys.modules`, and any thread may import them.

Why: Python's import locks are per module. A package with import cycles (the SDK's `mcp` imports
`mcp.client`, which imports `mcp` again) that one thread imports from the top while another
imports one of its submodules from below, takes the locks in opposite orders. importlib breaks
that deadlock by handing one thread a partially initialised module, and its `from mcp... import
X` then fails with an ImportError: a request answered `operation_failed` because a warm-up
import ran beside it. One thread for every heavy import, and nobody else importing them while
it runs, rules that out. Light modules (the standard library, our own modules that import
nothing heavy at their top) may be imported anywhere.

The code cache of `startup.attrs_code_cache` is only active before the first load can start
(it wraps pygls' import, before the event loop runs), so no load ever runs beside it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

Importer = Callable[[], None]


class Load:
    """One heavy import, run once per process in the owner's worker thread."""

    def __init__(self, what: str, importer: Callable[[], Importer]) -> None:
        self.what = what
        self._importer = importer
        """Returns the function the worker runs; called on the thread that starts the load, so
        that our own small module holding that function is imported there, not in the worker."""
        self._future: concurrent.futures.Future[None] | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """The load finished without an error: its modules are complete in `sys.modules`."""
        future = self._future
        return future is not None and future.done() and not future.cancelled() and future.exception() is None

    @property
    def started(self) -> bool:
        return self._future is not None

    def start(self) -> concurrent.futures.Future[None]:
        """Queue the load (once) and return its future."""
        with self._lock:
            if self._future is None:
                self._future = _worker.submit(self._importer(), self.what)
            return self._future

    async def ready(self) -> None:
        """Start the load if needed and wait for it; raises what the import raised."""
        future = self.start()
        if not future.done():
            # shield: one caller's cancellation must not cancel what every caller waits for.
            await asyncio.shield(asyncio.wrap_future(future))
        future.result()

    def wait(self, timeout: float | None = None) -> None:
        """`ready` for code off the event loop (a worker thread, a synchronous start-up step)."""
        if _worker.is_current():
            raise RuntimeError(f"{self.what} cannot be waited for from the import thread itself")
        self.start().result(timeout)


async def import_modules(*names: str) -> None:
    """Import our own modules that import a heavy package at their top (the gateway's SDK server
    face), in the import thread after the loads already started: for an entry point that must keep
    answering on the event loop meanwhile, and must not import them there."""

    def load() -> None:
        import importlib

        for name in names:
            importlib.import_module(name)

    await asyncio.shield(asyncio.wrap_future(_worker.submit(load, ", ".join(names))))


class _Worker:
    """One daemon thread that runs the loads in the order they were started.

    A daemon: a process that ends while an import runs (a short CLI command) does not wait for it.
    """

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[Importer, str, concurrent.futures.Future[None]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, importer: Importer, what: str) -> concurrent.futures.Future[None]:
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._queue.put((importer, what, future))
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="mcp-sidecar-imports", daemon=True)
                self._thread.start()
        return future

    def is_current(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def _run(self) -> None:
        while True:
            importer, what, future = self._queue.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                importer()
            except BaseException as exc:
                # Only the type: nothing else of an import failure needs to reach the log.
                log.error("importing %s failed: %s", what, type(exc).__name__)
                future.set_exception(exc)
            else:
                future.set_result(None)


_worker = _Worker()


def _sdk() -> Importer:
    from mcp_sidecar.connections.sdk_import import import_sdk

    return import_sdk


def _numpy() -> Importer:
    def load() -> None:
        import numpy  # noqa: F401

    return load


def _keyring() -> Importer:
    def load() -> None:
        """keyring and the backends it would import when it first chooses one (which needs D-Bus,
        so it runs later, in the credential store's own call, not here)."""
        import importlib
        from importlib.metadata import entry_points

        import keyring
        import keyring.backends.chainer
        import keyring.backends.fail
        import keyring.errors  # noqa: F401

        for entry in entry_points(group="keyring.backends"):
            try:
                importlib.import_module(entry.module)
            except Exception as exc:  # a backend that cannot load here is one keyring skips too
                log.debug("keyring backend %s not importable: %s", entry.name, type(exc).__name__)

    return load


def _encoder() -> Importer:
    def load() -> None:
        """onnxruntime and tokenizers, for the optional encoder (`catalog/encoder.py`); a missing
        package fails this load, and the encoder stays off."""
        import onnxruntime  # type: ignore[import-untyped]  # noqa: F401
        import tokenizers  # noqa: F401

    return load


SDK = Load("the MCP SDK", _sdk)
"""`mcp`, `mcp_types` and what they import (pydantic, anyio, httpx2); `connections/sdk_import.py`."""
NUMPY = Load("numpy", _numpy)
"""What ranking and the embedding model compute with (`catalog/`); the model's files are read after it."""
KEYRING = Load("keyring", _keyring)
"""The OS keyring's package and its backends (`auth/store.py`)."""
ENCODER = Load("onnxruntime", _encoder)
"""Only started when the `encoder` extra is installed (`catalog/encoder.installed`)."""
