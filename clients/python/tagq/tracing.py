"""Trace context across the queue, as the Go and TypeScript clients carry it.

A send (``Client.send``, ``send_batch``, ``Publisher.publish``) made while a
span is current adds W3C Trace Context to each message's attributes:
``traceparent`` and, when the span has one, ``tracestate`` (a message's own
value wins). A worker (``Consumer.run``) runs each handler inside a consumer
span ``tagq process <queue>`` linked to the producer's span;
:func:`producer_span_context` reads that link from any received message.

Which span is current, and how a consumer span starts, is a hook
(:func:`set_hook`): two callables. With the ``opentelemetry`` package
importable the hook is OpenTelemetry's (the current span of
``opentelemetry.trace``; consumer spans from the tracer named ``tagq``, with
the attributes the other clients set); without it the hook does nothing
until set. The W3C formatting and parsing are this module's own
(:func:`format_traceparent`, :func:`parse_traceparent`), so the attributes
are the same with any tracer.
"""

from __future__ import annotations

import contextlib
import re
import threading
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Dict, Mapping, Optional

TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"
TRACER_NAME = "tagq"
"""The tracer name of the consumer spans (Go's is its module path, TypeScript's its package name)."""


@dataclass(frozen=True)
class SpanContext:
    """A span's W3C trace context: ``trace_id`` (32 lowercase hex digits),
    ``span_id`` (16), ``trace_flags`` (bit 0: sampled) and ``trace_state``
    (the ``tracestate`` value, "" for none)."""

    trace_id: str
    span_id: str
    trace_flags: int = 1
    trace_state: str = ""

    @property
    def sampled(self) -> bool:
        return bool(self.trace_flags & 1)

    @property
    def is_valid(self) -> bool:
        return (_HEX32.fullmatch(self.trace_id) is not None and self.trace_id != "0" * 32
                and _HEX16.fullmatch(self.span_id) is not None and self.span_id != "0" * 16
                and 0 <= self.trace_flags <= 0xFF)


_HEX32 = re.compile(r"[0-9a-f]{32}")
_HEX16 = re.compile(r"[0-9a-f]{16}")
# version-traceid-parentid-flags, and for a version after 00 anything after
# a further "-" (W3C Trace Context, "Versioning of traceparent").
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")
# A tracestate list member: key=value, the key simple or tenant@system.
_TS_KEY = r"(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})"
_TS_VALUE = r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]"
_TS_MEMBER = re.compile(_TS_KEY + "=" + _TS_VALUE)
_TS_MAX_MEMBERS = 32


def format_traceparent(sc: SpanContext) -> str:
    """The ``traceparent`` of a span context (version 00). Raises ValueError
    for an invalid one (ids of the wrong length or case, or all zeros)."""
    if not sc.is_valid:
        raise ValueError(f"not a valid span context: {sc!r}")
    return f"00-{sc.trace_id}-{sc.span_id}-{sc.trace_flags:02x}"


def parse_traceparent(traceparent: str, tracestate: str = "") -> Optional[SpanContext]:
    """The span context a ``traceparent`` (and ``tracestate``) value names, or
    None when it is not a valid one: version ff, version 00 with more than
    four fields, ids not lowercase hex or all zeros. A ``tracestate`` that is
    not a valid list is dropped (the span context stands without it)."""
    m = _TRACEPARENT.fullmatch(traceparent.strip(" \t"))
    if m is None:
        return None
    version, trace_id, span_id, flags, rest = m.groups()
    if version == "ff" or (version == "00" and rest):
        return None
    sc = SpanContext(trace_id, span_id, int(flags, 16), parse_tracestate(tracestate))
    return sc if sc.is_valid else None


def parse_tracestate(tracestate: str) -> str:
    """A ``tracestate`` value with empty members and blanks around members
    removed, or "" when it is not a valid list (a bad member, a key twice,
    more than 32 members)."""
    members = [p.strip(" \t") for p in tracestate.split(",")]
    members = [p for p in members if p]
    if len(members) > _TS_MAX_MEMBERS:
        return ""
    keys = set()
    for p in members:
        if _TS_MEMBER.fullmatch(p) is None:
            return ""
        key = p.split("=", 1)[0]
        if key in keys:
            return ""
        keys.add(key)
    return ",".join(members)


