"""Tests of the tagq Python client against a real tagqd on its embedded store.

setUpModule builds tagqd from this repo (``go build ./cmd/tagqd``) unless
TAGQD_BIN names a binary, starts it on ephemeral loopback ports and reads
its ``TAGQ_READY grpc=... http=...`` line; tearDownModule stops it with
SIGTERM and checks that it exits 0.
"""

from __future__ import annotations

import datetime
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request
import uuid
from typing import List, Optional

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # clients/python, for `import tagq`
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

from tagq import BatchError, Client, DeadLetter, Message, TagqError  # noqa: E402
from tagq.v1 import queue_pb2, redrive_pb2  # noqa: E402

_proc: Optional[subprocess.Popen] = None
_tmp: Optional[tempfile.TemporaryDirectory] = None
GRPC = ""
HTTP = ""


def setUpModule() -> None:
    global _proc, _tmp, GRPC, HTTP
    binary = os.environ.get("TAGQD_BIN", "")
    if not binary:
        go = shutil.which("go") or "/usr/local/go/bin/go"
        _tmp = tempfile.TemporaryDirectory()
        binary = os.path.join(_tmp.name, "tagqd")
        subprocess.run([go, "build", "-o", binary, "./cmd/tagqd"], cwd=ROOT, check=True)
    _proc = subprocess.Popen([binary, "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--sqs-addr", "127.0.0.1:0",
                              "--log-level", "warn"], stdout=subprocess.PIPE, text=True)
    line = _proc.stdout.readline()  # tagqd prints exactly one line once both listeners are up
    if not line.startswith("TAGQ_READY "):
        _proc.kill()
        raise RuntimeError(f"tagqd did not start (first line {line!r}, exit {_proc.wait()})")
    fields = dict(f.split("=", 1) for f in line.split()[1:])
    GRPC, HTTP = fields["grpc"], fields["http"]


def tearDownModule() -> None:
    if _proc is not None:
        _proc.send_signal(signal.SIGTERM)
        code = _proc.wait(timeout=30)
        _proc.stdout.close()
        if code != 0:
            raise RuntimeError(f"tagqd exited {code} on SIGTERM")
    if _tmp is not None:
        _tmp.cleanup()


def waiting_receives() -> float:
    """tagqd's gauge of receives that are long-polling now."""
    with urllib.request.urlopen(f"http://{HTTP}/metrics", timeout=5) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("tagq_receives_waiting "):
                return float(line.split()[1])
    return 0.0


class ServerTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = Client(GRPC, timeout=10)
        self.addCleanup(self.c.close)

    def name(self, what: str) -> str:
        """A queue name unique to this test run."""
        return f"py-{what}-{uuid.uuid4().hex[:8]}"


