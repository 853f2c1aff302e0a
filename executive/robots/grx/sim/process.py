"""``SimProcess``: the simulated GRX as a child process, driven over its stdin and stdout.

Used by the GRX demo (``executive.demos.grx``), its tests and the bench::

    with SimProcess(free_port(), "--task-seconds", "0.2") as sim:
        sim.cmd("error 0x2310")          # {"ok": true}, once the sim's model has it
        sim.cmd("status")["axes"]        # the sim's view (``model.HELP`` lists the commands)
        sim.events                       # the lines it said on its own ({"event": ...})

The child is ``python -m executive.robots.grx.sim --profile PROFILE --until-stdin-closes``,
a zenoh peer that listens on tcp/127.0.0.1:``port`` and connects nowhere (more ``--cfg`` in
``args`` win), and quits when this process's end of its stdin closes.
The constructor returns once it said ``{"ready": true, ...}`` and raises ``SimProcessError``
(the child killed) if it did not; ``close()`` sends ``quit`` and kills the child if it has
not gone within ``quit_timeout``, so no process outlives the handle.
"""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SimProcessError(RuntimeError):
    """The simulated GRX did not come up, exited, or did not answer a command in time."""


class SimProcess:
    """``python -m executive.robots.grx.sim`` listening on ``port``; commands on its stdin.

    ``args`` are more options for the sim (``--interface m4``, ``--task-seconds 0.2``,
    ``--cfg KEY:VALUE``); ``log`` takes its stderr (appended; None: this process's stderr).
    Every stdout line with an ``"event"`` key lands in ``events``; the others are answers,
    one per ``cmd``, in order.
    """

    def __init__(
        self,
        port: int,
        *args: str,
        profile: str = "grx",
        log: Path | None = None,
        ready_timeout: float = 15.0,
        reply_timeout: float = 5.0,
        quit_timeout: float = 5.0,
        entry: Sequence[str] = ("-m", "executive.robots.grx.sim"),
    ) -> None:
        """``entry``: how the interpreter starts the sim (``-m executive.cli sim``: as
        ``atom-executive sim --profile grx`` does)."""
        self.port = port
        self.log = log
        self.reply_timeout = reply_timeout
        self.quit_timeout = quit_timeout
        self.service_port: int | None = None  # where a service listens, if the harness set one
        self.events: list[dict[str, Any]] = []
        self._answers: queue.Queue[dict[str, Any] | None] = queue.Queue()  # None: stdout closed
        self._cmd_lock = threading.Lock()
        command = [
            sys.executable,
            *entry,
            "--profile",
            profile,
            "--cfg",
            f'listen/endpoints:["tcp/127.0.0.1:{port}"]',
            "--cfg",
            "connect/endpoints:[]",
            "--until-stdin-closes",  # never outlives this handle's pipe
            *args,
        ]
        stderr = log.open("ab") if log is not None else None
        try:
            self.proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        finally:
            if stderr is not None:
                stderr.close()  # the child has its own copy
        self._reader = threading.Thread(target=self._read, name="grx-sim-stdout", daemon=True)
        self._reader.start()
        try:
            self.ready = self._wait_ready(ready_timeout)
        except BaseException:
            if self.proc.poll() is None:
                self.proc.kill()  # not up: nothing to say quit to
            self.close()
            raise

    def _wait_ready(self, timeout: float) -> dict[str, Any]:
        try:
            first = self._answers.get(timeout=timeout)
        except queue.Empty:
            raise SimProcessError(
                f"the simulated GRX (port {self.port}) said nothing within {timeout:g} s"
                + self._where_stderr()
            ) from None
        if first is None:
            self.proc.wait(timeout=self.quit_timeout)
            raise SimProcessError(
                f"the simulated GRX (port {self.port}) exited with code "
                f"{self.proc.returncode} before it was ready" + self._where_stderr()
            )
        if not first.get("ready"):
            raise SimProcessError(
                f"the simulated GRX (port {self.port}) did not come up: {first}"
                + self._where_stderr()
            )
        return first

    def _where_stderr(self) -> str:
        return f"; its stderr is in {self.log}" if self.log is not None else ""

    def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                if not line.strip():
                    continue
                try:
                    msg = json.loads(line)
                except json.JSONDecodeError:
                    msg = {"event": "unparsed", "line": line.rstrip("\n")}
                if not isinstance(msg, dict):
                    msg = {"event": "unparsed", "line": line.rstrip("\n")}
                if "event" in msg:
                    self.events.append(msg)
                else:
                    self._answers.put(msg)
        except (OSError, ValueError):
            pass  # the pipe closed under us (close())
        finally:
            self._answers.put(None)

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    def cmd(self, line: str, timeout: float | None = None) -> dict[str, Any]:
        """Send one command line; its JSON answer (``SimProcessError`` if none comes within
        ``timeout``, default ``reply_timeout``, or the sim has exited)."""
        wait = self.reply_timeout if timeout is None else timeout
        with self._cmd_lock:
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write(line.rstrip("\n") + "\n")
                self.proc.stdin.flush()
            except (OSError, ValueError) as e:  # a broken or closed pipe: the sim is gone
                raise SimProcessError(
                    f"the simulated GRX has exited (code {self.proc.poll()}); "
                    f"{line!r} not sent: {e}"
                ) from None
            try:
                answer = self._answers.get(timeout=wait)
            except queue.Empty:
                raise SimProcessError(f"no answer to {line!r} within {wait:g} s") from None
            if answer is None:
                self._answers.put(None)  # for the next caller too
                raise SimProcessError(
                    f"the simulated GRX exited (code {self.proc.poll()}) before answering "
                    f"{line!r}" + self._where_stderr()
                )
            return answer

    def close(self) -> None:
        """``quit``, then kill if the sim is still there after ``quit_timeout``; reaped either
        way. Safe to call more than once."""
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=self.quit_timeout)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                self.proc.kill()
        self.proc.wait()
        self._reader.join(timeout=self.quit_timeout)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()

    def __enter__(self) -> SimProcess:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
