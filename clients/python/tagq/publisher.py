"""Batching publisher over ``MessageService.Publish`` streams.

:meth:`Publisher.publish` adds a message to its queue's open batch and
returns a ``concurrent.futures.Future``. A batch becomes a Publish frame
(entry ids "0".."99") when it holds ``max_messages`` or ``max_bytes``, or
``max_delay`` seconds after its first message. A thread
(``tagq-publisher``) sends up to ``max_in_flight`` frames on the stream
and another (``tagq-publish-reader``) matches the answers to them by seq
(they may come out of order) and resolves the futures.

A frame the server did not answer because the stream ended UNAVAILABLE (the
server shutting down, the connection lost) is sent again on a new stream
(after a backoff of 0.1 s doubling to 5 s), for up to ``retry_seconds``
after its first send. A frame that was stored
but whose answer was lost is then stored twice: delivery is at least once.
"""

from __future__ import annotations

import collections
import concurrent.futures
import logging
import queue as queue_mod
import re
import threading
import time
from typing import Any, Deque, Dict, List, Mapping, Optional, Tuple, Union

import grpc

from tagq.v1 import message_pb2

from .errors import TagqError, from_rpc_error
from .models import AttributeValue, attributes_to_proto, body_bytes
from .tracing import _outgoing

_log = logging.getLogger("tagq")

MAX_ENTRIES = 100  # a frame's entries at most (as SendMessageBatch)
_CLOSE = object()
_CODES = {c.value[0]: c for c in grpc.StatusCode}
_ENTRY_FIELD = re.compile(r"^entries\[\d+\]\.?")


def _stream_error(e: message_pb2.StreamError) -> TagqError:
    code = _CODES.get(e.code, grpc.StatusCode.UNKNOWN)
    return TagqError(code, e.reason, e.field, e.message, "tagq", {"field": e.field} if e.field else {})


def _copy(e: TagqError) -> TagqError:
    """One exception object per future: a raised exception gets a traceback."""
    return TagqError(e.code, e.reason, e.field, e.message, e.domain, e.metadata)


class _Frame:
    __slots__ = ("queue", "entries", "futures", "nbytes", "deadline", "request", "first_sent", "stream")

    def __init__(self, queue: str, deadline: float) -> None:
        self.queue = queue
        self.entries: List[message_pb2.SendMessageBatchEntry] = []
        self.futures: List[concurrent.futures.Future] = []
        self.nbytes = 0
        self.deadline = deadline  # while open: when it is sealed at the latest
        self.request: Optional[message_pb2.PublishRequest] = None  # once sealed
        self.first_sent: Optional[float] = None
        self.stream: Optional[_Stream] = None  # the stream it is in flight on


class _Stream:
    def __init__(self) -> None:
        self.requests: "queue_mod.Queue[Any]" = queue_mod.Queue()
        self.call: Any = None
        self.reader: Optional[threading.Thread] = None

    def iterate(self):
        while True:
            item = self.requests.get()
            if item is _CLOSE:
                return
            yield item