class ScenarioTest(ServerTest):
    def test_two_tags_dlq_delete_dead_and_read_the_dead_letter(self) -> None:
        """A DLQ; a queue redriving to it (max 2) with tags billing and
        shipping; 3 messages; both tags receive all; billing deletes,
        shipping dead-letters one; the DLQ holds it with its origin."""
        c = self.c
        dlq, q = self.name("dlq"), self.name("orders")
        self.assertTrue(c.create_queue(dlq, dead_letter_queue=True).dead_letter_queue)
        created = c.create_queue(q, redrive_policy={"dead_letter_queue": dlq, "max_receive_count": 2})
        self.assertEqual((created.redrive_policy.dead_letter_queue, created.redrive_policy.max_receive_count),
                         (dlq, 2))
        self.assertEqual(c.create_tag(q, "billing").name, "billing")
        c.create_tag(q, "shipping")

        before = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=5)
        ids = [c.send(q, "first"),
               c.send(q, b"second\x00"),
               c.send(q, "third", attributes={"region": "eu", "raw": b"\x00\xff"})]
        self.assertEqual(len(set(ids)), 3)

        billing = c.receive(q, tag="billing", max_messages=10)
        shipping = c.receive(q, tag="shipping", max_messages=10)
        for got, tag in ((billing, "billing"), (shipping, "shipping")):
            self.assertEqual([m.id for m in got], ids)
            self.assertEqual([m.body for m in got], [b"first", b"second\x00", b"third"])
            self.assertEqual([m.attributes for m in got], [{}, {}, {"region": "eu", "raw": b"\x00\xff"}])
            for m in got:
                self.assertIsInstance(m, Message)
                self.assertEqual((m.tag, m.receive_count, m.move_count, m.dead_letter), (tag, 1, 0, None))
                self.assertTrue(m.receipt_handle)
                self.assertIsInstance(m.send_time, datetime.datetime)
                self.assertGreater(m.send_time, before)
        self.assertEqual(billing[0].text, "first")
        self.assertNotEqual(billing[0].receipt_handle, shipping[0].receipt_handle)
        # Each tag has its own cursor: nothing more for either.
        self.assertEqual(c.receive(q, tag="billing", max_messages=10), [])

        for m in billing:
            c.delete(m.receipt_handle)  # the handle names its queue
        c.delete(billing[0].receipt_handle, queue=q)  # deleting twice is no error
        c.dead(shipping[2].receipt_handle, reason="BAD_ADDRESS", description="no such street")

        peeked = c.peek(dlq, max_messages=10)
        self.assertEqual(len(peeked), 1)
        d = peeked[0]
        self.assertEqual(d.body, b"third")
        self.assertEqual(d.receipt_handle, "")
        self.assertEqual(d.attributes, {"region": "eu", "raw": b"\x00\xff", "DLQ.sourceQueue": q})
        self.assertIsInstance(d.dead_letter, DeadLetter)
        self.assertEqual(d.dead_letter.source_queue_name, q)
        self.assertEqual(d.dead_letter.source_tag, "shipping")
        self.assertEqual(d.dead_letter.reason, "BAD_ADDRESS")
        self.assertEqual(d.dead_letter.description, "no such street")
        self.assertEqual(d.dead_letter.original_message_id, ids[2])
        self.assertEqual(d.dead_letter.original_receive_count, 1)
        self.assertIsInstance(d.dead_letter.dead_timestamp, datetime.datetime)

        received = c.receive(dlq, max_messages=10)  # the DLQ's default tag
        self.assertEqual([(m.id, m.dead_letter) for m in received], [(d.id, d.dead_letter)])
        c.delete(received[0].receipt_handle)

        b, s = c.get_tag(q, "billing").state, c.get_tag(q, "shipping").state
        self.assertEqual((b.deleted_total, b.in_flight, b.dead_total), (3, 0, 0))
        self.assertEqual((s.deleted_total, s.in_flight, s.dead_total), (0, 2, 1))
        self.assertEqual(list(c.get_queue(dlq).source_queues), [q])
        self.assertEqual([t.name for t in c.list_tags(q)], ["billing", "default", "shipping"])

    def test_max_receive_count_then_move_back(self) -> None:
        """The redrive policy dead-letters a message received max_receive_count
        times; a message move brings it back to the tag it died in."""
        c = self.c
        dlq, q = self.name("dlq"), self.name("redrive")
        c.create_queue(dlq, dead_letter_queue=True)
        c.create_queue(q, redrive_policy=(dlq, 2))
        c.create_tag(q, "worker")
        mid = c.send(q, "poison")
        for n in (1, 2):
            got = c.receive(q, "worker", visibility_seconds=0)
            self.assertEqual([(m.id, m.receive_count) for m in got], [(mid, n)])
        self.assertEqual(c.receive(q, "worker"), [])  # the third receive dead-letters it

        [d] = c.peek(dlq, max_messages=10)
        self.assertEqual((d.dead_letter.reason, d.dead_letter.source_tag, d.dead_letter.original_receive_count),
                         ("MAX_RECEIVE_COUNT_EXCEEDED", "worker", 2))

        task = c.start_message_move(dlq, source_queue=q)
        self.assertEqual((task.dead_letter_queue, task.source_queue), (dlq, q))
        deadline = time.time() + 15
        while True:
            [listed] = c.list_message_moves(dlq)
            if listed.state != redrive_pb2.MessageMoveTask.STATE_RUNNING:
                break
            self.assertLess(time.time(), deadline, "the move did not finish")
            time.sleep(0.05)
        self.assertEqual((listed.task_id, listed.state, listed.moved_messages),
                         (task.task_id, redrive_pb2.MessageMoveTask.STATE_COMPLETED, 1))
        [back] = c.receive(q, "worker", wait_seconds=5)
        self.assertEqual((back.body, back.receive_count, back.move_count), (b"poison", 1, 1))
        # Only the tag it died in gets it back; the default tag has just the original.
        self.assertEqual([(m.body, m.move_count) for m in c.receive(q, "default", max_messages=10)],
                         [(b"poison", 0)])
        c.delete_queue(dlq, force=True)
        self.assertFalse(c.get_queue(q).HasField("redrive_policy"))


