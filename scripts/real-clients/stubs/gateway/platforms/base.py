"""Stand-in adapter base: records each handle_message call, which is a dispatch to the agent."""
import enum
import time
from dataclasses import dataclass
from typing import Optional


class MessageType(enum.Enum):
    TEXT = "text"


@dataclass
class SendResult:
    success: bool
    message_id: Optional[str] = None
    error: Optional[str] = None
    retryable: bool = False


class MessageEvent:
    def __init__(self, **kw):
        self.__dict__.update(kw)


DISPATCHED = []


class BasePlatformAdapter:
    def __init__(self, config, platform):
        self.config = config
        self.platform = platform
        self.name = str(platform)
        self._running = False

    def _mark_connected(self):
        self._running = True

    def _mark_disconnected(self):
        self._running = False

    def build_source(self, **kw):
        return kw

    async def handle_message(self, event):
        DISPATCHED.append((time.monotonic(), event.text))
