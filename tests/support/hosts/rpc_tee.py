"""A transparent stdio wrapper around an MCP server that logs every line both ways, with times.

    python rpc_tee.py [--stuck] [--hold-answers SECONDS] [--refuse METHOD]... LOG -- COMMAND [ARGS...]

The host starts this instead of `mcp-sidecar mcp`; it starts COMMAND in a session of its own and
copies the host's stdin to it and its stdout back, line by line, appending one JSON object per
line to LOG (`{"t": epoch seconds, "dir": "in" | "out" | "err" | "event", ...}`): `in` is what
the host sent (`msg`, or `raw` when it is not JSON), `out` what the server answered, `err` a line
of the server's stderr, `event` what happened to the processes (`start`, `stdin closed`, `signal
SIGINT`, `exit`, and `wrapper gone` when this process ends, logged by a watcher process even when
the host kills this one). A signal the host sends this process goes on to COMMAND, so the host
stops the server as it would without the wrapper, and the log says when and how.

Three options make the server look worse than it is, to see what the host does then: `--stuck`
ignores the host's signals and the end of its input (as a hung server would), `--hold-answers SECONDS` holds
every line of the server's until SECONDS after the start (as a slow start would), and `--refuse
METHOD` answers the host's METHOD requests with an internal error (-32603) instead of passing
them on (logged as `out` lines with `"refused": true`).

Standard library only, imported at start (a few tens of milliseconds): the wrapper must not change
what the host sees beyond that delay.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Log:
    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the process's life
        self._lock = threading.Lock()

    def write(self, direction: str, **fields: Any) -> None:
        record = json.dumps({"t": round(time.time(), 6), "dir": direction, **fields})
        with self._lock:
            self._file.write(record + "\n")
            self._file.flush()


def _fields(line: bytes) -> dict[str, Any]:
    text = line.decode("utf-8", "replace").rstrip("\r\n")
    try:
        return {"msg": json.loads(text)}
    except ValueError:
        return {"raw": text}


WATCHER = 'cat >/dev/null; printf \'{"t": %s, "dir": "event", "what": "wrapper gone"}\\n\' "$(date +%s.%N)" >> "$1"'
"""A shell that reads a pipe only this process holds: its end is this process's death, whatever
the signal (the host may SIGKILL this wrapper before the server's exit is logged)."""


class Sink:
    """A stream written by several threads, one whole line at a time; dead once a write fails."""

    def __init__(self, stream: IO[bytes] | None) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def write(self, line: bytes) -> None:
        with self._lock:
            if self._stream is None:
                return
            try:
                self._stream.write(line)
                self._stream.flush()
            except (BrokenPipeError, ValueError, OSError):
                self._stream = None

    def close(self) -> None:
        with self._lock, contextlib.suppress(OSError):
            if self._stream is not None:
                self._stream.close()


class Pipe:
    """One direction of the copy: lines from `source` to `sink`, each logged."""

    def __init__(self, log: Log, direction: str, at_end: str, *, close_sink: bool, hold_until: float = 0.0) -> None:
        self.log = log
        self.direction = direction
        self.at_end = at_end
        self.close_sink = close_sink
        self.hold_until = hold_until
        self.refused: set[str] = set()
        self.answers: Sink | None = None

    def run(self, source: IO[bytes], sink: Sink) -> None:
        for line in iter(source.readline, b""):
            written = time.time()
            fields = _fields(line)
            if written < self.hold_until:
                time.sleep(self.hold_until - written)
                fields["written"] = round(written, 6)
            self.log.write(self.direction, **fields)
            if not self._refuse(fields.get("msg")):
                sink.write(line)
        self.log.write("event", what=self.at_end)
        if self.close_sink:
            sink.close()

    def _refuse(self, message: Any) -> bool:
        """Answer a request of a refused method with an error in the server's place."""
        if not isinstance(message, dict) or message.get("method") not in self.refused or "id" not in message:
            return False
        error = {"code": -32603, "message": f"{message['method']} refused by the test wrapper"}
        answer = {"jsonrpc": "2.0", "id": message["id"], "error": error}
        self.log.write("out", msg=answer, refused=True)
        if self.answers is not None:
            self.answers.write(json.dumps(answer).encode() + b"\n")
        return True


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="rpc_tee.py")
    parser.add_argument("--stuck", action="store_true")
    parser.add_argument("--hold-answers", type=float, default=0.0, metavar="SECONDS")
    parser.add_argument("--refuse", action="append", default=[], metavar="METHOD")
    parser.add_argument("log")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not args.command:
        parser.error("no COMMAND after --")
    return args


def main(argv: list[str]) -> int:
    started = time.time()
    args = _arguments(argv)
    log = Log(args.log)
    child = subprocess.Popen(
        args.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    log.write("event", what="start", pid=child.pid, command=args.command)
    assert child.stdin is not None
    assert child.stdout is not None
    assert child.stderr is not None
    watcher = subprocess.Popen(
        ["sh", "-c", WATCHER, "watcher", args.log],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert watcher.stdin is not None  # held open until this process dies

    def on_signal(signum: int, _frame: object) -> None:
        log.write("event", what=f"signal {signal.Signals(signum).name}")
        if not args.stuck and child.poll() is None:
            child.send_signal(signum)

    for signum in FORWARDED:
        signal.signal(signum, on_signal)
    to_host = Sink(sys.stdout.buffer)
    hosted = Pipe(log, "in", "stdin closed", close_sink=not args.stuck)
    hosted.refused = set(args.refuse)
    hosted.answers = to_host
    answers = Pipe(log, "out", "stdout closed", close_sink=False, hold_until=started + args.hold_answers)
    errors = Pipe(log, "err", "stderr closed", close_sink=False)
    readers = [
        threading.Thread(target=hosted.run, args=(sys.stdin.buffer, Sink(child.stdin)), daemon=True),
        threading.Thread(target=answers.run, args=(child.stdout, to_host)),
        threading.Thread(target=errors.run, args=(child.stderr, Sink(sys.stderr.buffer))),
    ]
    for reader in readers:
        reader.start()
    code = child.wait()
    log.write("event", what="exit", code=code)
    for reader in readers[1:]:
        reader.join(timeout=5)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
