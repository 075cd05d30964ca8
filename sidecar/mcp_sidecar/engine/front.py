"""A front: relays one client's messages to the per-user engine and back, and survives the engine's death.

Two threads, no event loop (asyncio alone would double a front's memory): one reads the client
and sends each complete frame to the engine; the other reads the engine and writes each frame to
the client. The front reads what passes only to know the requests in flight and to keep the
client's `initialize` and `initialized`. When the engine goes (even `kill -9`), every request in
flight is answered `engine_restarted` (never replayed), the front attaches again (starting a new
engine), sends its hello with `resume` and replays the client's opening under an id of its own,
whose answer the client never sees; what the client sends meanwhile waits for the new engine.

The hello is one JSON line the front sends first: `{"v": 1, "kind", "front", "resume", "cwd",
"argv", "env"}`, `env` being the front's own environment (at most MAX_ENV_BYTES of it): the engine
resolves this client's `${VAR}`, runs its secret commands and starts its stdio servers in it. It
crosses only the private, peer-checked socket, to the same user's engine. The engine answers one
line, `{"v": 1, "engine": {...}}` or `{"v": 1, "refused": "why"}`, then the client's stream begins.
Standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

from mcp_sidecar.engine.framing import Frame, LineFrames, LspFrames, answers_in, cancelled_in, requests_in
from mcp_sidecar.engine.runtime import EngineUnavailable, PeerRefused, check_peer


class _Say:
    """The front's few messages, to stderr (no `logging`: a front imports only what it must)."""

    @staticmethod
    def _say(level: str, message: str, *args: object) -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"mcp-sidecar front: {level}: {message % args if args else message}\n")
            sys.stderr.flush()

    def error(self, message: str, *args: object) -> None:
        self._say("error", message, *args)

    def warning(self, message: str, *args: object) -> None:
        self._say("warning", message, *args)


log = _Say()

HELLO_VERSION = 1
MAX_ENV_BYTES = 256 * 1024
"""The front's environment in its hello, at most (as JSON): a shell's is a few KiB. Past it the largest
variables are left out, by name in a warning, and a reference to one fails as an unset variable."""
MAX_HELLO_BYTES = MAX_ENV_BYTES + 256 * 1024
"""The environment, the command line and the rest of the hello."""
RESUME_ID_PREFIX = "mcp-sidecar-resume-"
FRONT_LOG = "$/mcp-sidecar/frontLog"
"""The engine's notice carrying a piece of this client's log (`{"text"}`): the front writes it to its
own stderr, where the client's process would have written it, and never passes it on."""
OPENINGS = {"initialize"}
OPENED = {"initialized", "notifications/initialized"}
CLOSINGS = {"exit"}
"""LSP's last notification: after it the engine closes the stream, and the front ends."""
MAX_ATTACH_ATTEMPTS = 5
MAX_RESTARTS = 20
"""Engines replaced during one front's life before it gives up (a crash loop, not a crash)."""
HELLO_TIMEOUT_SECONDS = 30.0
ATTACH_PAUSE_SECONDS = 0.05


class UsageError(Exception):
    """The engine read the front's command line and found it wrong: printed as the command would, then exit."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class HelloLost(EngineUnavailable):
    """The connection ended during the hello: an engine that was dying as the front attached; try again."""


def engine_restarted(msg_id: Any, method: str) -> dict[str, Any]:
    """The answer to a request the engine took with it: a diagnostic, as every failure is."""
    from mcp_sidecar.protocol.errors import REQUEST_FAILED, diagnostic  # only when the engine died

    diag = diagnostic("engine_restarted", method, "The sidecar's engine stopped while this request ran.")
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "error": {"code": REQUEST_FAILED, "message": diag.message, "data": diag.to_json()},
    }


class Hello:
    def __init__(
        self,
        kind: str,
        argv: list[str],
        cwd: str | None = None,
        front: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.kind = kind
        """`lsp`, `mcp` or `cli`."""
        self.argv = argv
        self.cwd = cwd if cwd is not None else os.getcwd()
        self.front = front if front is not None else os.urandom(8).hex()
        self.env = env if env is not None else hello_environment(os.environ)
        """The client's environment, which the engine resolves its `${VAR}` in and starts its servers with."""

    def line(self, resume: bool) -> bytes:
        body = {
            "v": HELLO_VERSION,
            "kind": self.kind,
            "front": self.front,
            "resume": self.front if resume else None,
            "cwd": self.cwd,
            "argv": self.argv,
            "env": self.env,
        }
        return json.dumps(body, separators=(",", ":")).encode() + b"\n"