class ErrorTest(ServerTest):
    def assertTagqError(self, err: TagqError, code: grpc.StatusCode, reason: str, field: str = "") -> None:
        self.assertEqual((err.code, err.reason, err.field), (code, reason, field), repr(err))
        self.assertEqual(err.domain, "tagq")
        self.assertIn(reason, str(err))

    def test_invalid_name(self) -> None:
        with self.assertRaises(TagqError) as e:
            self.c.create_queue("has space")
        self.assertTagqError(e.exception, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_NAME", "queue.name")

    def test_garbled_receipt_handle(self) -> None:
        q = self.name("errors")
        self.c.create_queue(q)
        for call in (lambda: self.c.delete("garbled"),
                     lambda: self.c.delete("garbled", queue=q),
                     lambda: self.c.change_visibility("garbled", 0),
                     lambda: self.c.dead("garbled", queue=q)):
            with self.assertRaises(TagqError) as e:
                call()
            self.assertTagqError(e.exception, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_RECEIPT_HANDLE",
                                 "receipt_handle")

    def test_not_found_stale_and_preconditions(self) -> None:
        c = self.c
        with self.assertRaises(TagqError) as e:
            c.receive(self.name("missing"))
        self.assertTagqError(e.exception, grpc.StatusCode.NOT_FOUND, "QUEUE_NOT_FOUND", "queue")
        self.assertIn("queue", e.exception.metadata)

        q = self.name("nack")
        c.create_queue(q)
        c.send(q, "m")
        first = c.receive(q)[0]
        c.change_visibility(first.receipt_handle, 0)  # a nack
        second = c.receive(q)[0]
        self.assertEqual(second.receive_count, 2)
        with self.assertRaises(TagqError) as e:
            c.change_visibility(first.receipt_handle, 30)
        self.assertTagqError(e.exception, grpc.StatusCode.FAILED_PRECONDITION, "RECEIPT_HANDLE_STALE",
                             "receipt_handle")
        with self.assertRaises(TagqError) as e:  # no redrive policy
            c.dead(second.receipt_handle)
        self.assertTagqError(e.exception, grpc.StatusCode.FAILED_PRECONDITION, "NOT_A_SOURCE_QUEUE")

        dlq, src = self.name("dlq"), self.name("src")
        c.create_queue(dlq, dead_letter_queue=True)
        c.create_queue(src, redrive_policy=(dlq, 3))
        with self.assertRaises(TagqError) as e:
            c.delete_queue(dlq)
        self.assertTagqError(e.exception, grpc.StatusCode.FAILED_PRECONDITION, "DEAD_LETTER_QUEUE_IN_USE", "force")
        c.delete_queue(dlq, force=True)
        with self.assertRaises(TagqError) as e:
            c.get_queue(dlq)
        self.assertTagqError(e.exception, grpc.StatusCode.NOT_FOUND, "QUEUE_NOT_FOUND", "name")

    def test_seek_tag(self) -> None:
        """S22: seek back to a time replays what the tag deleted, to a
        message id from that message; in-flight messages are dropped and
        their handles delete nothing; bad input names its field."""
        c, q = self.c, self.name("seek")
        c.create_queue(q)
        c.create_tag(q, "audit")
        ids = [c.send(q, body) for body in ("a", "b", "c")]
        got = c.receive(q, max_messages=10)
        self.assertEqual([m.body for m in got], [b"a", b"b", b"c"])
        c.delete(got[0].receipt_handle)

        t = c.seek_tag(q, "default", time=0)
        self.assertEqual((t.state.available, t.state.in_flight, t.state.deleted_total), (3, 0, 1))
        c.delete(got[1].receipt_handle)  # from before the seek: deletes nothing
        self.assertEqual(c.get_tag(q, "default").state.available, 3)

        t = c.seek_tag(q, "default", message_id=ids[1])
        self.assertEqual(t.state.available, 2)
        again = c.receive(q, max_messages=10)
        self.assertEqual([(m.body, m.receive_count) for m in again], [(b"b", 1), (b"c", 1)])
        t = c.seek_tag(q, "default", time=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1))
        self.assertEqual((t.state.available, t.state.in_flight), (0, 0))
        self.assertEqual(c.get_tag(q, "audit").state.available, 3, "another tag does not move")

        with self.assertRaises(TagqError) as e:
            c.seek_tag(q, "default", message_id="1-1")
        self.assertTagqError(e.exception, grpc.StatusCode.NOT_FOUND, "MESSAGE_NOT_FOUND", "message_id")
        with self.assertRaises(TagqError) as e:
            c.seek_tag(q, "default", message_id="yesterday")
        self.assertTagqError(e.exception, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT_RANGE", "message_id")
        with self.assertRaises(TagqError) as e:
            c.seek_tag(q, "missing", time=0)
        self.assertTagqError(e.exception, grpc.StatusCode.NOT_FOUND, "TAG_NOT_FOUND", "name")
        with self.assertRaises(TypeError):
            c.seek_tag(q, "default")
        with self.assertRaises(TypeError):
            c.seek_tag(q, "default", time=0, message_id=ids[0])

    def test_not_found_names_the_request_field(self) -> None:
        """The field is the request's, so a caller can tell a missing tag
        from a missing queue, and which argument named it."""
        c, q = self.c, self.name("nf")
        c.create_queue(q)
        with self.assertRaises(TagqError) as e:
            c.get_tag(q, "missing")
        self.assertTagqError(e.exception, grpc.StatusCode.NOT_FOUND, "TAG_NOT_FOUND", "name")
        self.assertEqual(e.exception.metadata.get("tag"), "missing")
        for call in (lambda: c.receive(q, tag="missing"), lambda: c.peek(q, tag="missing")):
            with self.assertRaises(TagqError) as e:
                call()
            self.assertTagqError(e.exception, grpc.StatusCode.NOT_FOUND, "TAG_NOT_FOUND", "tag")
        with self.assertRaises(TagqError) as e:
            c.get_tag(self.name("missing"), "t")
        self.assertTagqError(e.exception, grpc.StatusCode.NOT_FOUND, "QUEUE_NOT_FOUND", "queue")

    def test_client_side_and_transport_errors(self) -> None:
        with self.assertRaises(TypeError):
            self.c.create_queue(self.name("x"), no_such_attribute=1)
        with self.assertRaises(TypeError):
            self.c.send(self.name("x"), 42)  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            self.c.send(self.name("x"), "b", attributes={"n": 1})  # type: ignore[dict-item]
        with socket_closed() as target, Client(target, timeout=2) as dead:
            with self.assertRaises(TagqError) as e:
                dead.get_queue("q")
        self.assertIn(e.exception.code, (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED))
        self.assertEqual((e.exception.reason, e.exception.field), ("", ""))


class socket_closed:
    """A loopback address nothing listens on."""

    def __enter__(self) -> str:
        import socket
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        return f"127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        pass


class FeatureTest(ServerTest):
    def test_receives_answers_over_4_mib(self) -> None:
        c = self.c
        q = self.name("big")
        c.create_queue(q, max_message_bytes=1 << 20)
        c.send_batch(q, [bytes((1 << 20) - 16)] * 6)
        got = c.receive(q, max_messages=10)  # a 6 MiB answer; grpc's default limit is 4 MiB
        self.assertEqual(len(got), 6)

    def test_queue_attributes_update_and_list(self) -> None:
        c = self.c
        q = self.name("attrs")
        got = c.create_queue(q, visibility_timeout_seconds=7, message_retention_seconds=3600,
                             user_attributes={"team": "py"}, default_tag_name="main")
        self.assertEqual((got.visibility_timeout_seconds, got.message_retention_seconds, got.default_tag_name),
                         (7, 3600, "main"))
        updated = c.update_queue(q, delay_seconds=2, user_attributes={"team": "python"})
        self.assertEqual((updated.delay_seconds, dict(updated.user_attributes), updated.visibility_timeout_seconds),
                         (2, {"team": "python"}, 7))
        self.assertIn(q, [x.name for x in c.list_queues(prefix="py-attrs-")])
        self.assertIsInstance(c.get_queue(q), queue_pb2.Queue)
        c.send(q, "a")
        self.assertEqual(c.purge_queue(q), 1)
        c.delete_queue(q)
        self.assertNotIn(q, [x.name for x in c.list_queues(prefix="py-attrs-")])

    def test_no_default_tag_and_caps(self) -> None:
        c = self.c
        q = self.name("capped")
        got = c.create_queue(q, no_default_tag=True, max_retained_messages=1)
        self.assertEqual((got.default_tag_name, got.max_retained_messages, got.overflow_policy),
                         ("", 1, queue_pb2.OVERFLOW_POLICY_REJECT_NEW))
        c.send(q, "one")
        with self.assertRaises(TagqError) as e:
            c.send(q, "two")
        self.assertEqual((e.exception.reason, e.exception.code), ("QUEUE_FULL", grpc.StatusCode.RESOURCE_EXHAUSTED))
        with self.assertRaises(TagqError) as e:
            c.receive(q)
        self.assertEqual((e.exception.reason, e.exception.field), ("TAG_NOT_FOUND", "tag"))
        c.update_queue(q, overflow_policy=queue_pb2.OVERFLOW_POLICY_DROP_OLDEST)
        c.send(q, "three")
        self.assertEqual(c.get_queue(q).state.dropped_total, 1)
        c.delete_queue(q)

    def test_deduplication(self) -> None:
        """A deduplication_id, or the body on a queue with
        content_based_deduplication, stores one message; repeats return its id."""
        c = self.c
        q = self.name("dedup")
        c.create_queue(q)
        first = c.send(q, "a", deduplication_id="order-1")
        self.assertEqual(c.send(q, "a again", deduplication_id="order-1"), first)
        with c.publisher() as p:
            self.assertEqual(p.publish(q, "b", deduplication_id="order-1").result(timeout=10), first)
        with self.assertRaises(TagqError) as e:
            c.send(q, "x", deduplication_id="no spaces")
        self.assertEqual((e.exception.reason, e.exception.field), ("INVALID_ARGUMENT_RANGE", "deduplication_id"))
        got = c.get_queue(q)
        self.assertEqual((got.state.retained_messages, got.state.deduplicated_total), (1, 2))
        c.update_queue(q, content_based_deduplication=True)
        self.assertTrue(c.get_queue(q).content_based_deduplication)
        self.assertEqual(c.send(q, "same"), c.send(q, "same"))
        c.delete_queue(q)

    def test_topic_queue(self) -> None:
        """A topic queue hands out one message per topic at a time, in send order."""
        c = self.c
        q = self.name("topics")
        c.create_queue(q, topic_queue=True)
        c.send_batch(q, ["a1", "a2"], topic="a")
        c.send(q, "b1", topic="b")
        with c.publisher() as p:
            p.publish(q, "a3", topic="a").result(timeout=10)
        with self.assertRaises(TagqError) as e:
            c.send(q, "no topic")
        self.assertEqual((e.exception.reason, e.exception.field), ("INVALID_ARGUMENT_RANGE", "topic"))
        got = c.receive(q, max_messages=10)
        self.assertEqual([(m.topic, m.body) for m in got], [("a", b"a1"), ("b", b"b1")])
        self.assertEqual(c.receive(q, max_messages=10), [])
        c.delete(got[0].receipt_handle)
        self.assertEqual([m.body for m in c.receive(q, max_messages=10)], [b"a2"])
        c.delete_queue(q)

    def test_priority_queue(self) -> None:
        """A priority queue hands out priority 1 first, FIFO within a priority."""
        c = self.c
        q = self.name("priorities")
        c.create_queue(q, priority_queue=True)
        self.assertTrue(c.get_queue(q).priority_queue)
        c.send_batch(q, ["low-1", "low-2"], priority=16)
        c.send(q, "default")
        with c.publisher() as p:
            p.publish(q, "high", priority=1).result(timeout=10)
        with self.assertRaises(TagqError) as e:
            c.send(q, "bad", priority=17)
        self.assertEqual((e.exception.reason, e.exception.field), ("INVALID_ARGUMENT_RANGE", "priority"))
        got = c.receive(q, max_messages=10)
        self.assertEqual([(m.priority, m.body) for m in got],
                         [(1, b"high"), (8, b"default"), (16, b"low-1"), (16, b"low-2")])
        c.delete_queue(q)

    def test_partitioned_queue(self) -> None:
        """A queue of 4 partitions reports them; batches rotate over them and
        each tag receives every message once; bad counts name the field."""
        c = self.c
        q = self.name("parts")
        self.assertEqual(c.create_queue(q, partitions=4).partitions, 4)
        self.addCleanup(lambda: self.c.delete_queue(q))
        self.assertEqual(c.get_queue(q).partitions, 4)
        c.create_tag(q, "audit")
        want = []
        for b in range(4):
            batch = [f"m{b}-{i}" for i in range(3)]
            ids = c.send_batch(q, batch)
            self.assertEqual(len(set(ids)), 3)
            want += batch
        self.assertEqual(c.get_queue(q).state.retained_messages, 12, "a sum over the partitions")
        for tag in ("default", "audit"):
            got = []
            for _ in range(10):
                msgs = c.receive(q, tag, max_messages=10)
                for m in msgs:
                    c.delete(m.receipt_handle)
                got += [m.body.decode() for m in msgs]
                if len(got) >= len(want):
                    break
            self.assertEqual(sorted(got), sorted(want), tag)
            self.assertEqual(c.get_tag(q, tag).state.deleted_total, 12, tag)
        for attrs in ({"partitions": 65}, {"partitions": 0}, {"partitions": 2, "dead_letter_queue": True},
                      {"partitions": 2, "priority_queue": True}):
            with self.assertRaises(TagqError) as e:
                c.create_queue(self.name("parts-bad"), **attrs)
            self.assertEqual((e.exception.reason, e.exception.field), ("INVALID_ARGUMENT_RANGE", "queue.partitions"), attrs)
        with self.assertRaises(TypeError):
            c.update_queue(q, partitions=8)

    def test_batch_start_filter_peek_and_delay(self) -> None:
        c = self.c
        q = self.name("batch")
        c.create_queue(q)
        ids = c.send_batch(q, ["a", (b"b", {"region": "eu"}), ("c", {"region": "us", "vip": "1"})])
        self.assertEqual(len(ids), 3)
        self.assertTrue(all(ids))

        c.create_tag(q, "late")  # from now on: sees none of them
        c.create_tag(q, "replay", start=0, visibility_timeout=60)  # from the oldest retained
        c.create_tag(q, "eu", start=0, filter={"region": "eu"})
        c.create_tag(q, "any-region", start=datetime.datetime(1970, 1, 1), filter={"region": None})
        self.assertEqual(c.get_tag(q, "replay").visibility_timeout_seconds, 60)

        self.assertEqual(c.receive(q, "late", max_messages=10), [])
        self.assertEqual([m.id for m in c.receive(q, "replay", max_messages=10)], ids)
        self.assertEqual([m.body for m in c.receive(q, "eu", max_messages=10)], [b"b"])
        self.assertEqual([m.body for m in c.receive(q, "any-region", max_messages=10)], [b"b", b"c"])

        self.assertEqual([m.body for m in c.peek(q, message_ids=[ids[2], "0-0"])], [b"c"])
        self.assertEqual([m.body for m in c.peek(q, max_messages=2)], [b"a", b"b"])

        with self.assertRaises(BatchError) as e:
            c.send_batch(q, ["ok", ("bad", {"DLQ.x": "y"})])
        err = e.exception
        self.assertIsInstance(err, TagqError)
        self.assertEqual((err.reason, err.field), ("RESERVED_ATTRIBUTE", "entries[1].attributes[DLQ.x]"))
        self.assertEqual([(f.index, f.reason) for f in err.failures], [(1, "RESERVED_ATTRIBUTE")])
        self.assertTrue(err.message_ids[0])
        self.assertEqual(err.message_ids[1], "")

        c.send(q, "delayed", delay_seconds=60)
        self.assertEqual(c.get_tag(q, "late").state.delayed, 1)


class IterateTest(ServerTest):
    def test_iterate_yields_messages_sent_while_it_waits(self) -> None:
        c = self.c
        q = self.name("iter")
        c.create_queue(q)
        c.create_tag(q, "work")
        got: List[Message] = []
        errors: List[BaseException] = []

        def consume() -> None:
            try:
                with Client(GRPC) as consumer:
                    for m in consumer.iterate(q, "work", wait_seconds=10, auto_delete=True):
                        got.append(m)
                        if len(got) == 2:
                            break
            except BaseException as e:  # reported by the test thread
                errors.append(e)

        def wait_until_polling() -> None:
            deadline = time.time() + 10
            while waiting_receives() < 1:  # the consumer's receive is long-polling
                self.assertLess(time.time(), deadline, "the receive never started waiting")
                time.sleep(0.005)

        t = threading.Thread(target=consume, daemon=True)
        t.start()
        wait_until_polling()
        c.send(q, "late")
        deadline = time.time() + 10
        while len(got) < 1 and time.time() < deadline:
            time.sleep(0.005)
        wait_until_polling()  # asked for the next one: "late" is deleted, and it waits again
        c.send(q, "later")
        t.join(timeout=15)
        self.assertFalse(t.is_alive(), "iterate was not woken")
        self.assertEqual(errors, [])
        self.assertEqual([m.body for m in got], [b"late", b"later"])
        state = c.get_tag(q, "work").state
        # auto_delete deleted the first; the loop broke out of the second's body.
        self.assertEqual((state.deleted_total, state.in_flight), (1, 1))

    def test_iterate_hands_back_the_rest_of_a_batch_on_break(self) -> None:
        c = self.c
        q = self.name("iter-batch")
        c.create_queue(q)
        c.send_batch(q, ["1", "2", "3"])
        it = c.iterate(q, wait_seconds=1, max_messages=3)
        first = next(it)
        it.close()  # what a `break` does
        self.assertEqual(first.body, b"1")
        state = c.get_tag(q, "default").state
        self.assertEqual((state.in_flight, state.available), (1, 2))
        self.assertEqual([m.body for m in c.receive(q, max_messages=10)], [b"2", b"3"])


# Retry backoff (README "Retry backoff"): the policy set on create as a
# tuple or dict, shown, a nack with the queue's backoff coming back after it
# (a long poll ends then), bad ranges refused with the field named, removed.
class RetryTest(ServerTest):
    def test_retry_policy_and_nack_with_backoff(self) -> None:
        c = self.c
        q = self.name("retry")
        created = c.create_queue(q, retry_policy=(1, 1))
        self.assertEqual((created.retry_policy.min_backoff_seconds, created.retry_policy.max_backoff_seconds), (1, 1))
        c.send(q, b"job")
        [m] = c.receive(q, "default")
        t0 = time.monotonic()
        c.nack_with_backoff(m.receipt_handle)
        [again] = c.receive(q, "default", wait_seconds=10)
        self.assertGreaterEqual(time.monotonic() - t0, 0.9, "back only after the 1 s backoff")
        self.assertEqual(again.receive_count, 2)

        updated = c.update_queue(q, retry_policy={"min_backoff_seconds": 2, "max_backoff_seconds": 60})
        self.assertEqual(updated.retry_policy.max_backoff_seconds, 60)
        with self.assertRaises(TagqError) as e:
            c.update_queue(q, retry_policy=(5, 1))
        self.assertEqual((e.exception.code, e.exception.reason, e.exception.field),
                         (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT_RANGE", "queue.retry_policy.max_backoff_seconds"))
        self.assertEqual(c.get_queue(q).retry_policy.min_backoff_seconds, 2, "nothing changed")
        self.assertFalse(c.update_queue(q, retry_policy=None).HasField("retry_policy"))
        c.delete_queue(q)


if __name__ == "__main__":
    unittest.main()