def inject(attributes: Dict[str, Any], sc: SpanContext) -> None:
    """Adds ``sc`` to message attributes (in place), keeping any
    ``traceparent`` or ``tracestate`` they already have."""
    attributes.setdefault(TRACEPARENT, format_traceparent(sc))
    if sc.trace_state:
        attributes.setdefault(TRACESTATE, sc.trace_state)


def extract(attributes: Mapping[str, Any]) -> Optional[SpanContext]:
    """The span context in message attributes, or None."""
    tp, ts = attributes.get(TRACEPARENT), attributes.get(TRACESTATE)
    if not isinstance(tp, str):
        return None
    return parse_traceparent(tp, ts if isinstance(ts, str) else "")


def producer_span_context(message: Any) -> Optional[SpanContext]:
    """The span context of the span that sent a message (a
    :class:`tagq.Message`, or its attributes), or None."""
    return extract(getattr(message, "attributes", message))


# ---- the hook

CurrentSpan = Callable[[], Optional[SpanContext]]
"""Returns the current span's context, or None (no span: nothing is added)."""

ProcessSpan = Callable[[str, Any, Optional[SpanContext]], ContextManager[Any]]
"""``process(queue, message, producer)``: a context manager the worker runs
the handler in (start a consumer span linked to ``producer`` on enter, end
it on exit; an exception from the handler passes through it)."""


@dataclass(frozen=True)
class _Hook:
    current: Optional[CurrentSpan] = None
    process: Optional[ProcessSpan] = None


_lock = threading.Lock()
_hook = _Hook()


def set_hook(current: Optional[CurrentSpan] = None, process: Optional[ProcessSpan] = None) -> None:
    """Sets how the client finds the current span (``current``) and runs a
    handler in a consumer span (``process``); None for either turns that
    part off. :func:`reset_hook` goes back to the default."""
    global _hook
    with _lock:
        _hook = _Hook(current, process)


def reset_hook() -> bool:
    """Sets the default hook: OpenTelemetry's when the ``opentelemetry``
    package is importable, else none. Returns whether it is
    OpenTelemetry's."""
    hook = _opentelemetry_hook()
    set_hook(*(hook or (None, None)))
    return hook is not None


def _opentelemetry_hook() -> Optional[tuple]:
    try:
        from opentelemetry import trace
    except ImportError:
        return None

    def current() -> Optional[SpanContext]:
        sc = trace.get_current_span().get_span_context()
        if not sc.is_valid:
            return None
        state = sc.trace_state.to_header() if sc.trace_state else ""
        return SpanContext(trace.format_trace_id(sc.trace_id), trace.format_span_id(sc.span_id),
                           int(sc.trace_flags), state)

    def process(queue: str, message: Any, producer: Optional[SpanContext]) -> ContextManager[Any]:
        links = []
        if producer is not None:
            state = trace.TraceState.from_header([producer.trace_state]) if producer.trace_state else None
            links.append(trace.Link(trace.SpanContext(int(producer.trace_id, 16), int(producer.span_id, 16),
                                                      is_remote=True, trace_flags=trace.TraceFlags(producer.trace_flags),
                                                      trace_state=state)))
        # A handler's exception is recorded and sets the status to error
        # (start_as_current_span's defaults).
        return trace.get_tracer(TRACER_NAME).start_as_current_span(
            f"tagq process {queue}", kind=trace.SpanKind.CONSUMER, links=links, attributes={
                "messaging.system": "tagq",
                "messaging.destination.name": queue,
                "messaging.message.id": message.id,
                "messaging.tagq.receive_count": message.receive_count,
            })

    return current, process


def _outgoing(attributes: Optional[Mapping[str, Any]]) -> Optional[Mapping[str, Any]]:
    """A message's attributes as sent now: with the current span's context
    when there is one (a new dict; the caller's is not changed)."""
    current = _hook.current
    if current is None:
        return attributes
    sc = current()
    if sc is None or not sc.is_valid:
        return attributes
    out = dict(attributes or {})
    inject(out, sc)
    return out


def _processing(queue: str, message: Any) -> ContextManager[Any]:
    """The context a worker runs a handler of ``message`` in."""
    process = _hook.process
    if process is None:
        return contextlib.nullcontext()
    return process(queue, message, producer_span_context(message))


reset_hook()
