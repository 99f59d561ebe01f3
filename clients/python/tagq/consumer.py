"""Streaming consumer: one ``MessageService.Consume`` stream.

The server pushes a tag's messages while the consumer has credit (at most
``max_outstanding_messages`` / ``max_outstanding_bytes`` pushed and not yet
settled) and takes acks, nacks, extends and dead-letterings back on the same
stream. A :class:`Consumer` runs three threads, all ended by :meth:`close`
or :meth:`cancel` (or when the stream ends on its own):

* grpc's request thread, which pulls the requests from a generator fed by a
  ``queue.Queue`` (settlements queued while a request is being sent are
  merged into the next one);
* ``tagq-consume-reader``, which reads the pushed messages into a local
  buffer that :meth:`get`, iteration and :meth:`run`'s workers take from;
* ``tagq-consume-renewer``, which extends every unsettled message every
  third of its visibility timeout, until ``max_extension_seconds`` after it
  was received.
"""

from __future__ import annotations

import logging
import math
import queue as queue_mod
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional

import grpc

from tagq.v1 import message_pb2

from .errors import TagqError, from_rpc_error
from .models import Message
from .tracing import _processing

_log = logging.getLogger("tagq")

MAX_VISIBILITY_SECONDS = 43200
_MAX_NACK_DELAY_MS = MAX_VISIBILITY_SECONDS * 1000
# Settlements merged into one request at most (a request stays far below
# gRPC's message limits: ~20 bytes a settlement).
_MAX_MERGED = 5000

_CLOSE = object()  # request queue: end the request stream (CloseSend)
_END = object()  # message buffer: no more messages


class Poison(Exception):
    """Raised by a :meth:`Consumer.run` handler: the message can never be
    processed, so it is dead-lettered (not retried) with ``reason`` (default
    CONSUMER_DEAD_LETTERED) and ``description``. The queue needs a redrive
    policy."""

    def __init__(self, reason: str = "", description: str = "") -> None:
        super().__init__(f"poison message ({reason or 'CONSUMER_DEAD_LETTERED'}): {description}")
        self.reason = reason
        self.description = description


def default_backoff(receive_count: int) -> float:
    """Seconds a failed message stays hidden before its retry: 1 s for the
    first receive, doubling per receive up to 5 minutes, with ±20 % jitter
    (the Go client's DefaultBackoff)."""
    d = min(float(1 << min(max(receive_count - 1, 0), 9)), 300.0)
    return d * (0.8 + 0.4 * random.random())


@dataclass(frozen=True)
class ConsumedMessage(Message):
    """A :class:`tagq.Message` pushed on a Consume stream, settled with
    :meth:`ack`, :meth:`nack`, :meth:`dead` (each at most once) or kept
    longer with :meth:`extend`.

    Each method returns True when the request was queued on the stream, and
    False when the message was already settled or its stream is closing or
    over (then the server gives it back, or, if the stream broke, it comes
    back at its visibility deadline; ``receipt_handle`` still works with the
    unary ``Client.delete`` / ``change_visibility`` / ``dead``).
    """

    delivery_id: int = 0
    """Names the message on its stream (valid on that stream only)."""
    _consumer: Any = field(default=None, repr=False, compare=False)

    def ack(self) -> bool:
        """Deletes the message for the tag."""
        return self._consumer._settle(self.delivery_id, message_pb2.ConsumeRequest(acks=[self.delivery_id]))

    def nack(self, delay_seconds: float = 0.0) -> bool:
        """Makes it visible again after ``delay_seconds`` (0-43200, fractions
        allowed: sent in milliseconds; 0 = at once)."""
        ms = int(round(delay_seconds * 1000))
        if not 0 <= ms <= _MAX_NACK_DELAY_MS:
            raise ValueError(f"delay_seconds must be between 0 and {MAX_VISIBILITY_SECONDS}, got {delay_seconds}")
        return self._consumer._settle(self.delivery_id, message_pb2.ConsumeRequest(
            nacks=[message_pb2.ConsumeNack(delivery_id=self.delivery_id, delay_milliseconds=ms)]))

    def dead(self, reason: str = "", description: str = "") -> bool:
        """Sends it to the queue's dead-letter queue with ``reason`` (default
        CONSUMER_DEAD_LETTERED, at most 256 bytes) and ``description`` (at most
        4096 bytes). Without a redrive policy the server refuses it
        (NOT_A_SOURCE_QUEUE) and, unconfirmed, the message just stays in
        flight until its deadline."""
        return self._consumer._settle(self.delivery_id, message_pb2.ConsumeRequest(
            deads=[message_pb2.ConsumeDead(delivery_id=self.delivery_id, reason=reason, description=description)]))

    def extend(self, seconds: float) -> bool:
        """Sets its visibility deadline to now + ``seconds`` (1-43200; rounded
        up to whole seconds). Automatic renewal goes on from there."""
        secs = int(math.ceil(seconds))
        if not 1 <= secs <= MAX_VISIBILITY_SECONDS:
            raise ValueError(f"seconds must be between 1 and {MAX_VISIBILITY_SECONDS}, got {seconds}")
        return self._consumer._extend(self.delivery_id, secs)


