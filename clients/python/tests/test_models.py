"""Unit tests of the client's conversions and error decoding (no server)."""

from __future__ import annotations

import datetime
import os
import sys
import unittest

import grpc

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # clients/python

from tagq import Message, TagqError  # noqa: E402
from tagq.client import _tag_filter, _timestamp  # noqa: E402
from tagq.errors import _ErrorInfo, _Status, from_rpc_error  # noqa: E402
from tagq.models import attributes_to_proto, body_bytes  # noqa: E402
from tagq.v1 import message_pb2, queue_pb2  # noqa: E402


class FakeRpcError(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, details: str, trailers: tuple) -> None:
        self._code, self._details, self._trailers = code, details, trailers

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details

    def trailing_metadata(self) -> tuple:
        return self._trailers


class ErrorDecodingTest(unittest.TestCase):
    def test_error_info_from_the_status_details_trailer(self) -> None:
        info = _ErrorInfo(reason="QUEUE_NOT_FOUND", domain="tagq", metadata={"field": "queue", "queue": "q"})
        status = _Status(code=5, message="no queue q")
        other = status.details.add(type_url="type.googleapis.com/google.rpc.RetryInfo", value=b"\x0a\x00")
        self.assertTrue(other.type_url)
        status.details.add(type_url="type.googleapis.com/google.rpc.ErrorInfo", value=info.SerializeToString())
        err = from_rpc_error(FakeRpcError(grpc.StatusCode.NOT_FOUND, "no queue q",
                                          (("other", "x"), ("grpc-status-details-bin", status.SerializeToString()))))
        self.assertIsInstance(err, TagqError)
        self.assertEqual((err.code, err.reason, err.field, err.message, err.domain),
                         (grpc.StatusCode.NOT_FOUND, "QUEUE_NOT_FOUND", "queue", "no queue q", "tagq"))
        self.assertEqual(err.metadata, {"field": "queue", "queue": "q"})
        self.assertEqual(str(err), "QUEUE_NOT_FOUND [queue]: no queue q")

    def test_without_details_or_with_a_malformed_trailer(self) -> None:
        for trailers in ((), (("grpc-status-details-bin", b"\xff\xff\xff"),)):
            err = from_rpc_error(FakeRpcError(grpc.StatusCode.UNAVAILABLE, "down", trailers))
            self.assertEqual((err.code, err.reason, err.field, err.message), (grpc.StatusCode.UNAVAILABLE, "", "", "down"))


class ConversionTest(unittest.TestCase):
    def test_attributes_and_bodies(self) -> None:
        attrs = attributes_to_proto({"s": "text", "b": b"\x00", "ba": bytearray(b"x")})
        self.assertEqual(attrs["s"].WhichOneof("value"), "string_value")
        self.assertEqual(attrs["b"].binary_value, b"\x00")
        self.assertEqual(attrs["ba"].binary_value, b"x")
        with self.assertRaises(TypeError):
            attributes_to_proto({"n": 1})  # type: ignore[dict-item]
        self.assertEqual(body_bytes("é"), "é".encode())
        self.assertEqual(body_bytes(b"\x01"), b"\x01")

    def test_message_from_proto(self) -> None:
        m = message_pb2.Message(message_id="1-0", body=b"hi", receipt_handle="h", tag="t", receive_count=2,
                                attributes={"a": message_pb2.MessageAttribute(string_value="v"),
                                            "b": message_pb2.MessageAttribute(binary_value=b"\x01")})
        m.send_time.FromSeconds(1_700_000_000)
        m.send_time.nanos = 123_456_789
        got = Message.from_proto(m)
        self.assertEqual((got.id, got.body, got.text, got.attributes, got.receive_count, got.dead_letter),
                         ("1-0", b"hi", "hi", {"a": "v", "b": b"\x01"}, 2, None))
        self.assertEqual(got.send_time, datetime.datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=datetime.timezone.utc))
        self.assertIsNone(got.first_receive_time)
        m.dead_letter.reason = "R"
        self.assertEqual(Message.from_proto(m).dead_letter.reason, "R")

    def test_start_times_and_filters(self) -> None:
        self.assertEqual((_timestamp(0).seconds, _timestamp(0).nanos), (0, 0))
        self.assertEqual((_timestamp(1.5).seconds, _timestamp(1.5).nanos), (1, 500_000_000))
        naive = _timestamp(datetime.datetime(2024, 1, 1, 0, 0, 0, 250))
        aware = _timestamp(datetime.datetime(2024, 1, 1, 1, 0, 0, 250,
                                             tzinfo=datetime.timezone(datetime.timedelta(hours=1))))
        self.assertEqual(naive, aware)
        self.assertEqual((naive.seconds, naive.nanos), (1_704_067_200, 250_000))
        f = _tag_filter({"region": "eu", "vip": None})
        self.assertEqual(f.operator, queue_pb2.TagFilter.OPERATOR_AND)
        self.assertEqual([(c.name, c.HasField("string_value"), c.string_value) for c in f.conditions],
                         [("region", True, "eu"), ("vip", False, "")])


if __name__ == "__main__":
    unittest.main()
