"""Plain Python views of tagq's messages."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Union

from google.protobuf import timestamp_pb2

from tagq.v1 import message_pb2

AttributeValue = Union[str, bytes]
"""A message attribute: a str (string_value) or bytes (binary_value)."""


def to_datetime(ts: timestamp_pb2.Timestamp) -> datetime.datetime:
    """A protobuf Timestamp as an aware UTC datetime."""
    return datetime.datetime.fromtimestamp(ts.seconds, tz=datetime.timezone.utc) + datetime.timedelta(
        microseconds=ts.nanos // 1000)


def _opt_time(msg, name: str) -> Optional[datetime.datetime]:
    return to_datetime(getattr(msg, name)) if msg.HasField(name) else None


@dataclass(frozen=True)
class DeadLetter:
    """Where a dead letter came from and why (set on messages of a dead-letter queue)."""

    source_queue_name: str
    source_tag: str
    """The tag that failed or dead-lettered the message."""
    dead_timestamp: Optional[datetime.datetime]
    original_message_id: str
    """The message's id in the source queue."""
    original_receive_count: int
    reason: str
    """MAX_RECEIVE_COUNT_EXCEEDED, CONSUMER_DEAD_LETTERED, or the consumer's own."""
    description: str


@dataclass(frozen=True)
class Message:
    """A received or peeked message."""

    id: str
    body: bytes
    attributes: Dict[str, AttributeValue]
    receipt_handle: str
    """New on every receive; "" for a peeked message."""
    tag: str
    receive_count: int
    send_time: Optional[datetime.datetime]
    first_receive_time: Optional[datetime.datetime] = None
    dead_letter: Optional[DeadLetter] = None
    move_count: int = 0
    """How many times the message was moved back from a dead-letter queue."""
    topic: str = ""
    """Its topic on a topic queue, else ""."""
    priority: int = 0
    """Its priority on a priority queue (1-16, 1 highest; 8 when sent without one), else 0."""
    raw: Optional[message_pb2.Message] = field(default=None, repr=False, compare=False)
    """The protobuf message it was made from."""

    @property
    def text(self) -> str:
        """The body decoded as UTF-8."""
        return self.body.decode("utf-8")

    @classmethod
    def from_proto(cls, m: message_pb2.Message) -> "Message":
        """Converts a ``tagq.v1.Message``."""
        dl = None
        if m.HasField("dead_letter"):
            d = m.dead_letter
            dl = DeadLetter(d.source_queue_name, d.source_tag, _opt_time(d, "dead_timestamp"),
                            d.original_message_id, d.original_receive_count, d.reason, d.description)
        return cls(id=m.message_id, body=m.body, attributes=attributes_from_proto(m.attributes),
                   receipt_handle=m.receipt_handle, tag=m.tag, receive_count=m.receive_count,
                   send_time=_opt_time(m, "send_time"), first_receive_time=_opt_time(m, "first_receive_time"),
                   dead_letter=dl, move_count=m.move_count, topic=m.topic,
                   priority=m.priority, raw=m)


def attributes_from_proto(attrs: Mapping[str, message_pb2.MessageAttribute]) -> Dict[str, AttributeValue]:
    """Typed attributes as a plain dict of str or bytes."""
    out: Dict[str, AttributeValue] = {}
    for k, v in attrs.items():
        out[k] = v.binary_value if v.WhichOneof("value") == "binary_value" else v.string_value
    return out


def attributes_to_proto(attrs: Optional[Mapping[str, AttributeValue]]) -> Dict[str, message_pb2.MessageAttribute]:
    """A dict of str or bytes as typed attributes (bytes -> binary_value)."""
    out: Dict[str, message_pb2.MessageAttribute] = {}
    for k, v in (attrs or {}).items():
        if isinstance(v, (bytes, bytearray, memoryview)):
            out[k] = message_pb2.MessageAttribute(binary_value=bytes(v))
        elif isinstance(v, str):
            out[k] = message_pb2.MessageAttribute(string_value=v)
        else:
            raise TypeError(f"attribute {k!r}: want str or bytes, got {type(v).__name__}")
    return out


def body_bytes(body: Union[bytes, str]) -> bytes:
    """A body as bytes (str is encoded as UTF-8)."""
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    raise TypeError(f"body: want bytes or str, got {type(body).__name__}")