class Publisher:
    """Publishes messages in batches on a Publish stream. Made by
    :meth:`tagq.Client.publisher`; a context manager that :meth:`close`\\ s it.

    Args:
        max_messages: entries per frame, 1-100.
        max_bytes: about the encoded size of a frame's entries; a message
            larger than this goes in a frame of its own.
        max_delay: seconds a message waits for its batch to fill.
        max_in_flight: frames sent and not yet answered (the server stores
            up to 64 of a stream's at once).
        retry_seconds: how long a frame is resent on UNAVAILABLE.
    """

    def __init__(self, stub: Any, *, max_messages: int = 100, max_bytes: int = 4 << 20, max_delay: float = 0.01,
                 max_in_flight: int = 4, retry_seconds: float = 60.0) -> None:
        if not 1 <= max_messages <= MAX_ENTRIES:
            raise ValueError(f"max_messages must be between 1 and {MAX_ENTRIES}")
        if max_bytes < 1 or max_in_flight < 1 or max_delay < 0:
            raise ValueError("max_bytes and max_in_flight must be positive, max_delay not negative")
        self._stub = stub
        self.max_messages = max_messages
        self.max_bytes = max_bytes
        self.max_delay = max_delay
        self.max_in_flight = max_in_flight
        self.retry_seconds = retry_seconds
        self.frames_sent = 0
        """Frames sent so far (resends included)."""
        self._cond = threading.Condition()
        self._open: Dict[str, _Frame] = {}  # per queue, filling
        self._ready: Deque[_Frame] = collections.deque()  # sealed, to send
        self._inflight: Dict[int, _Frame] = {}  # by seq
        self._seq = 0
        self._stream: Optional[_Stream] = None
        self._reopen_at = 0.0
        self._backoff = 0.1
        self._closed = False
        self._abandon: Optional[TagqError] = None
        self._readers: List[threading.Thread] = []
        self._thread = threading.Thread(target=self._loop, name="tagq-publisher", daemon=True)
        self._thread.start()

    # ---- publishing

    def publish(self, queue: str, body: Union[bytes, str], attributes: Optional[Mapping[str, AttributeValue]] = None,
                delay_seconds: Optional[int] = None, deduplication_id: Optional[str] = None,
                topic: str = "", priority: int = 0) -> concurrent.futures.Future:
        """Queues a message; returns a Future of its id. The future raises a
        :class:`TagqError`: for this message (e.g. INVALID_ARGUMENT
        MESSAGE_TOO_LARGE, field ``body``), or for its whole frame (e.g.
        NOT_FOUND QUEUE_NOT_FOUND). Bad argument types raise TypeError here."""
        entry = message_pb2.SendMessageBatchEntry(body=body_bytes(body),
                                                  attributes=attributes_to_proto(_outgoing(attributes)))
        if delay_seconds is not None:
            entry.delay_seconds = delay_seconds
        if deduplication_id is not None:
            entry.deduplication_id = deduplication_id
        if topic:
            entry.topic = topic  # required on a topic queue, refused elsewhere
        if priority:
            entry.priority = priority  # a priority queue's 1-16, refused elsewhere
        size = entry.ByteSize() + 8
        fut: concurrent.futures.Future = concurrent.futures.Future()
        fut.set_running_or_notify_cancel()  # cannot be cancelled: it may be on the wire
        with self._cond:
            if self._closed:
                raise RuntimeError("publisher is closed")
            f = self._open.get(queue)
            if f is not None and f.nbytes + size > self.max_bytes:
                self._seal(f)
                f = None
            if f is None:
                f = self._open[queue] = _Frame(queue, time.monotonic() + self.max_delay)
                self._cond.notify_all()  # a new deadline for the loop
            f.entries.append(entry)
            f.futures.append(fut)
            f.nbytes += size
            if len(f.entries) >= self.max_messages or f.nbytes >= self.max_bytes:
                self._seal(f)
                self._cond.notify_all()
        return fut

    def _seal(self, f: _Frame) -> None:
        """Turns an open batch into a frame to send (under the lock)."""
        del self._open[f.queue]
        for i, e in enumerate(f.entries):
            e.id = str(i)
        f.request = message_pb2.PublishRequest(queue=f.queue, entries=f.entries)
        f.entries = []
        self._ready.append(f)

    def flush(self, timeout: Optional[float] = None) -> bool:
        """Sends every batch now and waits up to ``timeout`` seconds until
        every message published so far is answered; True if all were."""
        with self._cond:
            for f in list(self._open.values()):
                self._seal(f)
            futs = [fut for f in list(self._ready) + list(self._inflight.values()) for fut in f.futures]
            self._cond.notify_all()
        _, not_done = concurrent.futures.wait(futs, timeout)
        return not not_done

    def close(self, timeout: Optional[float] = None) -> bool:
        """Sends every batch, waits up to ``timeout`` seconds for the answers,
        closes the stream (CloseSend, then reads until it ends) and ends the
        publisher's threads. Messages still unanswered after ``timeout`` fail
        with CANCELLED. True if everything was answered. Idempotent."""
        with self._cond:
            self._closed = True
            for f in list(self._open.values()):
                self._seal(f)
            self._cond.notify_all()
        self._thread.join(timeout)
        clean = not self._thread.is_alive()
        if not clean:
            with self._cond:
                self._abandon = TagqError(grpc.StatusCode.CANCELLED, message="publisher closed before an answer")
                s = self._stream
                self._cond.notify_all()
            if s is not None:
                s.call.cancel()
            self._thread.join(10)
        return clean

    def __enter__(self) -> "Publisher":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- the sending thread

    def _loop(self) -> None:
        while True:
            open_stream = False
            failed: List[Tuple[_Frame, TagqError]] = []
            with self._cond:
                now = time.monotonic()
                for f in [f for f in self._open.values() if f.deadline <= now]:
                    self._seal(f)
                if self._abandon is not None:
                    failed = [(f, self._abandon) for f in self._ready]
                    self._ready.clear()
                    if not self._inflight:
                        s = self._stream
                        self._stream = None
                        if s is not None:
                            s.requests.put(_CLOSE)
                        break
                elif self._stream is None:
                    if self._ready and now >= self._reopen_at:
                        open_stream = True
                else:
                    while self._ready and len(self._inflight) < self.max_in_flight:
                        f = self._ready.popleft()
                        self._seq += 1
                        f.request.seq = self._seq
                        f.stream = self._stream
                        if f.first_sent is None:
                            f.first_sent = now
                        self._inflight[self._seq] = f
                        self.frames_sent += 1
                        self._stream.requests.put(f.request)
                if self._closed and not (self._open or self._ready or self._inflight) and self._abandon is None:
                    s = self._stream
                    self._stream = None
                    if s is not None:
                        s.requests.put(_CLOSE)  # CloseSend; the reader sees the end
                    break
                if not open_stream and not failed:
                    wake = [f.deadline for f in self._open.values()]
                    if self._stream is None and self._ready:
                        wake.append(self._reopen_at)
                    self._cond.wait(max(min(wake) - now, 0.0005) if wake else None)
            for f, e in failed:
                self._fail(f, e)
            if open_stream:
                self._open_stream()
        for f, e in failed:
            self._fail(f, e)
        for r in self._readers:  # the last one reads until the stream ends
            r.join(30)

    def _open_stream(self) -> None:
        s = _Stream()
        s.call = self._stub.Publish(s.iterate())
        s.reader = threading.Thread(target=self._read, args=(s,), name="tagq-publish-reader", daemon=True)
        with self._cond:
            self._stream = s
            self._readers = [r for r in self._readers if r.is_alive()] + [s.reader]
            self._cond.notify_all()
        s.reader.start()

    # ---- the answers

    def _read(self, s: _Stream) -> None:
        err: Optional[TagqError] = None
        try:
            for resp in s.call:
                with self._cond:
                    f = self._inflight.get(resp.seq)
                if f is None or f.stream is not s:
                    _log.warning("tagq publisher: answer to unknown frame seq %d", resp.seq)
                    continue
                # Resolved before it leaves _inflight, so flush() and close(),
                # which look there, never miss it.
                self._resolve(f, resp)
                with self._cond:
                    del self._inflight[resp.seq]
                    self._backoff = 0.1
                    self._cond.notify_all()
        except grpc.RpcError as e:
            err = from_rpc_error(e)
        except Exception as e:  # a bug: fail the frames rather than hang their futures
            _log.exception("tagq publisher: reading the stream failed")
            err = TagqError(grpc.StatusCode.INTERNAL, message=f"reading the stream failed: {e!r}")
            s.call.cancel()
        s.requests.put(_CLOSE)  # ends grpc's request thread if it still waits
        failed: List[Tuple[_Frame, TagqError]] = []
        with self._cond:
            if self._stream is s:
                self._stream = None
            orphans = sorted(((seq, f) for seq, f in self._inflight.items() if f.stream is s), key=lambda x: x[0])
            if orphans:
                if err is None:
                    err = TagqError(grpc.StatusCode.UNAVAILABLE, message="the stream ended before answering")
                retried = False
                for seq, f in reversed(orphans):
                    del self._inflight[seq]
                    f.stream = None
                    if err.code == grpc.StatusCode.UNAVAILABLE and self._abandon is None and self._may_retry(f):
                        # A copy: the old stream's request thread may still be
                        # serializing this one when the new seq is set.
                        req = message_pb2.PublishRequest()
                        req.CopyFrom(f.request)
                        f.request = req
                        self._ready.appendleft(f)
                        retried = True
                    else:
                        failed.append((f, err))
                if retried:
                    _log.info("tagq publisher: stream ended (%s); resending %d frames", err, len(orphans))
                    self._reopen_at = time.monotonic() + self._backoff
                    self._backoff = min(self._backoff * 2, 5.0)
            self._cond.notify_all()
        for f, e in failed:
            self._fail(f, e)

    def _may_retry(self, f: _Frame) -> bool:
        return f.first_sent is not None and time.monotonic() - f.first_sent < self.retry_seconds

    @staticmethod
    def _fail(f: _Frame, err: TagqError) -> None:
        for fut in f.futures:
            if not fut.done():
                fut.set_exception(_copy(err))

    @staticmethod
    def _resolve(f: _Frame, resp: message_pb2.PublishResponse) -> None:
        if resp.HasField("error"):
            Publisher._fail(f, _stream_error(resp.error))
            return
        for ok in resp.successful:
            f.futures[int(ok.id)].set_result(ok.message_id)
        for bad in resp.failed:
            field = _ENTRY_FIELD.sub("", bad.field)
            f.futures[int(bad.id)].set_exception(TagqError(
                grpc.StatusCode.INVALID_ARGUMENT, bad.reason, field, bad.message, "tagq",
                {"field": field} if field else {}))
        for fut in f.futures:
            if not fut.done():
                fut.set_exception(TagqError(grpc.StatusCode.INTERNAL, message="the answer left this message out"))
