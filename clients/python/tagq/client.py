"""The tagq client: a small typed wrapper over the generated gRPC stubs.

Queues, tags and move tasks are returned as the generated protobuf messages
(``tagq.v1.queue_pb2.Queue``, ``Tag``, ``redrive_pb2.MessageMoveTask``);
messages as :class:`tagq.Message`. Every failed call raises
:class:`tagq.TagqError`.
"""

from __future__ import annotations

import calendar
import datetime
from typing import Any, Callable, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import grpc
from google.protobuf import field_mask_pb2, timestamp_pb2

from tagq.v1 import (access_pb2_grpc, message_pb2, message_pb2_grpc, queue_pb2, queue_pb2_grpc, redrive_pb2,
                     redrive_pb2_grpc)

from .auth import BearerInterceptor
from .consumer import Consumer
from .errors import BatchEntryError, BatchError, TagqError, from_rpc_error
from .models import AttributeValue, Message, attributes_to_proto, body_bytes
from .tracing import _outgoing
from .publisher import Publisher

Body = Union[bytes, str]
RedriveSpec = Union[queue_pb2.RedrivePolicy, Mapping[str, Any], Tuple[str, int], None]
RetrySpec = Union[queue_pb2.RetryPolicy, Mapping[str, Any], Tuple[int, int], None]
StartTime = Union[datetime.datetime, int, float, None]
FilterSpec = Union[queue_pb2.TagFilter, Mapping[str, Optional[str]], None]

# Queue fields a caller may set; the last group can be changed by update_queue.
_FIXED_QUEUE_ATTRS = frozenset({"dead_letter_queue", "topic_queue", "priority_queue", "default_tag_name", "partitions"})
_UPDATABLE_QUEUE_ATTRS = frozenset({
    "delay_seconds", "visibility_timeout_seconds", "receive_wait_seconds", "message_retention_seconds",
    "max_message_bytes", "retain_acked_messages", "user_attributes", "redrive_policy", "retry_policy",
    "max_retained_messages", "max_retained_bytes", "overflow_policy", "content_based_deduplication"})

# The longest long-poll the server allows; the deadline of a receive whose
# wait is the queue's default must cover it.
_MAX_WAIT_SECONDS = 20


def _redrive(spec: RedriveSpec) -> Optional[queue_pb2.RedrivePolicy]:
    if spec is None:
        return None
    if isinstance(spec, queue_pb2.RedrivePolicy):
        return spec
    if isinstance(spec, tuple):
        dlq, max_receive_count = spec
        return queue_pb2.RedrivePolicy(dead_letter_queue=dlq, max_receive_count=max_receive_count)
    return queue_pb2.RedrivePolicy(**dict(spec))


def _retry(spec: RetrySpec) -> Optional[queue_pb2.RetryPolicy]:
    if spec is None:
        return None
    if isinstance(spec, queue_pb2.RetryPolicy):
        return spec
    if isinstance(spec, tuple):
        lo, hi = spec
        return queue_pb2.RetryPolicy(min_backoff_seconds=lo, max_backoff_seconds=hi)
    return queue_pb2.RetryPolicy(**dict(spec))


def _queue(name: str, attrs: Mapping[str, Any], allowed: frozenset) -> queue_pb2.Queue:
    q = queue_pb2.Queue(name=name)
    for key, value in attrs.items():
        if key not in allowed:
            raise TypeError(f"unknown or read-only queue attribute {key!r}; settable: {sorted(allowed)}")
        if key == "redrive_policy":
            policy = _redrive(value)
            if policy is not None:
                q.redrive_policy.CopyFrom(policy)
        elif key == "retry_policy":
            retry = _retry(value)
            if retry is not None:
                q.retry_policy.CopyFrom(retry)
        elif key == "user_attributes":
            q.user_attributes.update(value or {})
        elif value is not None:
            setattr(q, key, value)
    return q