def hello_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` as the hello carries it: all of it up to MAX_ENV_BYTES, else without its largest variables."""
    env = dict(environ)
    size = len(json.dumps(env))
    if size <= MAX_ENV_BYTES:
        return env
    left_out = []
    for name in sorted(env, key=lambda key: len(json.dumps([key, env[key]])), reverse=True):
        size -= len(json.dumps([name, env.pop(name)]))
        left_out.append(name)
        if size <= MAX_ENV_BYTES:
            break
    log.warning(
        "the environment is over %d KiB; left out of the engine's view: %s", MAX_ENV_BYTES // 1024, ", ".join(left_out)
    )
    return env


Connect = Callable[[], socket.socket]
"""A socket to the engine, starting one when none runs (`runtime.connect_or_start` with its start)."""


class Relay:
    def __init__(self, hello: Hello, connect: Connect, client_in: BinaryIO, client_out: BinaryIO) -> None:
        self._hello = hello
        self._connect = connect
        self._in = client_in
        self._out = client_out
        framing = LspFrames if hello.kind == "lsp" else LineFrames
        self._from_client = framing()
        self._frame = framing.frame
        self._framing = framing
        self._lock = threading.Condition()
        self._sock: socket.socket | None = None
        self._in_flight: dict[Any, str] = {}
        self._opening: list[Frame] = []
        self._client_done = False
        self._shut_down = False
        self._exit_code = 0
        self._write_lock = threading.Lock()
        self._resumes = 0
        self._engine_pid: object = None
        """The engine's pid from its hello answer: the same one after a stream ended means it is alive."""
        self.restarts = 0

    def run(self) -> int | None:
        """Relay until the client and the engine are both done; the exit status, or None when no engine
        could be reached before a byte of the client's was read (the caller then runs in-process)."""
        try:
            self._sock = self._attach_first()
        except UsageError as exc:
            print(exc, file=sys.stderr)
            return exc.code
        except EngineUnavailable as exc:
            log.warning("%s; running in this process instead", exc)
            return None
        if self._hello.kind == "cli":
            return self._print_run()
        upstream = threading.Thread(target=self._client_to_engine, name="front-up", daemon=True)
        upstream.start()
        return self._engine_to_client()

    def _print_run(self) -> int:
        """A CLI run: the engine sends what to print (`{"out"}`, `{"err"}`) and then `{"exit"}`."""
        sock = self._sock
        assert sock is not None
        lines = LineFrames()
        while data := _recv(sock):
            for frame in lines.feed(data):
                message = frame.message if isinstance(frame.message, dict) else {}
                if isinstance(message.get("out"), str):
                    self._write(message["out"].encode())
                elif isinstance(message.get("err"), str):
                    _stderr(message["err"])
                elif isinstance(message.get("exit"), int):
                    return int(message["exit"])
        diag = engine_restarted(None, self._hello.argv[0] if self._hello.argv else "cli")["error"]["data"]
        sys.stderr.write(f"{diag['message']} {diag['hint']}\n")
        return 1

    # -- client to engine --------------------------------------------------------------------

    def _client_to_engine(self) -> None:
        while True:
            data = self._read_client()
            if not data:
                break
            for frame in self._from_client.feed(data):
                self._send(frame)
        for frame in self._from_client.rest():
            self._send(frame)
        with self._lock:
            self._client_done = True
            if self._sock is not None:
                _shut_write(self._sock)
            self._lock.notify_all()

    def _read_client(self) -> bytes:
        try:
            return os.read(self._in.fileno(), 1 << 16)
        except OSError:
            return b""

    def _send(self, frame: Frame) -> None:
        with self._lock:
            if isinstance(frame.message, dict) and frame.message.get("method") in OPENINGS | OPENED:
                self._opening.append(frame)
            for msg_id, method in requests_in(frame.message):
                self._in_flight[msg_id] = method
            for msg_id in cancelled_in(frame.message):
                self._in_flight.pop(msg_id, None)  # a cancelled request may never be answered
            if isinstance(frame.message, dict) and frame.message.get("method") == "shutdown":
                self._shut_down = True
            if isinstance(frame.message, dict) and frame.message.get("method") in CLOSINGS:
                self._client_done = True  # the engine ends this client's stream next: that is no death
                self._exit_code = 0 if self._shut_down else 1  # LSP: `exit` without `shutdown` exits 1
            while self._sock is None:
                self._lock.wait()  # the engine is being replaced: this frame goes to the new one
            sock = self._sock
        # Outside the lock: a send that blocks (the engine busy writing to us) must not stop the
        # other thread from reading, or neither side would move.
        with contextlib.suppress(OSError):  # the other thread sees the engine go and answers what was in flight
            sock.sendall(frame.raw)

    # -- engine to client --------------------------------------------------------------------

    def _engine_to_client(self) -> int:
        while True:
            sock = self._sock
            assert sock is not None
            frames = self._framing()
            while data := _recv(sock):
                for frame in frames.feed(data):
                    self._deliver(frame)
            sock.close()
            with self._lock:
                if self._client_done:
                    return self._exit_code
            if not self._replace_engine():
                return 1

    def _deliver(self, frame: Frame) -> None:
        if isinstance(frame.message, dict) and frame.message.get("method") == FRONT_LOG:
            params = frame.message.get("params")
            text = params.get("text") if isinstance(params, dict) else None
            if isinstance(text, str):
                _stderr(text)
            return
        ids = answers_in(frame.message)
        if any(isinstance(i, str) and i.startswith(RESUME_ID_PREFIX) for i in ids):
            return  # the answer to a replayed opening: the client had its own long ago
        with self._lock:
            for msg_id in ids:
                self._in_flight.pop(msg_id, None)
        self._write(frame.raw)

    def _write(self, data: bytes) -> None:
        with self._write_lock:
            try:
                self._out.write(data)
                self._out.flush()
            except OSError:
                pass  # the client is gone; its end of input ends the front

    def _replace_engine(self) -> bool:
        """Answer what the engine took with it, attach to a new one and replay the opening."""
        with self._lock:
            self._sock = None
            lost = list(self._in_flight.items())
            self._in_flight.clear()
        for msg_id, method in lost:
            self._write(self._frame(engine_restarted(msg_id, method)))
        log.warning("the engine went away with %d request(s) in flight; attaching to a new one", len(lost))
        for attempt in range(MAX_ATTACH_ATTEMPTS):
            if attempt:
                time.sleep(ATTACH_PAUSE_SECONDS * attempt)  # a dying engine may still accept for a moment
            previous = self._engine_pid
            try:
                sock = self._attach(resume=True)
            except HelloLost:
                continue
            except EngineUnavailable as exc:
                log.error("%s", exc)
                return False
            if self._engine_pid == previous or self.restarts >= MAX_RESTARTS:
                # The same engine ended this client's stream on purpose (it could not serve it), or
                # engines keep dying: attaching again would only loop.
                sock.close()
                log.error("the engine ended this client's connection; the front stops")
                return False
            with self._lock:
                opening = list(self._opening)
            try:
                for frame in opening:  # before the socket is published: nothing of the client's goes first
                    sock.sendall(self._replayed(frame))
            except OSError:
                sock.close()
                continue
            self.restarts += 1
            with self._lock:
                self._sock = sock
                if self._client_done:
                    _shut_write(sock)
                self._lock.notify_all()
            return True
        log.error("the engine went away %d times while the front attached again; giving up", MAX_ATTACH_ATTEMPTS)
        return False

    def _replayed(self, frame: Frame) -> bytes:
        if not isinstance(frame.message, dict) or "id" not in frame.message:
            return frame.raw
        self._resumes += 1
        return self._frame({**frame.message, "id": f"{RESUME_ID_PREFIX}{self._resumes}"})

    def _attach_first(self) -> socket.socket:
        for attempt in range(MAX_ATTACH_ATTEMPTS - 1):
            try:
                return self._attach(resume=False)
            except HelloLost:
                time.sleep(ATTACH_PAUSE_SECONDS * (attempt + 1))
        return self._attach(resume=False)

    def _attach(self, resume: bool) -> socket.socket:
        sock = self._connect()
        try:
            check_peer(sock)  # the other end is this user's: only then does the hello go
        except PeerRefused as exc:
            sock.close()
            raise EngineUnavailable(str(exc)) from None
        try:
            sock.settimeout(HELLO_TIMEOUT_SECONDS)  # a stopped engine whose backlog still accepts
            sock.sendall(self._hello.line(resume))
            answer = _read_line(sock)
            sock.settimeout(None)
        except TimeoutError:
            sock.close()
            raise EngineUnavailable(
                f"The engine did not answer the hello within {HELLO_TIMEOUT_SECONDS:g} s."
            ) from None
        except OSError as exc:
            sock.close()
            raise HelloLost(f"The engine closed the connection during the hello ({exc.strerror}).") from None
        if isinstance(answer, dict) and isinstance(answer.get("usage"), str):
            sock.close()
            code = answer.get("exit")
            raise UsageError(answer["usage"], code if isinstance(code, int) else 2)
        refused = answer.get("refused") if isinstance(answer, dict) else "an unreadable hello"
        if refused or not isinstance(answer, dict) or answer.get("v") != HELLO_VERSION:
            sock.close()
            raise EngineUnavailable(f"The engine refused this front: {refused or 'another hello version'}.")
        engine = answer.get("engine")
        self._engine_pid = engine.get("pid") if isinstance(engine, dict) else None
        return sock


def _stderr(text: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(text)
        sys.stderr.flush()


def _recv(sock: socket.socket) -> bytes:
    try:
        return sock.recv(1 << 16)
    except OSError:
        return b""


def _shut_write(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_WR)


def _read_line(sock: socket.socket) -> Any:
    """The engine's one-line hello answer, read byte by byte so nothing of the stream after it is taken."""
    line = bytearray()
    while len(line) < MAX_HELLO_BYTES:
        byte = sock.recv(1)
        if not byte:
            raise OSError(0, "end of stream")
        if byte == b"\n":
            try:
                return json.loads(line)
            except ValueError:
                return None
        line += byte
    return None


# -- the front's process ---------------------------------------------------------------------


def main(kind: str, argv: list[str]) -> int | None:
    """Run a front: attach (starting the engine when none runs) and relay stdin and stdout; None when
    no engine can be used here (the caller runs in-process, as with `MCP_SIDECAR_ENGINE=off`)."""
    import signal
    import subprocess

    from mcp_sidecar.engine import runtime

    try:
        paths = runtime.engine_paths()
    except EngineUnavailable as exc:
        log.warning("%s; running in this process instead", exc)
        return None

    def start() -> subprocess.Popen[bytes]:
        command = [
            sys.executable,
            "-m",
            "mcp_sidecar",
            "engine",
            "--log-file",
            paths.socket.removesuffix(".sock") + ".log",
        ]
        engine = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            cwd=paths.directory,
        )
        # Reaped when it ends (it outlives this front, or dies and a new one is started): no zombie.
        threading.Thread(target=engine.wait, name="front-engine-reaper", daemon=True).start()
        return engine

    for signum in (signal.SIGINT, signal.SIGTERM):
        # A host stops its gateway with a signal and escalates soon after: end at once, quietly; the
        # engine sees the socket close and ends this client's part.
        signal.signal(signum, lambda *_: os._exit(130 if kind == "cli" else 0))
    relay = Relay(
        Hello(kind, argv), lambda: runtime.connect_or_start(paths, start), sys.stdin.buffer, sys.stdout.buffer
    )
    return relay.run()
