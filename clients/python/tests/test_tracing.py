"""Trace propagation: the W3C traceparent/tracestate formatting and parsing,
the attributes' round trip through a real tagqd (started by test_client's
setUpModule), and the consumer span hook. Every wait is bounded."""

from __future__ import annotations

import contextlib
import sys
import threading
import types
import unittest
from typing import Any, List, Optional, Tuple

try:  # run as tests.test_tracing (`python3 -m unittest` in clients/python)
    from . import test_client as harness
except ImportError:  # run as test_tracing (run_tests.sh: -s tests -t tests)
    import test_client as harness  # type: ignore[no-redef]
from tagq import Client, SpanContext, producer_span_context, tracing

# The example of the W3C Trace Context recommendation.
TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
SC = SpanContext("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", 1)


def setUpModule() -> None:
    harness.setUpModule()


def tearDownModule() -> None:
    harness.tearDownModule()


class W3CTest(unittest.TestCase):
    def test_format(self) -> None:
        self.assertEqual(tracing.format_traceparent(SC), TP)
        self.assertEqual(tracing.format_traceparent(SpanContext(SC.trace_id, SC.span_id, 0)),
                         "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
        for bad in (SpanContext("0" * 32, SC.span_id), SpanContext(SC.trace_id, "0" * 16),
                    SpanContext(SC.trace_id.upper(), SC.span_id), SpanContext(SC.trace_id[:-1], SC.span_id),
                    SpanContext(SC.trace_id, SC.span_id, 256)):
            with self.assertRaises(ValueError, msg=bad):
                tracing.format_traceparent(bad)

    def test_parse(self) -> None:
        self.assertEqual(tracing.parse_traceparent(TP), SC)
        self.assertTrue(tracing.parse_traceparent(TP).sampled)
        self.assertFalse(tracing.parse_traceparent(TP[:-2] + "00").sampled)
        self.assertEqual(tracing.parse_traceparent(" \t" + TP + " "), SC, "blanks around it")
        # A later version may add fields; its first four are read as 00's.
        self.assertEqual(tracing.parse_traceparent("cc" + TP[2:] + "-what-comes-next"), SC)
        self.assertEqual(tracing.parse_traceparent("01" + TP[2:]), SC)
        for bad in ("", "00", TP + "-extra", "ff" + TP[2:], TP.upper(), TP.replace("-", "_"),
                    "00-" + "0" * 32 + "-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-" + "0" * 16 + "-01",
                    "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01",
                    "0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TP[:-1], "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01"):
            self.assertIsNone(tracing.parse_traceparent(bad), bad)

    def test_tracestate(self) -> None:
        self.assertEqual(tracing.parse_traceparent(TP, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE").trace_state,
                         "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
        self.assertEqual(tracing.parse_tracestate(" rojo=1 ,, congo=2,\t"), "rojo=1,congo=2")
        self.assertEqual(tracing.parse_tracestate("tenant1@vendor=x"), "tenant1@vendor=x")
        self.assertEqual(tracing.parse_tracestate(",".join(f"k{i}=v" for i in range(32))).count(","), 31)
        for bad in ("Rojo=1", "rojo", "rojo=", "rojo=a,rojo=b", "rojo=a=b,=x", "rojo=a\x01",
                    ",".join(f"k{i}=v" for i in range(33))):
            self.assertEqual(tracing.parse_tracestate(bad), "", bad)
        # A bad tracestate is dropped; the traceparent stands.
        self.assertEqual(tracing.parse_traceparent(TP, "Bad=1"), SC)

    def test_inject_extract(self) -> None:
        attrs = {"region": "eu"}
        tracing.inject(attrs, SpanContext(SC.trace_id, SC.span_id, 1, "rojo=1"))
        self.assertEqual(attrs, {"region": "eu", "traceparent": TP, "tracestate": "rojo=1"})
        self.assertEqual(tracing.extract(attrs), SpanContext(SC.trace_id, SC.span_id, 1, "rojo=1"))
        own = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
        tracing.inject(own, SC)
        self.assertEqual(own, {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}, "its own wins")
        self.assertIsNone(tracing.extract({"traceparent": TP.encode()}), "a binary attribute is not a traceparent")
        self.assertIsNone(tracing.extract({}))


class HookTest(harness.ServerTest):
    def setUp(self) -> None:
        super().setUp()
        self.addCleanup(tracing.reset_hook)

    def receive_all(self, c: Client, q: str, n: int) -> dict:
        got: dict = {}
        for _ in range(20):
            for m in c.receive(q, max_messages=10, wait_seconds=1):
                got[m.text] = m
            if len(got) >= n:
                break
        self.assertEqual(len(got), n)
        return got

    def test_sends_carry_the_current_span(self) -> None:
        q = self.name("trace-send")
        self.c.create_queue(q)
        current: List[Optional[SpanContext]] = [None]
        tracing.set_hook(current=lambda: current[0])
        self.c.send(q, "untraced")
        current[0] = SpanContext(SC.trace_id, SC.span_id, 1, "rojo=00f067aa0ba902b7")
        self.c.send(q, "one", attributes={"region": "eu"})
        own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        self.c.send_batch(q, ["two", ("three", {"traceparent": own})])
        with self.c.publisher() as pub:
            pub.publish(q, "four").result(10)
        current[0] = SpanContext("0" * 32, SC.span_id)  # an invalid span: nothing added
        self.c.send(q, "invalid")

        got = self.receive_all(self.c, q, 6)
        both = {"traceparent": TP, "tracestate": "rojo=00f067aa0ba902b7"}
        self.assertEqual(got["untraced"].attributes, {})
        self.assertEqual(got["one"].attributes, {"region": "eu", **both})
        self.assertEqual(got["two"].attributes, both)
        self.assertEqual(got["three"].attributes, {"traceparent": own, "tracestate": "rojo=00f067aa0ba902b7"})
        self.assertEqual(got["four"].attributes, both)
        self.assertEqual(got["invalid"].attributes, {})
        self.assertEqual(producer_span_context(got["one"]), SpanContext(SC.trace_id, SC.span_id, 1, "rojo=00f067aa0ba902b7"))
        self.assertIsNone(producer_span_context(got["untraced"]))

    def test_worker_runs_handlers_in_the_process_hook(self) -> None:
        q = self.name("trace-consume")
        self.c.create_queue(q)
        tracing.set_hook(current=lambda: SC)
        self.c.send(q, "ok")
        self.c.send(q, "fails")
        tracing.set_hook(current=lambda: None)  # the worker's own sends are not the point
        calls: List[Tuple[str, str, Optional[SpanContext]]] = []
        outcomes: dict = {}
        lock = threading.Lock()
        both = threading.Event()

        @contextlib.contextmanager
        def process(queue: str, message: Any, producer: Optional[SpanContext]):
            with lock:
                calls.append((queue, message.text, producer))
            try:
                yield
            except Exception as e:
                with lock:
                    outcomes[message.text] = repr(e)
                raise
            else:
                with lock:
                    outcomes[message.text] = "ok"
            finally:
                with lock:
                    if len(outcomes) == 2:
                        both.set()

        tracing.set_hook(process=process)

        def handler(m: Any) -> None:
            if m.text == "fails":
                raise RuntimeError("handler failed")

        consumer = self.c.consume(q)
        t = threading.Thread(target=consumer.run, args=(handler,), kwargs={"workers": 2, "backoff": lambda n: 60.0},
                             daemon=True)
        t.start()
        self.assertTrue(both.wait(10), "both handlers ran")
        consumer.stop()
        t.join(10)
        self.assertFalse(t.is_alive())
        self.assertEqual(sorted(calls), [(q, "fails", SC), (q, "ok", SC)])
        self.assertEqual(outcomes, {"ok": "ok", "fails": "RuntimeError('handler failed')"})
        state = self.c.get_tag(q, "default").state
        self.assertEqual((state.deleted_total, state.in_flight), (1, 1), "ok acked, fails nacked for 60 s")


class OpenTelemetryHookTest(unittest.TestCase):
    """With an ``opentelemetry`` package importable, the default hook is
    OpenTelemetry's. The machine running the tests has no OpenTelemetry, so
    a stand-in with the few names of opentelemetry-api's trace module the
    hook uses checks the conversion both ways and the consumer span's
    arguments."""

    def setUp(self) -> None:
        calls: list = []
        trace = types.ModuleType("opentelemetry.trace")

        class OtelSpanContext:
            def __init__(self, trace_id: int, span_id: int, is_remote: bool, trace_flags: int = 0,
                         trace_state: Any = None) -> None:
                self.trace_id, self.span_id, self.is_remote = trace_id, span_id, is_remote
                self.trace_flags, self.trace_state = trace_flags, trace_state
                self.is_valid = trace_id != 0 and span_id != 0

        class TraceState:
            def __init__(self, header: str) -> None:
                self.header = header

            @classmethod
            def from_header(cls, headers: list) -> "TraceState":
                return cls(",".join(headers))

            def to_header(self) -> str:
                return self.header

            def __len__(self) -> int:
                return len(self.header)

        class Span:
            def __init__(self, sc: OtelSpanContext) -> None:
                self.sc = sc

            def get_span_context(self) -> OtelSpanContext:
                return self.sc

        class Tracer:
            def __init__(self, name: str) -> None:
                self.name = name

            def start_as_current_span(self, name: str, **kwargs: Any) -> Any:
                calls.append((self.name, name, kwargs))
                return contextlib.nullcontext()

        trace.SpanContext = OtelSpanContext
        trace.TraceState = TraceState
        trace.TraceFlags = int
        trace.Link = lambda context: ("link", context)
        trace.SpanKind = types.SimpleNamespace(CONSUMER="CONSUMER")
        trace.format_trace_id = lambda i: format(i, "032x")
        trace.format_span_id = lambda i: format(i, "016x")
        trace.get_tracer = Tracer
        self.current = OtelSpanContext(0, 0, False)
        trace.get_current_span = lambda: Span(self.current)
        pkg = types.ModuleType("opentelemetry")
        pkg.trace = trace
        self.calls = calls
        saved = {k: sys.modules.get(k) for k in ("opentelemetry", "opentelemetry.trace")}
        sys.modules.update({"opentelemetry": pkg, "opentelemetry.trace": trace})

        def restore() -> None:
            for k, v in saved.items():
                if v is None:
                    sys.modules.pop(k, None)
                else:
                    sys.modules[k] = v
            self.assertFalse(tracing.reset_hook(), "no OpenTelemetry on this machine after the test")

        self.addCleanup(restore)

    def test_default_hook_is_opentelemetrys(self) -> None:
        self.assertTrue(tracing.reset_hook())
        self.assertIsNone(tracing._outgoing(None), "no valid current span: nothing added")
        self.current = type(self.current)(int(SC.trace_id, 16), int(SC.span_id, 16), False, 1,
                                          sys.modules["opentelemetry.trace"].TraceState("rojo=1"))
        self.assertEqual(tracing._outgoing({"a": "b"}), {"a": "b", "traceparent": TP, "tracestate": "rojo=1"})

        m = types.SimpleNamespace(id="m-1", receive_count=2, attributes={"traceparent": TP, "tracestate": "rojo=1"})
        with tracing._processing("orders", m):
            pass
        self.assertEqual(len(self.calls), 1)
        tracer, name, kwargs = self.calls[0]
        self.assertEqual((tracer, name, kwargs["kind"]), ("tagq", "tagq process orders", "CONSUMER"))
        self.assertEqual(kwargs["attributes"], {"messaging.system": "tagq", "messaging.destination.name": "orders",
                                                "messaging.message.id": "m-1", "messaging.tagq.receive_count": 2})
        (kind, link), = kwargs["links"]
        self.assertEqual(kind, "link")
        self.assertEqual((link.trace_id, link.span_id, link.is_remote, link.trace_flags, link.trace_state.to_header()),
                         (int(SC.trace_id, 16), int(SC.span_id, 16), True, 1, "rojo=1"))

        with tracing._processing("orders", types.SimpleNamespace(id="m-2", receive_count=1, attributes={})):
            pass
        self.assertEqual(self.calls[1][2]["links"], [], "no producer: no link")


if __name__ == "__main__":
    unittest.main()
