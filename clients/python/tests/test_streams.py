"""Tests of the streaming consumer and the publisher.

Most run against a real tagqd, started (and stopped) by test_client's
setUpModule/tearDownModule. Two publisher tests use an in-process fake
MessageService to script what a real server does only by chance: answers out
of order, and a stream that ends UNAVAILABLE with frames unanswered.
Every wait is bounded.
"""

from __future__ import annotations

import concurrent.futures
import os
import signal
import subprocess
import threading
import time
import unittest
from typing import Dict, List

import grpc

try:  # run as tests.test_streams (`python3 -m unittest` in clients/python)
    from . import test_client as harness
except ImportError:  # run as test_streams (run_tests.sh: -s tests -t tests)
    import test_client as harness  # type: ignore[no-redef]
from tagq import Client, ConsumedMessage, Poison, TagqError, default_backoff
from tagq.v1 import message_pb2, message_pb2_grpc


def setUpModule() -> None:
    harness.setUpModule()


def tearDownModule() -> None:
    harness.tearDownModule()


class StreamTest(harness.ServerTest):
    def setUp(self) -> None:
        self.threads_before = set(threading.enumerate())
        self.c = Client(harness.GRPC, timeout=10)
        self.addCleanup(self.c.close)

    def assertThreadsEnd(self) -> None:
        """The client's own threads (tagq-*) are over when close/cancel/run
        return; grpc's (its request-iterator and channel-spin threads) end
        within 5 s."""
        ours = [t.name for t in threading.enumerate() if t not in self.threads_before and t.name.startswith("tagq-")]
        self.assertEqual(ours, [], "threads still running after close")
        deadline = time.monotonic() + 5
        while True:
            extra = [t for t in threading.enumerate() if t not in self.threads_before]
            if not extra:
                return
            if time.monotonic() > deadline:
                self.fail(f"threads still running: {[t.name for t in extra]}")
            time.sleep(0.01)

    def wait_for(self, what: str, cond, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > deadline:
                self.fail(f"timed out waiting for {what}")
            time.sleep(0.01)

    def take(self, consumer, n: int, timeout: float = 5.0) -> List[ConsumedMessage]:
        return [consumer.get(timeout=timeout) for _ in range(n)]


class ConsumeTest(StreamTest):
    def test_consume_and_ack_updates_the_tag_counters(self) -> None:
        c = self.c
        q = self.name("consume")
        c.create_queue(q)
        c.create_tag(q, "work")
        ids = c.send_batch(q, ["a", "b", ("c", {"k": "v"}), "d", "e"])
        consumer = c.consume(q, "work", visibility_seconds=30)
        got = self.take(consumer, 5)
        self.assertEqual([m.id for m in got], ids)
        self.assertEqual([m.body for m in got], [b"a", b"b", b"c", b"d", b"e"])
        self.assertEqual(got[2].attributes, {"k": "v"})
        self.assertTrue(all(isinstance(m, ConsumedMessage) for m in got))
        self.assertEqual({(m.tag, m.receive_count) for m in got}, {("work", 1)})
        self.assertEqual(len({m.delivery_id for m in got}), 5)
        self.assertTrue(all(m.receipt_handle for m in got))
        self.assertEqual(c.get_tag(q, "work").state.in_flight, 5)
        self.assertEqual(consumer.outstanding, 5)
        self.assertTrue(all(m.ack() for m in got))
        self.assertFalse(got[0].ack(), "a second settlement is refused")
        self.assertEqual(consumer.outstanding, 0)
        self.assertTrue(consumer.close())
        self.assertIsNone(consumer.error)
        # close() read the stream to its end: the acks are applied now.
        state = c.get_tag(q, "work").state
        self.assertEqual((state.deleted_total, state.in_flight, state.available), (5, 0, 0))
        self.assertIsNone(consumer.get(timeout=1))
        self.assertFalse(got[1].ack(), "settling after close")
        self.assertThreadsEnd()

    def test_outstanding_limit_is_never_exceeded(self) -> None:
        c = self.c
        q = self.name("credit")
        c.create_queue(q)
        sent = c.send_batch(q, [f"m{i}" for i in range(10)])
        held: List[ConsumedMessage] = []
        done: List[str] = []
        with c.consume(q, max_outstanding_messages=3, visibility_seconds=60) as consumer:
            while len(done) < 10:
                while len(held) < min(3, 10 - len(done)):
                    held.append(consumer.get(timeout=5))
                self.assertLessEqual(consumer.outstanding, 3)
                if len(held) == 3:
                    # Holding 3: the server pushes no 4th, and has 3 in flight.
                    with self.assertRaises(TimeoutError):
                        consumer.get(timeout=0.2)
                    self.assertEqual(c.get_tag(q, "default").state.in_flight, 3)
                m = held.pop(0)
                self.assertTrue(m.ack())
                done.append(m.id)
        self.assertEqual(done, sent)
        self.assertEqual(c.get_tag(q, "default").state.deleted_total, 10)

    def test_set_flow_raises_the_credit(self) -> None:
        c = self.c
        q = self.name("flow")
        c.create_queue(q)
        c.send_batch(q, ["1", "2", "3", "4"])
        with c.consume(q, max_outstanding_messages=1, visibility_seconds=60) as consumer:
            first = consumer.get(timeout=5)
            with self.assertRaises(TimeoutError):
                consumer.get(timeout=0.2)
            self.assertTrue(consumer.set_flow(max_outstanding_messages=3))
            more = self.take(consumer, 2)  # without any ack
            self.assertEqual([m.body for m in [first] + more], [b"1", b"2", b"3"])
            with self.assertRaises(TimeoutError):
                consumer.get(timeout=0.2)
            self.assertEqual(consumer.outstanding, 3)

    def test_broken_stream_leaves_messages_in_flight_until_their_deadline(self) -> None:
        c = self.c
        q = self.name("broken")
        c.create_queue(q)
        ids = c.send_batch(q, ["1", "2", "3", "4"])
        consumer = c.consume(q, visibility_seconds=1)
        got = self.take(consumer, 4)
        got[0].ack()
        got[1].ack()
        self.wait_for("the acks", lambda: c.get_tag(q, "default").state.deleted_total == 2)
        consumer.cancel()  # mid-batch: 2 of 4 settled
        self.assertIsNone(consumer.error)
        self.assertFalse(got[2].ack(), "the stream is gone")
        broke = time.monotonic()
        # Not given back: still in flight (until their 1 s deadlines).
        self.assertEqual(c.receive(q, max_messages=10, wait_seconds=0), [])
        back: List = []
        while len(back) < 2 and time.monotonic() - broke < 5:
            back += c.receive(q, max_messages=10, wait_seconds=1)
        self.assertEqual(sorted(m.id for m in back), ids[2:])
        self.assertEqual({m.receive_count for m in back}, {2})
        self.assertGreater(time.monotonic() - broke, 0.3)
        self.assertThreadsEnd()

    def test_close_gives_unsettled_messages_back_at_once(self) -> None:
        c = self.c
        q = self.name("close")
        c.create_queue(q)
        ids = c.send_batch(q, ["1", "2", "3"])
        consumer = c.consume(q, visibility_seconds=600)
        got = self.take(consumer, 3)
        got[0].ack()
        self.assertTrue(consumer.close())
        back = c.receive(q, max_messages=10, wait_seconds=0)
        self.assertEqual([(m.id, m.receive_count) for m in back], [(ids[1], 2), (ids[2], 2)])
        self.assertEqual(c.get_tag(q, "default").state.deleted_total, 1)
        self.assertThreadsEnd()

    def test_nack_with_a_sub_second_delay(self) -> None:
        c = self.c
        q = self.name("nack")
        c.create_queue(q)
        mid = c.send(q, "again")
        with c.consume(q, visibility_seconds=60) as consumer:
            first = consumer.get(timeout=5)
            t0 = time.monotonic()
            self.assertTrue(first.nack(0.2))
            with self.assertRaises(ValueError):
                first.nack(-1)
            second = consumer.get(timeout=5)
            waited = time.monotonic() - t0
            self.assertEqual((second.id, second.receive_count), (mid, 2))
            self.assertGreaterEqual(waited, 0.18)
            self.assertLess(waited, 3)
            self.assertNotEqual(second.delivery_id, first.delivery_id)
            t0 = time.monotonic()
            second.nack()  # 0: at once
            third = consumer.get(timeout=5)
            self.assertLess(time.monotonic() - t0, 0.18)
            self.assertEqual((third.id, third.receive_count), (mid, 3))
            third.ack()

    def test_dead_sends_it_to_the_dlq_with_its_reason(self) -> None:
        c = self.c
        dlq, q = self.name("dlq"), self.name("poison")
        c.create_queue(dlq, dead_letter_queue=True)
        c.create_queue(q, redrive_policy=(dlq, 5))
        mid = c.send(q, "bad")
        with c.consume(q) as consumer:  # the tag's visibility timeout, looked up
            m = consumer.get(timeout=5)
            self.assertTrue(m.dead("BAD_ORDER", "no such sku"))
        [d] = c.peek(dlq, max_messages=10)
        self.assertEqual(d.body, b"bad")
        self.assertEqual((d.dead_letter.reason, d.dead_letter.description, d.dead_letter.source_tag,
                          d.dead_letter.original_message_id), ("BAD_ORDER", "no such sku", "default", mid))
        self.assertEqual(c.get_tag(q, "default").state.dead_total, 1)

    def test_renewal_keeps_messages_hidden_up_to_the_max_extension(self) -> None:
        c = self.c
        q = self.name("renew")
        c.create_queue(q)
        c.send(q, "slow")
        with c.consume(q, visibility_seconds=1, max_outstanding_messages=1) as consumer:
            m = consumer.get(timeout=5)
            time.sleep(2.5)  # 2.5 visibility timeouts
            self.assertEqual(c.receive(q, wait_seconds=0), [], "renewed: still hidden")
            m.ack()
        self.assertEqual(c.get_tag(q, "default").state.deleted_total, 1)

        c.send(q, "slower")
        # Renewed while less than 2.5 s old (its last deadline about 2.3 s
        # after it came), then let go: its visibility ends, it no longer
        # holds the stream's only credit, and the stream gets it again.
        with c.consume(q, visibility_seconds=1, max_extension_seconds=2.5, max_outstanding_messages=1) as consumer:
            m = consumer.get(timeout=5)
            t0 = time.monotonic()
            again = consumer.get(timeout=8)
            self.assertEqual((again.id, again.receive_count), (m.id, 2))
            # Unrenewed it would be back after 1 s.
            self.assertGreater(time.monotonic() - t0, 1.8)
            again.ack()

    def test_manual_extend_without_automatic_renewal(self) -> None:
        c = self.c
        q = self.name("extend")
        c.create_queue(q)
        c.send_batch(q, ["kept", "let go"])
        with c.consume(q, visibility_seconds=1, max_extension_seconds=0, max_outstanding_messages=2) as consumer:
            kept, let_go = self.take(consumer, 2)
            # Pause: let go's visibility ends and frees its credit; the
            # unary receives below, not the stream, are to get it.
            self.assertTrue(consumer.set_flow(max_outstanding_messages=0))
            self.assertTrue(kept.extend(10))
            with self.assertRaises(ValueError):
                kept.extend(0)
            back = []
            t0 = time.monotonic()
            while not back and time.monotonic() - t0 < 5:
                back = c.receive(q, max_messages=10, wait_seconds=1)
            time.sleep(0.5)
            back += c.receive(q, max_messages=10, wait_seconds=0)
            self.assertEqual([m.id for m in back], [let_go.id])  # kept is still hidden
            kept.ack()

    def test_unknown_queue_or_tag(self) -> None:
        missing = self.name("missing")
        with self.assertRaises(TagqError) as e:
            self.c.consume(missing)  # looks up the visibility timeout
        self.assertEqual((e.exception.code, e.exception.reason), (grpc.StatusCode.NOT_FOUND, "QUEUE_NOT_FOUND"))
        consumer = self.c.consume(missing, visibility_seconds=5)
        with self.assertRaises(TagqError) as e:
            next(iter(consumer))
        self.assertEqual((e.exception.code, e.exception.reason), (grpc.StatusCode.NOT_FOUND, "QUEUE_NOT_FOUND"))
        self.assertIs(consumer.error, e.exception)
        self.assertFalse(consumer.close())

        q = self.name("notag")
        self.c.create_queue(q)
        consumer = self.c.consume(q, "nope", visibility_seconds=5, max_outstanding_messages=0)
        with self.assertRaises(TagqError) as e:
            consumer.get(timeout=5)
        # Limits are checked before the tag.
        self.assertEqual((e.exception.reason, e.exception.field),
                         ("INVALID_ARGUMENT_RANGE", "open.max_outstanding_messages"))
        consumer.close()
        consumer = self.c.consume(q, "nope", visibility_seconds=5)
        with self.assertRaises(TagqError) as e:
            consumer.get(timeout=5)
        self.assertEqual(e.exception.reason, "TAG_NOT_FOUND")
        consumer.close()
        self.assertThreadsEnd()


class RunTest(StreamTest):
    def test_run_acks_retries_with_backoff_and_dead_letters(self) -> None:
        c = self.c
        dlq, q = self.name("dlq"), self.name("run")
        c.create_queue(dlq, dead_letter_queue=True)
        c.create_queue(q, redrive_policy=(dlq, 10))
        c.send_batch(q, ["ok1", "ok2", "flaky", "poison"])
        consumer = c.consume(q, max_outstanding_messages=3, visibility_seconds=30)
        seen: Dict[str, List[float]] = {}
        counts: Dict[str, List[int]] = {}
        lock = threading.Lock()
        handled = threading.Event()

        def handler(m: ConsumedMessage) -> None:
            with lock:
                seen.setdefault(m.text, []).append(time.monotonic())
                counts.setdefault(m.text, []).append(m.receive_count)
                if len(seen) == 4 and len(seen["flaky"]) == 2:
                    handled.set()
            if m.text == "poison":
                raise Poison("BAD_INPUT", "cannot parse")
            if m.text == "flaky" and m.receive_count == 1:
                raise ValueError("try again")
            if handled.is_set():
                consumer.stop()  # from a handler: this message is still acked

        errors: List[BaseException] = []

        def run() -> None:
            try:
                consumer.run(handler, workers=3)
            except BaseException as e:  # reported by the test thread
                errors.append(e)

        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join(timeout=15)
        self.assertFalse(t.is_alive(), "run did not return after stop")
        self.assertEqual(errors, [])
        self.assertEqual(counts["flaky"], [1, 2])
        gap = seen["flaky"][1] - seen["flaky"][0]
        self.assertGreaterEqual(gap, 0.75)  # default backoff: 1 s ± 20 %
        self.assertLess(gap, 5)
        self.assertEqual((counts["ok1"], counts["ok2"], counts["poison"]), ([1], [1], [1]))
        state = c.get_tag(q, "default").state
        self.assertEqual((state.deleted_total, state.dead_total, state.in_flight, state.available), (3, 1, 0, 0))
        [d] = c.peek(dlq, max_messages=10)
        self.assertEqual((d.body, d.dead_letter.reason, d.dead_letter.description),
                         (b"poison", "BAD_INPUT", "cannot parse"))
        self.assertTrue(handled.is_set())
        self.assertThreadsEnd()

    def test_run_stops_from_another_thread_and_gives_back_the_buffered(self) -> None:
        c = self.c
        q = self.name("run-stop")
        c.create_queue(q)
        c.send_batch(q, [str(i) for i in range(5)])
        consumer = c.consume(q, max_outstanding_messages=5, visibility_seconds=600)
        started = threading.Event()
        release = threading.Event()

        def handler(m: ConsumedMessage) -> None:
            started.set()
            release.wait(10)

        t = threading.Thread(target=consumer.run, args=(handler,), daemon=True)
        t.start()
        self.assertTrue(started.wait(5))
        self.wait_for("5 pushed", lambda: consumer.outstanding == 5)
        consumer.stop()
        release.set()  # the handler in progress finishes and is acked
        t.join(10)
        self.assertFalse(t.is_alive())
        state = c.get_tag(q, "default").state
        # One handled and acked; the 4 buffered ones went back at once.
        self.assertEqual((state.deleted_total, state.in_flight, state.available), (1, 0, 4))
        self.assertThreadsEnd()

    def test_run_raises_the_stream_error(self) -> None:
        consumer = self.c.consume(self.name("missing"), visibility_seconds=5)
        with self.assertRaises(TagqError) as e:
            consumer.run(lambda m: None, workers=2)
        self.assertEqual(e.exception.reason, "QUEUE_NOT_FOUND")
        self.assertThreadsEnd()

    def test_default_backoff(self) -> None:
        for count, base in ((0, 1), (1, 1), (2, 2), (3, 4), (9, 256), (10, 300), (4000, 300)):
            for _ in range(20):
                self.assertTrue(0.8 * base <= default_backoff(count) <= 1.2 * base, (count, base))


class ShutdownTest(StreamTest):
    def test_server_shutdown_ends_run_with_server_shutting_down(self) -> None:
        """A tagqd of its own, stopped with SIGTERM while run() holds a
        message: the handler finishes within the drain grace, and run()
        raises UNAVAILABLE SERVER_SHUTTING_DOWN."""
        binary = os.environ.get("TAGQD_BIN") or os.path.join(harness._tmp.name, "tagqd")
        proc = subprocess.Popen([binary, "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--sqs-addr", "127.0.0.1:0",
                                 "--log-level", "error"], stdout=subprocess.PIPE, text=True)
        self.addCleanup(lambda: proc.poll() is None and (proc.kill(), proc.wait(5)))
        self.addCleanup(proc.stdout.close)
        line = proc.stdout.readline()
        self.assertTrue(line.startswith("TAGQ_READY "), line)
        target = dict(f.split("=", 1) for f in line.split()[1:])["grpc"]
        with Client(target, timeout=5) as c:
            q = self.name("shutdown")
            c.create_queue(q)
            c.send_batch(q, ["1", "2"])
            consumer = c.consume(q, max_outstanding_messages=2, visibility_seconds=30)
            started, release = threading.Event(), threading.Event()
            handled: List[bytes] = []

            def handler(m: ConsumedMessage) -> None:
                started.set()
                release.wait(10)
                handled.append(m.body)

            errors: List[BaseException] = []

            def run() -> None:
                try:
                    consumer.run(handler)
                except BaseException as e:  # reported by the test thread
                    errors.append(e)

            t = threading.Thread(target=run, daemon=True)
            t.start()
            self.assertTrue(started.wait(5))
            proc.send_signal(signal.SIGTERM)
            time.sleep(0.2)
            release.set()
            t.join(10)
            self.assertFalse(t.is_alive(), "run did not end with the stream")
            self.assertEqual(len(errors), 1, errors)
            e = errors[0]
            self.assertIsInstance(e, TagqError)
            self.assertEqual((e.code, e.reason), (grpc.StatusCode.UNAVAILABLE, "SERVER_SHUTTING_DOWN"))
            self.assertIs(consumer.error, e)
            self.assertIn(b"1", handled)
        self.assertEqual(proc.wait(30), 0)
        self.assertThreadsEnd()


class PublisherTest(StreamTest):
    def test_500_messages_from_several_threads(self) -> None:
        c = self.c
        q = self.name("pub")
        c.create_queue(q)
        futures: Dict[str, concurrent.futures.Future] = {}
        lock = threading.Lock()
        with c.publisher(max_in_flight=4) as pub:
            def publish(worker: int) -> None:
                for i in range(100):
                    body = f"w{worker}-{i}"
                    f = pub.publish(q, body, attributes={"worker": str(worker)})
                    with lock:
                        futures[body] = f

            threads = [threading.Thread(target=publish, args=(w,)) for w in range(5)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(10)
            ids = {body: f.result(timeout=10) for body, f in futures.items()}
            self.assertLess(pub.frames_sent, 100)  # batched
        self.assertEqual(len(ids), 500)
        self.assertEqual(len(set(ids.values())), 500)
        got: Dict[str, str] = {}
        deadline = time.monotonic() + 10
        while len(got) < 500 and time.monotonic() < deadline:
            for m in c.receive(q, max_messages=100, wait_seconds=1):
                got[m.text] = m.id
                self.assertEqual(m.attributes, {"worker": m.text[1]})
        self.assertEqual(got, ids)
        self.assertThreadsEnd()

    def test_frames_by_count_bytes_and_flush(self) -> None:
        c = self.c
        q = self.name("frames")
        c.create_queue(q)
        pub = c.publisher(max_messages=100, max_delay=10)
        futs = [pub.publish(q, str(i)) for i in range(250)]
        self.assertTrue(futs[0].result(timeout=5))  # a full frame goes at once
        self.assertFalse(futs[249].done())  # the last 50 wait for max_delay
        self.assertTrue(pub.flush(timeout=5))
        self.assertEqual(pub.frames_sent, 3)
        self.assertTrue(pub.close(timeout=5))
        with self.assertRaises(RuntimeError):
            pub.publish(q, "late")

        with c.publisher(max_bytes=1000, max_delay=10) as pub:
            futs = [pub.publish(q, bytes(300), delay_seconds=0) for _ in range(10)]
        self.assertTrue(all(f.done() for f in futs))
        self.assertEqual(pub.frames_sent, 4)  # 3 of ~310 bytes a frame
        self.assertEqual(c.get_queue(q).state.default_tag.available, 260)
        self.assertThreadsEnd()

    def test_missing_queue_fails_every_future(self) -> None:
        missing = self.name("missing")
        with self.c.publisher(max_messages=10) as pub:
            futs = [pub.publish(missing, str(i)) for i in range(25)]
            for f in futs:
                e = f.exception(timeout=5)
                self.assertIsInstance(e, TagqError)
                self.assertEqual((e.code, e.reason), (grpc.StatusCode.NOT_FOUND, "QUEUE_NOT_FOUND"))
            self.assertEqual(pub.frames_sent, 3)

    def test_a_refused_entry_fails_only_its_future(self) -> None:
        q = self.name("entry")
        self.c.create_queue(q, max_message_bytes=1024)
        with self.c.publisher(max_delay=5) as pub:
            good = pub.publish(q, "fine")
            reserved = pub.publish(q, "x", attributes={"DLQ.x": "y"})
            big = pub.publish(q, bytes(2000))
            with self.assertRaises(TypeError):
                pub.publish(q, 42)  # type: ignore[arg-type]
        self.assertTrue(good.result(timeout=5))
        e = reserved.exception(timeout=5)
        self.assertEqual((e.code, e.reason, e.field),
                         (grpc.StatusCode.INVALID_ARGUMENT, "RESERVED_ATTRIBUTE", "attributes[DLQ.x]"))
        e = big.exception(timeout=5)
        self.assertEqual((e.reason, e.field), ("MESSAGE_TOO_LARGE", "body"))
        self.assertEqual(pub.frames_sent, 1)
        self.assertEqual([m.body for m in self.c.receive(q, max_messages=10)], [b"fine"])


class FakePublish(message_pb2_grpc.MessageServiceServicer):
    """Stream 1: reads 3 frames and answers them in reverse order, then
    reads 2 more, answers the first and ends UNAVAILABLE. Later streams
    answer every frame as it comes. Message ids are "id-" + body."""

    def __init__(self, scripted: bool = True, linger: float = 0.0) -> None:
        self.scripted = scripted  # stream 1 as above; else every stream answers as frames come
        self.linger = linger  # seconds between the client's CloseSend and the end of the stream
        self.lock = threading.Lock()
        self.streams: List[List[str]] = []  # bodies seen, per stream

    def _answer(self, req: message_pb2.PublishRequest) -> message_pb2.PublishResponse:
        return message_pb2.PublishResponse(seq=req.seq, successful=[
            message_pb2.SendMessageBatchResult(id=e.id, message_id="id-" + e.body.decode()) for e in req.entries])

    def Publish(self, request_iterator, context):
        with self.lock:
            seen: List[str] = []
            self.streams.append(seen)
            n = len(self.streams)

        def read() -> message_pb2.PublishRequest:
            req = next(request_iterator)
            with self.lock:
                seen.extend(e.body.decode() for e in req.entries)
            return req

        if n == 1 and self.scripted:
            first = [read() for _ in range(3)]
            for req in reversed(first):
                yield self._answer(req)
            a, _ = read(), read()
            yield self._answer(a)
            context.abort(grpc.StatusCode.UNAVAILABLE, "going away")
        while True:
            try:
                req = read()
            except StopIteration:
                time.sleep(self.linger)
                return
            yield self._answer(req)


class FakeServerPublisherTest(unittest.TestCase):
    def setUp(self) -> None:
        self.serve(FakePublish())

    def serve(self, fake: FakePublish) -> None:
        self.fake = fake
        self.server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=4))
        message_pb2_grpc.add_MessageServiceServicer_to_server(self.fake, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.addCleanup(lambda: self.server.stop(None).wait(5))
        self.c = Client(f"127.0.0.1:{port}", timeout=5)
        self.addCleanup(self.c.close)

    def test_out_of_order_answers_and_resend_after_unavailable(self) -> None:
        with self.c.publisher(max_messages=1, max_in_flight=3) as pub:
            futs = [pub.publish("q", f"m{i}") for i in range(8)]
            self.assertEqual([f.result(timeout=10) for f in futs], [f"id-m{i}" for i in range(8)])
        self.assertEqual(len(self.fake.streams), 2)
        first, second = self.fake.streams
        self.assertEqual(first[:5], ["m0", "m1", "m2", "m3", "m4"])
        # m4 (read, not answered) and whatever followed are sent again;
        # answered frames are not.
        self.assertEqual(second[0], "m4")
        self.assertEqual(sorted(set(first) | set(second)), [f"m{i}" for i in range(8)])
        self.assertFalse(set(second) & {"m0", "m1", "m2", "m3"})
        self.assertGreaterEqual(pub.frames_sent, 9)

    def test_close_reads_the_stream_to_its_end(self) -> None:
        self.server.stop(None).wait(5)
        self.serve(FakePublish(scripted=False, linger=0.3))
        pub = self.c.publisher()
        futs = [pub.publish("q", f"m{i}") for i in range(3)]
        self.assertEqual([f.result(timeout=5) for f in futs], ["id-m0", "id-m1", "id-m2"])
        t0 = time.monotonic()
        self.assertTrue(pub.close(timeout=5))
        self.assertGreaterEqual(time.monotonic() - t0, 0.25)  # the server ended the stream 0.3 s after CloseSend
        self.assertEqual([t.name for t in threading.enumerate() if t.name.startswith("tagq-")], [])

    def test_gives_up_after_retry_seconds(self) -> None:
        self.server.stop(None).wait(5)
        with self.c.publisher(retry_seconds=0.5) as pub:
            f = pub.publish("q", "m")
            e = f.exception(timeout=10)
        self.assertIsInstance(e, TagqError)
        self.assertEqual(e.code, grpc.StatusCode.UNAVAILABLE)


if __name__ == "__main__":
    unittest.main()
