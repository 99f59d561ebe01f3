"""Tests of the Python client's ``api_key`` against a real tagqd started
with ``--auth`` and a bootstrap admin key."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
from typing import Optional

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # clients/python, for `import tagq`
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

from tagq import Client, TagqError  # noqa: E402
from tagq.v1 import access_pb2  # noqa: E402

ADMIN_KEY = "the Python client's bootstrap admin key, 32+"
_tmp: Optional[tempfile.TemporaryDirectory] = None
_proc: Optional[subprocess.Popen] = None
ADDR = ""


def setUpModule() -> None:
    global _tmp, _proc, ADDR
    _tmp = tempfile.TemporaryDirectory()
    binary = os.environ.get("TAGQD_BIN", "")
    if not binary:
        binary = os.path.join(_tmp.name, "tagqd")
        go = shutil.which("go") or "/usr/local/go/bin/go"
        subprocess.run([go, "build", "-o", binary, "./cmd/tagqd"], cwd=ROOT, check=True)
    key_file = os.path.join(_tmp.name, "admin.key")
    with open(key_file, "w") as f:
        f.write(ADMIN_KEY)
    _proc = subprocess.Popen([binary, "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--sqs-addr", "127.0.0.1:0", "--log-level", "warn",
                              "--auth", "--admin-key-file", key_file], stdout=subprocess.PIPE, text=True)
    line = _proc.stdout.readline()
    if not line.startswith("TAGQ_READY "):
        _proc.kill()
        raise RuntimeError(f"tagqd did not start (first line {line!r}, exit {_proc.wait()})")
    ADDR = dict(f.split("=", 1) for f in line.split()[1:])["grpc"]


def tearDownModule() -> None:
    code = 0
    if _proc is not None:
        _proc.send_signal(signal.SIGTERM)
        code = _proc.wait(timeout=30)
        _proc.stdout.close()
    if _tmp is not None:
        _tmp.cleanup()
    if code:
        raise RuntimeError(f"tagqd exited {code} on SIGTERM")


class AuthTest(unittest.TestCase):
    def client(self, **kw) -> Client:
        c = Client(ADDR, timeout=10, **kw)
        self.addCleanup(c.close)
        return c

    def test_api_key(self) -> None:
        with self.assertRaises(TagqError) as cm:
            self.client().create_queue("py-auth-none")
        self.assertEqual(grpc.StatusCode.UNAUTHENTICATED, cm.exception.code)
        self.assertEqual("UNAUTHENTICATED", cm.exception.reason)

        admin = self.client(api_key=ADMIN_KEY)
        admin.create_queue("py-auth")
        admin.access.CreatePrincipal(access_pb2.CreatePrincipalRequest(principal=access_pb2.Principal(name="py-app")))
        admin.access.SetPermission(access_pb2.SetPermissionRequest(grant=access_pb2.PermissionGrant(
            principal="py-app", queue="py-auth", permission=access_pb2.PERMISSION_SEND_RECEIVE)))
        key = admin.access.IssueKey(access_pb2.IssueKeyRequest(principal="py-app")).api_key

        app = self.client(api_key=key)
        app.send("py-auth", "unary")
        with app.publisher() as pub:  # a Publish stream carries the key too
            pub.publish("py-auth", "streamed").result(timeout=10)
        bodies = sorted(m.body for m in app.receive("py-auth", max_messages=10))
        self.assertEqual([b"streamed", b"unary"], bodies)
        with self.assertRaises(TagqError) as cm:
            app.get_queue("py-auth")
        self.assertEqual(grpc.StatusCode.PERMISSION_DENIED, cm.exception.code)
        self.assertEqual("GET_QUEUE_INFO", cm.exception.metadata["permission"])
        self.assertEqual("py-auth", cm.exception.metadata["queue"])


if __name__ == "__main__":
    unittest.main()
