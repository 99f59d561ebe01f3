"""Tests of the Python client's TLS options against real tagqds serving TLS
(``--tls-cert``/``--tls-key``) and requiring client certificates
(``--tls-client-ca``). The certificates come from
``go run github.com/tagq/tagq/internal/tagqdtest/gencerts`` in the root module.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
import uuid
from typing import List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # clients/python, for `import tagq`
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

from tagq import Client, TagqError  # noqa: E402

_tmp: Optional[tempfile.TemporaryDirectory] = None
_procs: List[subprocess.Popen] = []
CERTS = ""
TLS = ""   # gRPC address of a tagqd serving TLS
MTLS = ""  # gRPC address of a tagqd requiring client certificates


def _start(binary: str, *args: str) -> str:
    proc = subprocess.Popen([binary, "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--sqs-addr", "127.0.0.1:0",
                             "--log-level", "warn", *args], stdout=subprocess.PIPE, text=True)
    _procs.append(proc)
    line = proc.stdout.readline()  # tagqd prints exactly one line once both listeners are up
    if not line.startswith("TAGQ_READY "):
        proc.kill()
        raise RuntimeError(f"tagqd did not start (first line {line!r}, exit {proc.wait()})")
    return dict(f.split("=", 1) for f in line.split()[1:])["grpc"]


def setUpModule() -> None:
    global _tmp, CERTS, TLS, MTLS
    _tmp = tempfile.TemporaryDirectory()
    go = shutil.which("go") or "/usr/local/go/bin/go"
    binary = os.environ.get("TAGQD_BIN", "")
    if not binary:
        binary = os.path.join(_tmp.name, "tagqd")
        subprocess.run([go, "build", "-o", binary, "./cmd/tagqd"], cwd=ROOT, check=True)
    CERTS = os.path.join(_tmp.name, "certs")
    os.mkdir(CERTS)
    subprocess.run([go, "run", "github.com/tagq/tagq/internal/tagqdtest/gencerts", CERTS], cwd=ROOT, check=True)
    server = ["--tls-cert", cert("server.pem"), "--tls-key", cert("server-key.pem")]
    TLS = _start(binary, *server)
    MTLS = _start(binary, *server, "--tls-client-ca", cert("tagq-ca.pem"))


def tearDownModule() -> None:
    codes = []
    for proc in _procs:
        proc.send_signal(signal.SIGTERM)
        codes.append(proc.wait(timeout=30))
        proc.stdout.close()
    if _tmp is not None:
        _tmp.cleanup()
    if any(codes):
        raise RuntimeError(f"tagqd exited {codes} on SIGTERM")


def cert(name: str) -> str:
    return os.path.join(CERTS, name)


def queue_name() -> str:
    return "py-tls-" + uuid.uuid4().hex[:12]


class TLSTest(unittest.TestCase):
    def client(self, target: str, **kw) -> Client:
        c = Client(target, timeout=10, **kw)
        self.addCleanup(c.close)
        return c

    def test_ca_file(self) -> None:
        c = self.client(TLS, ca_file=cert("tagq-ca.pem"))
        name = queue_name()
        c.create_queue(name)
        c.send(name, "over TLS")
        [m] = c.receive(name, max_messages=1)
        self.assertEqual(b"over TLS", m.body)

    def test_plaintext_is_refused(self) -> None:
        with self.assertRaises(TagqError):
            self.client(TLS).create_queue(queue_name())

    def test_other_ca_is_refused(self) -> None:
        # The server's own certificate is no CA: it cannot vouch for itself.
        with self.assertRaises(TagqError):
            self.client(TLS, ca_file=cert("client.pem")).create_queue(queue_name())

    def test_client_certificate(self) -> None:
        with self.assertRaises(TagqError):
            self.client(MTLS, ca_file=cert("tagq-ca.pem")).create_queue(queue_name())
        c = self.client(MTLS, ca_file=cert("tagq-ca.pem"), cert_file=cert("client.pem"),
                        key_file=cert("client-key.pem"))
        name = queue_name()
        self.assertEqual(name, c.create_queue(name).name)

    def test_bad_arguments(self) -> None:
        with self.assertRaises(ValueError):
            Client(TLS, cert_file=cert("client.pem"))
        with self.assertRaises(FileNotFoundError):
            Client(TLS, ca_file=cert("missing.pem"))


if __name__ == "__main__":
    unittest.main()
