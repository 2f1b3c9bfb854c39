"""Reading a server-sent event stream as a client does (the feed's tests): messages and comments, line by line,
each wait bounded by a deadline."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from aiohttp import ClientResponse

from linksvc.jsoncodec import loads


@dataclass
class Message:
    id: str | None = None
    event: str = "message"
    data: list[str] = field(default_factory=list)

    @property
    def json(self) -> Any:
        return loads("\n".join(self.data))


@dataclass
class Stream:
    response: ClientResponse
    comments: list[str] = field(default_factory=list)

    async def next(self, deadline: float = 20.0) -> Message:
        """The next message (comments are kept aside); TimeoutError past ``deadline`` seconds."""
        message = Message()
        seen = False
        async with asyncio.timeout(deadline):
            while True:
                raw = await self.response.content.readline()
                if not raw:
                    raise EOFError("the stream ended")
                line = raw.decode().rstrip("\r\n")
                if not line:
                    if seen:
                        return message
                    continue
                if line.startswith(":"):
                    self.comments.append(line)
                    continue
                name, _, value = line.partition(":")
                value = value.removeprefix(" ")
                seen = True
                if name == "id":
                    message.id = value
                elif name == "event":
                    message.event = value
                elif name == "data":
                    message.data.append(value)

    async def take(self, count: int, deadline: float = 20.0) -> list[Message]:
        return [await self.next(deadline) for _ in range(count)]

    async def comment(self, deadline: float = 20.0) -> str:
        """The next comment line (a heartbeat), reading past messages."""
        async with asyncio.timeout(deadline):
            while not self.comments:
                raw = await self.response.content.readline()
                if not raw:
                    raise EOFError("the stream ended")
                line = raw.decode().rstrip("\r\n")
                if line.startswith(":"):
                    self.comments.append(line)
        return self.comments.pop(0)

    def close(self) -> None:
        self.response.close()