class _Lease:
    """An outstanding (pushed, unsettled) message's renewal schedule."""

    __slots__ = ("next_extend", "limit")

    def __init__(self, next_extend: Optional[float], limit: float) -> None:
        self.next_extend = next_extend  # monotonic time of the next automatic extend; None: no more
        self.limit = limit  # monotonic time after which it is not extended any more


class Consumer:
    """A Consume stream over one tag. Made by :meth:`tagq.Client.consume`.

    Use it as an iterator (``for m in consumer``), with :meth:`get`, or
    with :meth:`run`; and as a context manager, which :meth:`close`\\ s it.
    Messages are settled with their own methods (:class:`ConsumedMessage`).

    Errors of the stream (an unknown queue or tag, bad limits, the server
    shutting down: UNAVAILABLE with reason SERVER_SHUTTING_DOWN) end it;
    :meth:`get` and iteration then raise the :class:`TagqError`, and
    ``error`` holds it. The consumer does not reconnect: make a new one.
    """

    def __init__(self, stub: Any, queue: str, tag: str = "", *,
                 max_outstanding_messages: Optional[int] = None,
                 max_outstanding_bytes: Optional[int] = None,
                 visibility_seconds: Optional[int] = None,
                 renew_visibility_seconds: int = 0,
                 max_extension_seconds: float = 3600.0) -> None:
        self.queue = queue
        self.tag = tag
        self.error: Optional[TagqError] = None
        """Why the stream ended, if it failed (None after a clean close)."""
        self._visibility = renew_visibility_seconds  # 0: no automatic renewal
        self._max_extension = max_extension_seconds
        self._cond = threading.Condition()
        self._leases: Dict[int, _Lease] = {}
        self._requests: "queue_mod.Queue[Any]" = queue_mod.Queue()
        self._buffer: "queue_mod.Queue[Any]" = queue_mod.Queue()
        self._stopping = False  # hand out no more messages
        self._send_closed = False  # _CLOSE queued: nothing more goes out
        self._cancelled = False
        self._ended = False  # the stream is over
        self._renew_wake: Optional[float] = None

        open_ = message_pb2.ConsumeOpen(queue=queue, tag=tag)
        if max_outstanding_messages is not None:
            open_.max_outstanding_messages = max_outstanding_messages
        if max_outstanding_bytes is not None:
            open_.max_outstanding_bytes = max_outstanding_bytes
        if visibility_seconds is not None:
            open_.visibility_seconds = visibility_seconds
        self._call = stub.Consume(self._request_stream(message_pb2.ConsumeRequest(open=open_)))
        self._reader = threading.Thread(target=self._read, name=f"tagq-consume-reader-{queue}", daemon=True)
        self._renewer: Optional[threading.Thread] = None
        if self._visibility >= 1 and self._max_extension > 0:
            self._renewer = threading.Thread(target=self._renew, name=f"tagq-consume-renewer-{queue}", daemon=True)
            self._renewer.start()
        self._reader.start()

    # ---- the request side

    def _request_stream(self, first: message_pb2.ConsumeRequest) -> Iterator[message_pb2.ConsumeRequest]:
        """What grpc sends: the open, then the queued requests, merging those
        that queued up meanwhile, until _CLOSE (then grpc does CloseSend)."""
        yield first
        while True:
            item = self._requests.get()
            if item is _CLOSE:
                return
            n = 1
            closing = False
            while n < _MAX_MERGED:
                try:
                    more = self._requests.get_nowait()
                except queue_mod.Empty:
                    break
                if more is _CLOSE:
                    closing = True
                    break
                item.MergeFrom(more)
                n += 1
            yield item
            if closing:
                return

    def _settle(self, delivery_id: int, req: message_pb2.ConsumeRequest) -> bool:
        with self._cond:
            if self._send_closed or self._leases.pop(delivery_id, None) is None:
                return False
            self._requests.put(req)
            return True

    def _extend(self, delivery_id: int, seconds: int) -> bool:
        with self._cond:
            lease = self._leases.get(delivery_id)
            if self._send_closed or lease is None:
                return False
            self._requests.put(message_pb2.ConsumeRequest(
                extends=[message_pb2.ConsumeExtend(delivery_id=delivery_id, visibility_seconds=seconds)]))
            if lease.next_extend is not None and self._visibility >= 1:
                # Renew again when a third of the visibility is left.
                now = time.monotonic()
                lease.next_extend = now + max(seconds - 2 * self._visibility / 3, seconds / 3)
                self._cond.notify_all()
            return True

    def set_flow(self, max_outstanding_messages: Optional[int] = None,
                 max_outstanding_bytes: Optional[int] = None) -> bool:
        """Changes the outstanding limits (credit) of the stream; None keeps
        one. Same ranges as at the open, but 0 messages pauses delivery."""
        flow = message_pb2.ConsumeFlow()
        if max_outstanding_messages is not None:
            flow.max_outstanding_messages = max_outstanding_messages
        if max_outstanding_bytes is not None:
            flow.max_outstanding_bytes = max_outstanding_bytes
        with self._cond:
            if self._send_closed:
                return False
            self._requests.put(message_pb2.ConsumeRequest(flow=flow))
            return True

    # ---- the response side

    def _read(self) -> None:
        err: Optional[TagqError] = None
        try:
            for resp in self._call:
                if not resp.messages:
                    continue  # confirmations: not asked for
                now = time.monotonic()
                with self._cond:
                    if self._stopping:
                        continue  # not handed out: the server gives them back at the close
                    wake = False
                    for cm in resp.messages:
                        m = ConsumedMessage.from_proto(cm.message)
                        object.__setattr__(m, "delivery_id", cm.delivery_id)
                        object.__setattr__(m, "_consumer", self)
                        nxt = now + self._visibility / 3 if self._renewer is not None else None
                        self._leases[cm.delivery_id] = _Lease(nxt, now + self._max_extension)
                        if nxt is not None and (self._renew_wake is None or nxt < self._renew_wake):
                            wake = True
                        self._buffer.put(m)
                    if wake:
                        self._cond.notify_all()
        except grpc.RpcError as e:
            if not (self._cancelled and e.code() == grpc.StatusCode.CANCELLED):
                err = from_rpc_error(e)
        except Exception as e:  # a bug: end the stream rather than hang its users
            _log.exception("tagq consumer: reading the stream failed")
            err = TagqError(grpc.StatusCode.INTERNAL, message=f"reading the stream failed: {e!r}")
            self._call.cancel()
        finally:
            with self._cond:
                self.error = err
                self._ended = True
                self._send_closed = True
                self._leases.clear()
                self._cond.notify_all()
            self._requests.put(_CLOSE)  # ends grpc's request thread if it still waits
            self._buffer.put(_END)

    # ---- taking messages

    def get(self, timeout: Optional[float] = None) -> Optional[ConsumedMessage]:
        """The next message; waits up to ``timeout`` seconds (None: no limit).

        Returns None once the consumer is stopping, closed or cancelled, or
        the stream ended cleanly. Raises ``TimeoutError`` when no message
        came in time, and the stream's :class:`TagqError` when it failed.
        """
        if self._stopping:
            return None
        try:
            item = self._buffer.get(timeout=timeout)
        except queue_mod.Empty:
            raise TimeoutError(f"no message within {timeout} s") from None
        if item is _END:
            self._buffer.put(_END)  # for the other takers
            if self.error is not None and not self._stopping:
                raise self.error
            return None
        if self._stopping:
            return None  # still outstanding: given back at the close
        return item

    def __iter__(self) -> "Consumer":
        return self

    def __next__(self) -> ConsumedMessage:
        m = self.get()
        if m is None:
            raise StopIteration
        return m

    @property
    def outstanding(self) -> int:
        """Messages pushed to this consumer and not yet settled (buffered or handed out)."""
        with self._cond:
            return len(self._leases)

    # ---- renewal

    def _renew(self) -> None:
        period = self._visibility / 3
        with self._cond:
            while not (self._send_closed or self._ended):
                now = time.monotonic()
                extends: List[message_pb2.ConsumeExtend] = []
                wake: Optional[float] = None
                for did, lease in self._leases.items():
                    if lease.next_extend is None:
                        continue
                    if lease.next_extend <= now:
                        left = lease.limit - now
                        if left < 1:  # max extension reached: let its deadline come
                            lease.next_extend = None
                            continue
                        secs = min(self._visibility, int(left))
                        extends.append(message_pb2.ConsumeExtend(delivery_id=did, visibility_seconds=secs))
                        lease.next_extend = now + period
                    if wake is None or lease.next_extend < wake:
                        wake = lease.next_extend
                if extends:
                    self._requests.put(message_pb2.ConsumeRequest(extends=extends))
                self._renew_wake = wake
                self._cond.wait(None if wake is None else max(wake - now, 0.001))

    # ---- ending

    def stop(self) -> None:
        """Hands out no more messages (:meth:`get` returns None, iteration
        ends, :meth:`run` returns once its handlers finish). Settling the
        messages already handed out still works until :meth:`close`."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._buffer.put(_END)

    def close(self, timeout: float = 30.0) -> bool:
        """Closes the stream cleanly: stops handing out messages, sends the
        settlements queued so far, closes the request side and reads until
        the server ends the stream, which it does once those settlements are
        applied and every unsettled message is visible again. Waits up to
        ``timeout`` seconds, then cancels the stream.

        Returns True when the stream ended cleanly (the settlements were
        applied), False when it failed (see ``error``) or had to be cancelled.
        Idempotent; ends every thread the consumer started.
        """
        self.stop()
        with self._cond:
            if not self._send_closed:
                self._send_closed = True
                self._requests.put(_CLOSE)
                self._cond.notify_all()  # the renewer stops
        self._reader.join(timeout)
        clean = not self._reader.is_alive()
        if not clean:
            self._abort()
        self._join()
        return clean and self.error is None and not self._cancelled

    def cancel(self) -> None:
        """Breaks the stream without closing it: settlements not yet read by
        the server are lost, and unsettled messages stay in flight until their
        visibility deadlines (what a crashed consumer does)."""
        self.stop()
        self._abort()
        self._join()

    def _abort(self) -> None:
        with self._cond:
            self._cancelled = True
            self._send_closed = True
            self._cond.notify_all()
        self._call.cancel()
        self._requests.put(_CLOSE)

    def _join(self) -> None:
        self._reader.join(10)
        if self._renewer is not None:
            self._renewer.join(10)

    def __enter__(self) -> "Consumer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- worker pool

    def run(self, handler: Callable[[ConsumedMessage], Any], workers: int = 1,
            backoff: Callable[[int], float] = default_backoff) -> None:
        """Runs ``handler`` on every message with ``workers`` threads until
        :meth:`stop` (e.g. from a signal handler or another thread), then lets
        the handlers in progress finish, settles their messages and closes
        the stream cleanly.

        A handler that returns acks the message; one that raises
        :class:`Poison` dead-letters it with the Poison's reason and
        description; any other exception nacks it for
        ``backoff(receive_count)`` seconds (default: 1 s doubling to 5 min,
        ±20 %). A handler may also settle the message itself. Keep
        ``max_outstanding_messages`` near ``workers``: messages beyond them
        wait in the buffer (renewed meanwhile).

        Raises the stream's :class:`TagqError` if it failed (after the
        handlers in progress finished; their settlements may be lost).
        """
        if workers < 1:
            raise ValueError("workers must be at least 1")
        threads = [threading.Thread(target=self._work, args=(handler, backoff), name=f"tagq-worker-{i}",
                                    daemon=True) for i in range(workers)]
        for t in threads:
            t.start()
        try:
            for t in threads:
                t.join()
        finally:
            self.stop()
            for t in threads:
                t.join()
            self.close()
        if self.error is not None:
            raise self.error

    def _work(self, handler: Callable[[ConsumedMessage], Any], backoff: Callable[[int], float]) -> None:
        while True:
            try:
                m = self.get()
            except TagqError:
                self.stop()  # run raises it
                return
            if m is None:
                return
            try:
                with _processing(self.queue, m):  # the consumer span (tagq.tracing)
                    handler(m)
            except Poison as p:
                _log.info("tagq consumer: poison message %s dead-lettered: %s", m.id, p)
                m.dead(p.reason, p.description)
            except Exception as e:  # noqa: BLE001 (the handler's failure: retry later)
                wait = min(max(backoff(m.receive_count), 0.0), float(MAX_VISIBILITY_SECONDS))
                _log.info("tagq consumer: handler failed on %s; retrying in %.1f s: %r", m.id, wait, e)
                m.nack(wait)
            else:
                m.ack()
