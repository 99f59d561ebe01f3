"""Tests of the Python client against a real tagqd (built from this repo,
or TAGQD_BIN), on its embedded store."""

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

from tagq_client import Client, TagqError  # noqa: E402

_proc = None
_addr = None
_http = None
_tmp = None


def setUpModule():
    global _proc, _addr, _http, _tmp
    binary = os.environ.get("TAGQD_BIN")
    if not binary:
        _tmp = tempfile.TemporaryDirectory()
        binary = os.path.join(_tmp.name, "tagqd")
        subprocess.run(["go", "build", "-o", binary, "./cmd/tagqd"], cwd=ROOT, check=True)
    _proc = subprocess.Popen([binary, "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--log-level", "warn"],
                             stdout=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        line = _proc.stdout.readline()
        if line.startswith("TAGQ_READY "):
            fields = dict(f.split("=", 1) for f in line.split()[1:])
            _addr, _http = fields["grpc"], fields["http"]
            return
        if not line and _proc.poll() is not None:
            break
    raise RuntimeError("tagqd did not start")


def tearDownModule():
    if _proc:
        _proc.send_signal(signal.SIGTERM)
        assert _proc.wait(timeout=30) == 0, "tagqd exited with an error"
    if _tmp:
        _tmp.cleanup()


def waiting_receives():
    with urllib.request.urlopen(f"http://{_http}/metrics") as r:
        for line in r.read().decode().splitlines():
            if line.startswith("tagq_receives_waiting "):
                return float(line.split()[1])
    return 0


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.c = Client(_addr)
        self.addCleanup(self.c.close)

    def test_two_tags_dlq_send_receive_delete_dead(self):
        """Issue 4's check: a queue with two tags and a DLQ; send, receive on
        both tags, delete, dead-letter one, read its dead-letter metadata."""
        c = self.c
        c.create_queue("py-dlq", dead_letter_queue=True)
        c.create_queue("py-orders", redrive_to="py-dlq", max_receive_count=3)
        c.create_tag("py-orders", "billing")
        c.create_tag("py-orders", "shipping")
        ids = [c.send("py-orders", "first"), c.send("py-orders", b"second"),
               c.send("py-orders", "third", attributes={"region": "eu", "raw": b"\x00\x01"})]

        billing = c.receive("py-orders", tag="billing", max_messages=10)
        shipping = c.receive("py-orders", tag="shipping", max_messages=10)
        self.assertEqual([m.message_id for m in billing], ids)
        self.assertEqual([m.body for m in shipping], [b"first", b"second", b"third"])
        self.assertEqual(shipping[2].attributes, {"region": "eu", "raw": b"\x00\x01"})
        self.assertEqual(billing[0].receive_count, 1)
        self.assertEqual(billing[0].tag, "billing")

        for m in billing:
            c.delete("py-orders", m.receipt_handle)
        c.dead("py-orders", shipping[2].receipt_handle, reason="BAD_ADDRESS", description="no such street")

        dead = c.peek("py-dlq")
        self.assertEqual(len(dead), 1)
        d = dead[0]
        self.assertEqual(d.body, b"third")
        self.assertEqual(d.attributes["DLQ.sourceQueue"], "py-orders")
        self.assertEqual(d.attributes["region"], "eu")
        self.assertEqual(d.dead_letter.source_queue_name, "py-orders")
        self.assertEqual(d.dead_letter.source_tag, "shipping")
        self.assertEqual(d.dead_letter.reason, "BAD_ADDRESS")
        self.assertEqual(d.dead_letter.description, "no such street")
        self.assertEqual(d.dead_letter.original_message_id, ids[2])
        self.assertEqual(d.dead_letter.original_receive_count, 1)

        b = c.get_tag("py-orders", "billing").state
        s = c.get_tag("py-orders", "shipping").state
        self.assertEqual((b.deleted_total, b.in_flight), (3, 0))
        self.assertEqual((s.dead_total, s.in_flight), (1, 2))
        self.assertEqual(c.get_queue("py-dlq").source_queues, ["py-orders"])

    def test_errors_carry_reason_and_field(self):
        with self.assertRaises(TagqError) as e:
            self.c.create_queue("has space")
        self.assertEqual(e.exception.reason, "INVALID_NAME")
        self.assertEqual(e.exception.field, "queue.name")
        self.c.create_queue("py-errors")
        with self.assertRaises(TagqError) as e:
            self.c.delete("py-errors", "garbled")
        self.assertEqual(e.exception.reason, "INVALID_RECEIPT_HANDLE")
        with self.assertRaises(TagqError) as e:
            self.c.receive("nope")
        self.assertEqual(e.exception.reason, "QUEUE_NOT_FOUND")

    def test_stale_handle_after_a_nack(self):
        c = self.c
        c.create_queue("py-nack")
        c.send("py-nack", "m")
        first = c.receive("py-nack")[0]
        c.change_visibility("py-nack", first.receipt_handle, 0)
        second = c.receive("py-nack")[0]
        self.assertEqual(second.receive_count, 2)
        with self.assertRaises(TagqError) as e:
            c.change_visibility("py-nack", first.receipt_handle, 30)
        self.assertEqual(e.exception.reason, "RECEIPT_HANDLE_STALE")

    def test_iterate_yields_a_message_sent_while_it_waits(self):
        c = self.c
        c.create_queue("py-iter")
        got = []

        def consume():
            for m in Client(_addr).iterate("py-iter", wait_seconds=10, auto_delete=True):
                got.append(m.body)
                return

        t = threading.Thread(target=consume)
        t.start()
        deadline = time.time() + 10
        while waiting_receives() < 1:  # tagqd's gauge: the receive is waiting
            self.assertLess(time.time(), deadline, "the receive never started waiting")
            time.sleep(0.005)
        c.send("py-iter", "late")
        t.join(timeout=15)
        self.assertFalse(t.is_alive(), "iterate was not woken")
        self.assertEqual(got, [b"late"])


if __name__ == "__main__":
    unittest.main()