def _timestamp(value: Union[datetime.datetime, int, float]) -> timestamp_pb2.Timestamp:
    """A datetime (naive means UTC) or Unix seconds as a Timestamp."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            secs = calendar.timegm(value.timetuple())
        else:
            secs = int(value.timestamp() // 1)
        return timestamp_pb2.Timestamp(seconds=secs, nanos=value.microsecond * 1000)
    whole = int(value // 1)
    return timestamp_pb2.Timestamp(seconds=whole, nanos=int(round((value - whole) * 1e9)))


def _tag_filter(spec: FilterSpec) -> Optional[queue_pb2.TagFilter]:
    if spec is None or isinstance(spec, queue_pb2.TagFilter):
        return spec
    f = queue_pb2.TagFilter(operator=queue_pb2.TagFilter.OPERATOR_AND)
    for name, value in spec.items():
        cond = f.conditions.add(name=name)
        if value is not None:
            cond.string_value = value
    return f


class Client:
    """A connection to a tagqd: plaintext gRPC, TLS when a CA or client
    certificate file is given, or a channel of your own.

    Args:
        target: the gRPC address, ``host:port``.
        timeout: the deadline of each call in seconds; a receive gets its
            wait on top.
        channel: a ready channel (e.g. ``grpc.secure_channel(...)``) to use
            instead of one to ``target``.
        ca_file: PEM CA certificates to verify a tagqd serving TLS
            (``--tls-cert``) with; implies TLS.
        cert_file, key_file: a PEM client certificate and its key, for a
            tagqd that requires one (``--tls-client-ca``); imply TLS (with
            the system's CA certificates unless ``ca_file`` is given).
        api_key: an API key for a tagqd with ``--auth``, sent as
            ``authorization: Bearer <api_key>`` on every call (use TLS
            except on loopback).

    The raw stubs are there too: ``queues``, ``messages``, ``redrive`` and
    ``access`` (principals, API keys and permissions).
    """

    def __init__(self, target: str = "127.0.0.1:9090", *, timeout: float = 30.0,
                 channel: Optional[grpc.Channel] = None, ca_file: Optional[str] = None,
                 cert_file: Optional[str] = None, key_file: Optional[str] = None,
                 api_key: Optional[str] = None) -> None:
        # Answers of any size: a receive of 100 messages of 1 MiB is 100 MiB,
        # and refusing it after tagqd handed the messages out would leave
        # them in flight for nothing (grpc's default limit is 4 MiB).
        options = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]
        tls = ca_file is not None or cert_file is not None or key_file is not None
        if channel is not None:
            if tls:
                raise ValueError("give a channel or ca_file/cert_file/key_file, not both")
            self._channel = channel
        elif tls:
            if (cert_file is None) != (key_file is None):
                raise ValueError("a client certificate needs both cert_file and key_file")

            def read(path: Optional[str]) -> Optional[bytes]:
                if path is None:
                    return None
                with open(path, "rb") as f:
                    return f.read()

            creds = grpc.ssl_channel_credentials(root_certificates=read(ca_file), private_key=read(key_file),
                                                 certificate_chain=read(cert_file))
            self._channel = grpc.secure_channel(target, creds, options=options)
        else:
            self._channel = grpc.insecure_channel(target, options=options)
        self.timeout = timeout
        calls = self._channel
        if api_key:
            calls = grpc.intercept_channel(self._channel, BearerInterceptor(api_key))
        self.queues = queue_pb2_grpc.QueueServiceStub(calls)
        self.messages = message_pb2_grpc.MessageServiceStub(calls)
        self.redrive = redrive_pb2_grpc.RedriveServiceStub(calls)
        self.access = access_pb2_grpc.AccessServiceStub(calls)

    def close(self) -> None:
        """Closes the channel."""
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: Callable[..., Any], request: Any, timeout: Optional[float] = None) -> Any:
        try:
            return method(request, timeout=self.timeout if timeout is None else timeout)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    # ---- queues

    def create_queue(self, name: str, no_default_tag: bool = False, **attrs: Any) -> queue_pb2.Queue:
        """Creates a queue and, unless ``no_default_tag``, its default tag;
        returns it. Make a queue read only by named tags with
        ``no_default_tag=True``: a default tag nobody reads holds every
        message until its retention expires.

        ``attrs`` are ``tagq.v1.Queue`` fields: ``delay_seconds``,
        ``visibility_timeout_seconds``, ``receive_wait_seconds``,
        ``message_retention_seconds``, ``max_message_bytes``,
        ``retain_acked_messages``, ``user_attributes`` (dict),
        ``dead_letter_queue``, ``topic_queue``, ``priority_queue`` (each tag
        receives priority 1 first, 16 last, FIFO within one, every 10th
        message being its oldest waiting one; not with ``topic_queue``),
        ``default_tag_name``, ``partitions`` (1-64, default 1: streams the
        queue is split into, each in a Redis Cluster hash slot of its own;
        every tag reads every partition, order holds per topic per tag and
        not across partitions; not with ``dead_letter_queue`` or
        ``priority_queue``; read back as ``Queue.partitions``) and
        ``redrive_policy``: a ``RedrivePolicy``, a dict
        ``{"dead_letter_queue": ..., "max_receive_count": ...}`` or a tuple
        ``(dead_letter_queue, max_receive_count)``. The dead-letter queue must
        exist, created with ``dead_letter_queue=True``. ``retry_policy``:
        the server-side retry backoff (README "Retry backoff"), a
        ``RetryPolicy``, a dict ``{"min_backoff_seconds": ...,
        "max_backoff_seconds": ...}`` or a tuple ``(min, max)`` in seconds. Caps:
        ``max_retained_messages``, ``max_retained_bytes`` and
        ``overflow_policy`` (``queue_pb2.OVERFLOW_POLICY_REJECT_NEW``, the
        default: sends beyond a cap fail with QUEUE_FULL, or
        ``queue_pb2.OVERFLOW_POLICY_DROP_OLDEST``).
        """
        q = _queue(name, attrs, _FIXED_QUEUE_ATTRS | _UPDATABLE_QUEUE_ATTRS)
        req = queue_pb2.CreateQueueRequest(queue=q, no_default_tag=no_default_tag)
        return self._call(self.queues.CreateQueue, req).queue

    def get_queue(self, name: str) -> queue_pb2.Queue:
        """A queue's attributes and state (``.state.default_tag`` counters)."""
        return self._call(self.queues.GetQueue, queue_pb2.GetQueueRequest(name=name)).queue

    def list_queues(self, prefix: str = "") -> List[queue_pb2.Queue]:
        """Every queue whose name starts with prefix, in name order."""
        out: List[queue_pb2.Queue] = []
        token = ""
        while True:
            r = self._call(self.queues.ListQueues, queue_pb2.ListQueuesRequest(prefix=prefix, page_token=token))
            out.extend(r.queues)
            token = r.next_page_token
            if not token:
                return out

    def update_queue(self, name: str, **attrs: Any) -> queue_pb2.Queue:
        """Changes the given attributes (only those); ``redrive_policy=None``
        and ``retry_policy=None`` remove those policies."""
        q = _queue(name, attrs, _UPDATABLE_QUEUE_ATTRS)
        mask = field_mask_pb2.FieldMask(paths=sorted(attrs))
        return self._call(self.queues.UpdateQueue, queue_pb2.UpdateQueueRequest(queue=q, update_mask=mask)).queue

    def delete_queue(self, name: str, force: bool = False) -> None:
        """Deletes a queue with its messages and tags. ``force`` deletes a
        dead-letter queue still named by redrive policies (removing them)."""
        self._call(self.queues.DeleteQueue, queue_pb2.DeleteQueueRequest(name=name, force=force))

    def purge_queue(self, name: str) -> int:
        """Drops every message; returns how many."""
        return self._call(self.queues.PurgeQueue, queue_pb2.PurgeQueueRequest(name=name)).purged_messages

    # ---- tags

    def create_tag(self, queue: str, name: str, start: StartTime = None, filter: FilterSpec = None,
                   visibility_timeout: Optional[int] = None) -> queue_pb2.Tag:
        """Adds an independent reader to a queue; returns it.

        Args:
            start: the first message it reads, by send time: None for
                messages sent from now on, 0 for the oldest retained one, or a
                datetime / Unix seconds.
            filter: ``{attribute: value}``, every condition must hold; a value
                of None asks only that the attribute be present. Pass a
                ``queue_pb2.TagFilter`` for OPERATOR_OR.
            visibility_timeout: seconds; None: the queue's.
        """
        t = queue_pb2.Tag(name=name)
        if start is not None:
            t.start_time.CopyFrom(_timestamp(start))
        f = _tag_filter(filter)
        if f is not None:
            t.filter.CopyFrom(f)
        if visibility_timeout is not None:
            t.visibility_timeout_seconds = visibility_timeout
        return self._call(self.queues.CreateTag, queue_pb2.CreateTagRequest(queue=queue, tag=t)).tag

    def get_tag(self, queue: str, name: str) -> queue_pb2.Tag:
        """A tag with its exact counters (``.state``)."""
        return self._call(self.queues.GetTag, queue_pb2.GetTagRequest(queue=queue, name=name)).tag

    def list_tags(self, queue: str) -> List[queue_pb2.Tag]:
        """A queue's tags in name order."""
        out: List[queue_pb2.Tag] = []
        token = ""
        while True:
            r = self._call(self.queues.ListTags, queue_pb2.ListTagsRequest(queue=queue, page_token=token))
            out.extend(r.tags)
            token = r.next_page_token
            if not token:
                return out

    def delete_tag(self, queue: str, name: str) -> None:
        """Removes a tag with its in-flight messages and counters."""
        self._call(self.queues.DeleteTag, queue_pb2.DeleteTagRequest(queue=queue, name=name))

    def seek_tag(self, queue: str, name: str, *, time: Optional[Union[datetime.datetime, int, float]] = None,
                 message_id: str = "") -> queue_pb2.Tag:
        """Moves a tag's cursor (DESIGN S22); returns the tag with its state after.

        Give one of:
            time: a datetime (naive means UTC) or Unix seconds: the retained
                messages sent at or after it are available again to this tag
                alone (0: every retained one; a time at or after now: none,
                only what is sent from now on).
            message_id: that message and every later one; one the queue no
                longer retains raises TagqError with reason MESSAGE_NOT_FOUND.

        What the tag had in flight is dropped from it (their receipt handles
        settle nothing any more); its totals and settings stay.
        """
        if (time is None) == (not message_id):
            raise TypeError("seek_tag takes one of time= or message_id=")
        req = queue_pb2.SeekTagRequest(queue=queue, name=name)
        if time is not None:
            req.time.CopyFrom(_timestamp(time))
        else:
            req.message_id = message_id
        return self._call(self.queues.SeekTag, req).tag

    # ---- messages

    def send(self, queue: str, body: Body, attributes: Optional[Mapping[str, AttributeValue]] = None,
             delay_seconds: Optional[int] = None, deduplication_id: Optional[str] = None, topic: str = "",
             priority: int = 0) -> str:
        """Sends one message; returns its id. Attribute values are str or bytes.

        ``topic`` is required on a topic queue (each tag receives a topic's
        messages in send order, one at a time) and refused on other queues.
        ``priority`` (1-16, 1 highest; 0: the default, 8) is for priority
        queues only.

        With ``deduplication_id`` (1-128 printable ASCII characters) the send
        is idempotent for 5 minutes: a send with an id the queue stored a
        message under in that time stores nothing and returns that
        message's id, so a send whose outcome is unknown can be repeated.
        """
        req = message_pb2.SendMessageRequest(queue=queue, body=body_bytes(body),
                                             attributes=attributes_to_proto(_outgoing(attributes)))
        if delay_seconds is not None:
            req.delay_seconds = delay_seconds
        if deduplication_id is not None:
            req.deduplication_id = deduplication_id
        if topic:
            req.topic = topic
        if priority:
            req.priority = priority
        return self._call(self.messages.SendMessage, req).message_id

    def send_batch(self, queue: str,
                   bodies: Iterable[Union[Body, Tuple[Body, Optional[Mapping[str, AttributeValue]]]]],
                   topic: str = "", priority: int = 0) -> List[str]:
        """Sends up to 100 messages in one call; returns their ids in order.

        ``topic`` (a topic queue's) and ``priority`` (a priority queue's) are
        every message's.

        Each item is a body or a ``(body, attributes)`` pair. The server
        stores the valid entries and refuses the invalid ones: if any is
        refused this raises :class:`tagq.BatchError` (a TagqError with the
        first failure's reason and field, every failure in ``failures`` and
        the stored entries' ids in ``message_ids``).
        """
        entries = []
        for i, item in enumerate(bodies):
            body, attrs = item if isinstance(item, tuple) else (item, None)
            entries.append(message_pb2.SendMessageBatchEntry(
                id=str(i), body=body_bytes(body), attributes=attributes_to_proto(_outgoing(attrs)), topic=topic,
                priority=priority))
        r = self._call(self.messages.SendMessageBatch,
                       message_pb2.SendMessageBatchRequest(queue=queue, entries=entries))
        ids = [""] * len(entries)
        for s in r.successful:
            ids[int(s.id)] = s.message_id
        if r.failed:
            failures = [BatchEntryError(int(f.id), f.reason, f.field, f.message) for f in r.failed]
            raise BatchError(failures, len(entries), ids)
        return ids

    def receive(self, queue: str, tag: str = "", max_messages: int = 1, wait_seconds: Optional[int] = None,
                visibility_seconds: Optional[int] = None) -> List[Message]:
        """Receives up to max_messages for a tag ("" = the default tag).

        Waits up to ``wait_seconds`` (0-20; None: the queue's
        receive_wait_seconds) for the first message. ``visibility_seconds``
        overrides the tag's visibility timeout for these messages.
        """
        req = message_pb2.ReceiveMessageRequest(queue=queue, tag=tag, max_messages=max_messages)
        if wait_seconds is not None:
            req.wait_seconds = wait_seconds
        if visibility_seconds is not None:
            req.visibility_seconds = visibility_seconds
        wait = _MAX_WAIT_SECONDS if wait_seconds is None else wait_seconds
        r = self._call(self.messages.ReceiveMessage, req, self.timeout + wait)
        return [Message.from_proto(m) for m in r.messages]

    def delete(self, receipt_handle: str, *, queue: str = "") -> None:
        """Acknowledges a message for the tag that received it (twice is no error).

        The receipt handle names its queue and tag, so no queue is needed;
        ``queue``, when given, must be the handle's (else
        INVALID_RECEIPT_HANDLE). With authentication on, the caller needs
        HANDLE on the handle's queue (and tag).
        """
        self._call(self.messages.DeleteMessage,
                   message_pb2.DeleteMessageRequest(queue=queue, receipt_handle=receipt_handle))

    def change_visibility(self, receipt_handle: str, seconds: int, *, queue: str = "") -> None:
        """Hides an in-flight message for ``seconds`` from now; 0 returns it at once.

        Raises TagqError RECEIPT_HANDLE_STALE once it was received again or deleted.
        """
        self._call(self.messages.ChangeMessageVisibility, message_pb2.ChangeMessageVisibilityRequest(
            queue=queue, receipt_handle=receipt_handle, visibility_seconds=seconds))

    def nack_with_backoff(self, receipt_handle: str, *, queue: str = "") -> None:
        """Returns an in-flight message after its queue's retry backoff
        (``retry_policy``; at once on a queue without one)."""
        self._call(self.messages.ChangeMessageVisibility, message_pb2.ChangeMessageVisibilityRequest(
            queue=queue, receipt_handle=receipt_handle, retry_backoff=True))

    def dead(self, receipt_handle: str, reason: str = "", description: str = "", *, queue: str = "") -> None:
        """Dead-letters a received message now, with a reason (default
        CONSUMER_DEAD_LETTERED). The handle's queue needs a redrive policy
        (else NOT_A_SOURCE_QUEUE)."""
        self._call(self.messages.DeadMessage, message_pb2.DeadMessageRequest(
            queue=queue, receipt_handle=receipt_handle, reason=reason, description=description))

    def peek(self, queue: str, tag: str = "", max_messages: int = 1,
             message_ids: Optional[Sequence[str]] = None) -> List[Message]:
        """Reads messages without receiving them (no receipt handles).

        With ``message_ids``: those messages (ids not found are left out);
        otherwise the next ``max_messages`` available to ``tag``.
        """
        req = message_pb2.PeekMessageRequest(queue=queue)
        if message_ids:
            req.message_ids.extend(message_ids)
        else:
            req.tag = tag
            req.max_messages = max_messages
        return [Message.from_proto(m) for m in self._call(self.messages.PeekMessage, req).messages]

    def iterate(self, queue: str, tag: str = "", wait_seconds: int = 20, auto_delete: bool = False,
                max_messages: int = 1, visibility_seconds: Optional[int] = None) -> Iterator[Message]:
        """Yields a tag's messages as they arrive, long-polling forever.

        Without ``auto_delete`` the caller deletes (or dead-letters) each
        message. With it, a message is deleted when the loop asks for the
        next one, i.e. once its loop body finished without an exception or
        ``break``: a message whose body raised is not deleted and comes back
        after its visibility timeout; after a ``break`` delete it yourself.
        Messages received in the same batch but not yet yielded when the
        loop stops are made visible again at once.
        """
        while True:
            batch = self.receive(queue, tag, max_messages=max_messages, wait_seconds=wait_seconds,
                                 visibility_seconds=visibility_seconds)
            pending = list(reversed(batch))  # not yet yielded, next one last
            try:
                while pending:
                    m = pending.pop()
                    yield m
                    if auto_delete:
                        self.delete(m.receipt_handle)
            finally:
                for m in reversed(pending):  # the loop stopped early: hand these back
                    try:
                        self.change_visibility(m.receipt_handle, 0)
                    except TagqError:
                        pass

    # ---- streams

    def consume(self, queue: str, tag: Optional[str] = None, *, max_outstanding_messages: Optional[int] = None,
                max_outstanding_bytes: Optional[int] = None, visibility_seconds: Optional[int] = None,
                max_extension_seconds: float = 3600.0) -> Consumer:
        """Opens a Consume stream on a tag (None or "": the default tag).

        The server pushes messages while fewer than
        ``max_outstanding_messages`` (1-10000; None: 100) and
        ``max_outstanding_bytes`` of bodies (1 KiB-1 GiB; None: 64 MiB) are
        pushed and not yet settled. ``visibility_seconds`` (0-43200; None: the
        tag's, else the queue's visibility timeout) hides each pushed message;
        the consumer extends it by that much every third of it until the
        message is settled, for up to ``max_extension_seconds`` after it came
        (0: no automatic extension). With ``visibility_seconds`` None this
        looks the timeout up first (GetQueue and GetTag, which raise
        TagqError QUEUE_NOT_FOUND / TAG_NOT_FOUND here); other errors of the
        open come from the first ``get``/iteration.

        Returns a :class:`tagq.Consumer`: iterate it (or call ``get`` or
        ``run``) and ``close`` it (it is a context manager).
        """
        tag = tag or ""
        renew = 0
        if max_extension_seconds > 0:
            renew = visibility_seconds if visibility_seconds is not None else self._visibility_timeout(queue, tag)
        return Consumer(self.messages, queue, tag, max_outstanding_messages=max_outstanding_messages,
                        max_outstanding_bytes=max_outstanding_bytes, visibility_seconds=visibility_seconds,
                        renew_visibility_seconds=renew, max_extension_seconds=max_extension_seconds)

    def _visibility_timeout(self, queue: str, tag: str) -> int:
        """The visibility timeout a tag's receives get: the tag's, else the queue's."""
        q = self.get_queue(queue)
        t = self.get_tag(queue, tag or q.default_tag_name or "default")
        if t.HasField("visibility_timeout_seconds"):
            return t.visibility_timeout_seconds
        return q.visibility_timeout_seconds if q.HasField("visibility_timeout_seconds") else 30

    def publisher(self, *, max_messages: int = 100, max_bytes: int = 4 << 20, max_delay: float = 0.01,
                  max_in_flight: int = 4, retry_seconds: float = 60.0) -> Publisher:
        """A :class:`tagq.Publisher`: ``publish(queue, body, attributes=None,
        delay_seconds=None)`` returns a ``concurrent.futures.Future`` of the
        message id; messages are batched per queue into Publish frames of up
        to ``max_messages`` (1-100) and about ``max_bytes``, each sent at the
        latest ``max_delay`` seconds after its first message, with up to
        ``max_in_flight`` frames awaiting their answers. ``flush`` and
        ``close`` (it is a context manager) wait for the answers."""
        return Publisher(self.messages, max_messages=max_messages, max_bytes=max_bytes, max_delay=max_delay,
                         max_in_flight=max_in_flight, retry_seconds=retry_seconds)

    # ---- moving dead letters back

    def start_message_move(self, dead_letter_queue: str, source_queue: str = "", source_tag: str = "",
                           max_messages_per_second: int = 0) -> redrive_pb2.MessageMoveTask:
        """Starts moving the dead letters a DLQ holds now back to the tags
        they died in (optionally only one source queue / tag); returns the task."""
        return self._call(self.redrive.StartMessageMove, redrive_pb2.StartMessageMoveRequest(
            dead_letter_queue=dead_letter_queue, source_queue=source_queue, source_tag=source_tag,
            max_messages_per_second=max_messages_per_second)).task

    def list_message_moves(self, dead_letter_queue: str) -> List[redrive_pb2.MessageMoveTask]:
        """A DLQ's recent move tasks, newest first."""
        r = self._call(self.redrive.ListMessageMoves,
                       redrive_pb2.ListMessageMovesRequest(dead_letter_queue=dead_letter_queue))
        return list(r.tasks)

    def cancel_message_move(self, dead_letter_queue: str, task_id: str) -> redrive_pb2.MessageMoveTask:
        """Stops a running move task; messages moved stay moved."""
        return self._call(self.redrive.CancelMessageMove, redrive_pb2.CancelMessageMoveRequest(
            dead_letter_queue=dead_letter_queue, task_id=task_id)).task
