"""The tagq client: a typed wrapper over the generated gRPC stubs."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Mapping, Optional, Union

import grpc
from google.protobuf import field_mask_pb2, timestamp_pb2

from tagq.v1 import message_pb2, message_pb2_grpc, queue_pb2, queue_pb2_grpc, redrive_pb2, redrive_pb2_grpc
from tagqclient import rpc_pb2

AttrValue = Union[str, bytes]


class TagqError(Exception):
    """An error tagqd returned: gRPC code, ErrorInfo reason, field at fault."""

    def __init__(self, code: grpc.StatusCode, message: str, reason: str = "", field: str = "",
                 metadata: Optional[Dict[str, str]] = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason
        self.field = field
        self.metadata = metadata or {}

    def __repr__(self) -> str:
        return f"TagqError({self.code.name}, reason={self.reason!r}, field={self.field!r}, {self.message!r})"


def _error(err: grpc.RpcError) -> TagqError:
    reason, fld, meta = "", "", {}
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            st = rpc_pb2.Status.FromString(value)
            for d in st.details:
                if d.type_url.endswith("/google.rpc.ErrorInfo"):
                    info = rpc_pb2.ErrorInfo.FromString(d.value)
                    reason, meta = info.reason, dict(info.metadata)
                    fld = meta.get("field", "")
    return TagqError(err.code(), err.details() or "", reason, fld, meta)


def _ts(t: timestamp_pb2.Timestamp, present: bool = True) -> Optional[datetime.datetime]:
    if not present:
        return None
    return t.ToDatetime(tzinfo=datetime.timezone.utc)


@dataclass
class DeadLetter:
    """Where a dead letter came from and why."""
    source_queue_name: str
    source_tag: str
    dead_timestamp: Optional[datetime.datetime]
    original_message_id: str
    original_receive_count: int
    reason: str
    description: str


@dataclass
class Message:
    """A received or peeked message."""
    message_id: str
    body: bytes
    attributes: Dict[str, AttrValue]
    receipt_handle: str
    tag: str
    receive_count: int
    send_time: Optional[datetime.datetime]
    dead_letter: Optional[DeadLetter] = None
    move_count: int = 0
    raw: message_pb2.Message = field(default=None, repr=False)

    @classmethod
    def from_proto(cls, m: message_pb2.Message) -> "Message":
        attrs: Dict[str, AttrValue] = {}
        for k, v in m.attributes.items():
            attrs[k] = v.binary_value if v.WhichOneof("value") == "binary_value" else v.string_value
        dl = None
        if m.HasField("dead_letter"):
            d = m.dead_letter
            dl = DeadLetter(d.source_queue_name, d.source_tag, _ts(d.dead_timestamp, d.HasField("dead_timestamp")),
                            d.original_message_id, d.original_receive_count, d.reason, d.description)
        return cls(m.message_id, m.body, attrs, m.receipt_handle, m.tag, m.receive_count,
                   _ts(m.send_time, m.HasField("send_time")), dl, m.move_count, m)


def _attrs(attributes: Optional[Mapping[str, AttrValue]]) -> Dict[str, message_pb2.MessageAttribute]:
    out = {}
    for k, v in (attributes or {}).items():
        if isinstance(v, bytes):
            out[k] = message_pb2.MessageAttribute(binary_value=v)
        else:
            out[k] = message_pb2.MessageAttribute(string_value=str(v))
    return out


def _body(b: Union[bytes, str]) -> bytes:
    return b.encode() if isinstance(b, str) else b


class Client:
    """A connection to a tagqd (plaintext gRPC by default)."""

    def __init__(self, target: str = "127.0.0.1:9090", channel: Optional[grpc.Channel] = None,
                 timeout: float = 30.0):
        self._channel = channel or grpc.insecure_channel(target)
        self.queues = queue_pb2_grpc.QueueServiceStub(self._channel)
        self.messages = message_pb2_grpc.MessageServiceStub(self._channel)
        self.redrive = redrive_pb2_grpc.RedriveServiceStub(self._channel)
        self.timeout = timeout

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _call(self, method, request, timeout: Optional[float] = None):
        try:
            return method(request, timeout=timeout or self.timeout)
        except grpc.RpcError as e:
            raise _error(e) from None

    # ---- queues and tags

    def create_queue(self, name: str, *, visibility_timeout_seconds: Optional[int] = None,
                     delay_seconds: Optional[int] = None, message_retention_seconds: Optional[int] = None,
                     receive_wait_seconds: Optional[int] = None, max_message_bytes: Optional[int] = None,
                     dead_letter_queue: bool = False, redrive_to: str = "", max_receive_count: int = 5,
                     default_tag_name: str = "") -> queue_pb2.Queue:
        """Creates a queue (with its default tag). redrive_to names a dead-letter queue."""
        q = queue_pb2.Queue(name=name, dead_letter_queue=dead_letter_queue, default_tag_name=default_tag_name)
        for f, v in (("visibility_timeout_seconds", visibility_timeout_seconds), ("delay_seconds", delay_seconds),
                     ("message_retention_seconds", message_retention_seconds),
                     ("receive_wait_seconds", receive_wait_seconds), ("max_message_bytes", max_message_bytes)):
            if v is not None:
                setattr(q, f, v)
        if redrive_to:
            q.redrive_policy.dead_letter_queue = redrive_to
            q.redrive_policy.max_receive_count = max_receive_count
        return self._call(self.queues.CreateQueue, queue_pb2.CreateQueueRequest(queue=q)).queue

    def get_queue(self, name: str) -> queue_pb2.Queue:
        return self._call(self.queues.GetQueue, queue_pb2.GetQueueRequest(name=name)).queue

    def list_queues(self, prefix: str = "") -> List[queue_pb2.Queue]:
        out, token = [], ""
        while True:
            r = self._call(self.queues.ListQueues, queue_pb2.ListQueuesRequest(prefix=prefix, page_token=token))
            out.extend(r.queues)
            token = r.next_page_token
            if not token:
                return out

    def set_redrive_policy(self, name: str, dead_letter_queue: str = "", max_receive_count: int = 5) -> queue_pb2.Queue:
        """Sets (or, with no dead_letter_queue, removes) a queue's redrive policy."""
        q = queue_pb2.Queue(name=name)
        if dead_letter_queue:
            q.redrive_policy.dead_letter_queue = dead_letter_queue
            q.redrive_policy.max_receive_count = max_receive_count
        req = queue_pb2.UpdateQueueRequest(queue=q, update_mask=field_mask_pb2.FieldMask(paths=["redrive_policy"]))
        return self._call(self.queues.UpdateQueue, req).queue

    def delete_queue(self, name: str, force: bool = False) -> None:
        self._call(self.queues.DeleteQueue, queue_pb2.DeleteQueueRequest(name=name, force=force))

    def create_tag(self, queue: str, name: str, *, from_oldest: bool = False,
                   filter: Optional[Mapping[str, Optional[str]]] = None, any_of: bool = False,
                   visibility_timeout_seconds: Optional[int] = None) -> queue_pb2.Tag:
        """Adds a tag. filter maps attribute names to a required string value (or None: present)."""
        t = queue_pb2.Tag(name=name)
        if from_oldest:
            t.start_time.FromSeconds(0)
        if filter:
            t.filter.operator = queue_pb2.TagFilter.OPERATOR_OR if any_of else queue_pb2.TagFilter.OPERATOR_AND
            for k, v in filter.items():
                c = t.filter.conditions.add(name=k)
                if v is not None:
                    c.string_value = v
        if visibility_timeout_seconds is not None:
            t.visibility_timeout_seconds = visibility_timeout_seconds
        return self._call(self.queues.CreateTag, queue_pb2.CreateTagRequest(queue=queue, tag=t)).tag

    def get_tag(self, queue: str, name: str) -> queue_pb2.Tag:
        return self._call(self.queues.GetTag, queue_pb2.GetTagRequest(queue=queue, name=name)).tag

    def delete_tag(self, queue: str, name: str) -> None:
        self._call(self.queues.DeleteTag, queue_pb2.DeleteTagRequest(queue=queue, name=name))

    # ---- messages

    def send(self, queue: str, body: Union[bytes, str], attributes: Optional[Mapping[str, AttrValue]] = None,
             delay_seconds: Optional[int] = None) -> str:
        """Sends one message and returns its id."""
        req = message_pb2.SendMessageRequest(queue=queue, body=_body(body), attributes=_attrs(attributes))
        if delay_seconds is not None:
            req.delay_seconds = delay_seconds
        return self._call(self.messages.SendMessage, req).message_id

    def send_batch(self, queue: str, bodies: List[Union[bytes, str]]) -> List[str]:
        """Sends up to 100 messages in one atomic step; raises TagqError if any is refused."""
        entries = [message_pb2.SendMessageBatchEntry(id=str(i), body=_body(b)) for i, b in enumerate(bodies)]
        r = self._call(self.messages.SendMessageBatch, message_pb2.SendMessageBatchRequest(queue=queue, entries=entries))
        if r.failed:
            f = r.failed[0]
            raise TagqError(grpc.StatusCode.INVALID_ARGUMENT, f.message, f.reason, f.field)
        ids = [""] * len(bodies)
        for s in r.successful:
            ids[int(s.id)] = s.message_id
        return ids

    def receive(self, queue: str, tag: str = "", max_messages: int = 1, wait_seconds: Optional[int] = None,
                visibility_seconds: Optional[int] = None) -> List[Message]:
        """Receives up to max_messages for tag ("" = the default tag), waiting up to wait_seconds."""
        req = message_pb2.ReceiveMessageRequest(queue=queue, tag=tag, max_messages=max_messages)
        if wait_seconds is not None:
            req.wait_seconds = wait_seconds
        if visibility_seconds is not None:
            req.visibility_seconds = visibility_seconds
        timeout = self.timeout + (wait_seconds or 0)
        return [Message.from_proto(m) for m in self._call(self.messages.ReceiveMessage, req, timeout).messages]

    def delete(self, queue: str, receipt_handle: str) -> None:
        """Acknowledges a message for the tag that received it."""
        self._call(self.messages.DeleteMessage,
                   message_pb2.DeleteMessageRequest(queue=queue, receipt_handle=receipt_handle))

    def change_visibility(self, queue: str, receipt_handle: str, seconds: int) -> None:
        """Hides the message for seconds more; 0 gives it back at once (a nack)."""
        self._call(self.messages.ChangeMessageVisibility, message_pb2.ChangeMessageVisibilityRequest(
            queue=queue, receipt_handle=receipt_handle, visibility_seconds=seconds))

    def dead(self, queue: str, receipt_handle: str, reason: str = "", description: str = "") -> None:
        """Dead-letters a received message now (the queue needs a redrive policy)."""
        self._call(self.messages.DeadMessage, message_pb2.DeadMessageRequest(
            queue=queue, receipt_handle=receipt_handle, reason=reason, description=description))

    def peek(self, queue: str, tag: str = "", max_messages: int = 10) -> List[Message]:
        """The next messages tag would receive, without receiving them."""
        r = self._call(self.messages.PeekMessage,
                       message_pb2.PeekMessageRequest(queue=queue, tag=tag, max_messages=max_messages))
        return [Message.from_proto(m) for m in r.messages]

    def iterate(self, queue: str, tag: str = "", wait_seconds: int = 20, max_messages: int = 10,
                auto_delete: bool = False) -> Iterator[Message]:
        """Yields messages of a tag as they arrive (long polling), forever.

        With auto_delete, each message is deleted once the loop body that got
        it finishes without an exception; otherwise delete it yourself.
        """
        while True:
            for m in self.receive(queue, tag, max_messages=max_messages, wait_seconds=wait_seconds):
                yield m
                if auto_delete:
                    self.delete(queue, m.receipt_handle)

    # ---- moving dead letters back

    def start_message_move(self, dead_letter_queue: str, source_queue: str = "", source_tag: str = "",
                           max_messages_per_second: int = 0) -> redrive_pb2.MessageMoveTask:
        return self._call(self.redrive.StartMessageMove, redrive_pb2.StartMessageMoveRequest(
            dead_letter_queue=dead_letter_queue, source_queue=source_queue, source_tag=source_tag,
            max_messages_per_second=max_messages_per_second)).task

    def list_message_moves(self, dead_letter_queue: str) -> List[redrive_pb2.MessageMoveTask]:
        return list(self._call(self.redrive.ListMessageMoves,
                               redrive_pb2.ListMessageMovesRequest(dead_letter_queue=dead_letter_queue)).tasks)
