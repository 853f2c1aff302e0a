"""The opt-in live view: the run's channels over Foxglove's WebSocket protocol.

With ``foxglove: {enabled: true}`` in the service config, the service serves the
channels of ``executive.records.runchannels`` live (the same topics, schemas and JSON an MCAP
file of a run holds) with ``foxglove-sdk``'s server, on 127.0.0.1:8765 by default: open
Foxglove, "Open connection", ``ws://127.0.0.1:8765``. Loopback is the default because
the view is unauthenticated; reach it from another computer through an SSH tunnel, or
set ``foxglove.host`` knowingly.

The server runs in the SDK's own (Rust) threads; ``write`` hands a message to it and
returns (a slow client loses messages, it never slows the sender). Its channels live
in a context of their own, not the SDK's global one, so nothing else in the process
(a test, a second service instance) can publish on them or receive them.

Off by default: it costs nothing when nobody looks, but a port is a port. A server
that cannot listen (the port is taken) does not stop the service: missions do not
depend on it. The status says why it is missing (``problems()`` of the caller).
"""

from __future__ import annotations

from collections.abc import Iterable

import foxglove
import structlog

from executive.records.runchannels import Channel, Message

log = structlog.get_logger(__name__)

SERVER_NAME = "atom-executive"


class LiveView:
    """A ``Sink`` of ``RunChannels`` that publishes every message to Foxglove clients."""

    def __init__(self, channels: Iterable[Channel], host: str = "127.0.0.1", port: int = 8765):
        channels = list(channels)  # read twice: the channels, their static messages
        self._context = foxglove.Context()
        self._server = foxglove.start_server(
            name=SERVER_NAME, host=host, port=port, context=self._context
        )
        self.host = host
        self._channels = {
            c.topic: foxglove.Channel(
                c.topic,
                message_encoding="json",
                schema=foxglove.Schema(
                    name=c.schema_name, encoding="jsonschema", data=c.schema_data
                ),
                context=self._context,
            )
            for c in channels
        }
        self._static = {c.topic: c.static for c in channels if c.static}
        self.errors = 0
        self.last_error = ""
        log.info("foxglove live view", url=f"ws://{host}:{self.port}")

    @property
    def port(self) -> int:
        """The port the server listens on (the one chosen when configured with 0)."""
        return int(self._server.port)

    preroll_ns = 0  # a viewer sees what comes after it subscribed

    def wants(self, log_ns: int) -> bool:
        """A viewer is subscribed to a channel (the SDK knows; no viewer, no encoding)."""
        return any(channel.has_sinks() for channel in self._channels.values())

    def begin(self, run_id: str, info: dict[str, str], log_ns: int) -> None:
        """The channels' static messages (the robot's model), so a viewer that connected
        since the last run has them; the live view is otherwise not per run."""
        for topic, data in self._static.items():
            self.write(Message(topic, log_ns, log_ns, data))

    def end(self, run_id: str, info: dict[str, str], log_ns: int) -> None:
        """Nothing to do: the live view is not per run."""

    def write(self, message: Message) -> None:
        channel = self._channels.get(message.topic)
        if channel is None:
            return
        try:
            channel.log(message.data, log_time=message.log_ns)
        except Exception as e:  # noqa: BLE001 - a viewer's trouble is never the executive's
            self.errors += 1
            self.last_error = f"{type(e).__name__}: {e}"

    def problems(self) -> list[str]:
        if not self.errors:
            return []
        return [f"foxglove live view: {self.errors} messages not sent; last: {self.last_error}"]

    def close(self) -> None:
        for channel in self._channels.values():
            channel.close()
        self._server.stop()


def start_live(
    channels: Iterable[Channel], host: str, port: int
) -> tuple[LiveView | None, list[str]]:
    """The live view on ``host:port``, or None and why not (for the status)."""
    try:
        return LiveView(channels, host, port), []
    except Exception as e:  # noqa: BLE001 - the service runs missions without its viewer
        why = f"foxglove live view not started on {host}:{port}: {e}"
        log.error("foxglove live view not started", host=host, port=port, error=str(e))
        return None, [why]
