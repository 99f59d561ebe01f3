"""TagqError and the decoding of gRPC error details.

tagqd puts a ``google.rpc.Status`` in the ``grpc-status-details-bin`` trailer;
its details hold a ``google.rpc.ErrorInfo`` (domain "tagq", a reason, and the
metadata key "field"). Debian packages neither grpcio-status nor
googleapis-common-protos, so the two messages are declared here, with
googleapis' field numbers, in a private descriptor pool: wire-compatible,
parsed by protobuf itself, and never clashing with a real ``google.rpc``
installed beside this client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_ERROR_INFO_TYPE = "google.rpc.ErrorInfo"


@dataclass(frozen=True)
class BatchEntryError:
    """The failure of one entry of a batch call."""

    index: int
    """Position of the entry in the list given to the call."""
    reason: str
    """An ErrorInfo reason, e.g. MESSAGE_TOO_LARGE."""
    field: str
    """The request field at fault, e.g. ``entries[3].body``."""
    message: str


class TagqError(Exception):
    """An error returned by tagqd (or by the transport, with no reason).

    Attributes:
        code: the gRPC status code.
        reason: the ErrorInfo reason, e.g. ``QUEUE_NOT_FOUND``; "" if none.
        field: the request field at fault (ErrorInfo metadata "field"); "" if none.
        message: the status message.
        domain: the ErrorInfo domain ("tagq").
        metadata: all the ErrorInfo metadata.
    """

    def __init__(self, code: grpc.StatusCode, reason: str = "", field: str = "", message: str = "",
                 domain: str = "", metadata: Optional[Dict[str, str]] = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.field = field
        self.message = message
        self.domain = domain
        self.metadata: Dict[str, str] = dict(metadata or {})

    def __str__(self) -> str:
        head = self.reason or self.code.name
        where = f" [{self.field}]" if self.field else ""
        return f"{head}{where}: {self.message}"

    def __repr__(self) -> str:
        return (f"TagqError(code={self.code.name}, reason={self.reason!r}, field={self.field!r}, "
                f"message={self.message!r})")


class BatchError(TagqError):
    """Some entries of a batch call were refused (the others were done).

    ``reason`` and ``field`` are the first failure's; ``failures`` lists them
    all; ``message_ids`` has the id of each stored entry ("" where refused).
    """

    def __init__(self, failures: List[BatchEntryError], total: int, message_ids: Optional[List[str]] = None) -> None:
        first = failures[0]
        super().__init__(grpc.StatusCode.INVALID_ARGUMENT, first.reason, first.field,
                         f"{len(failures)} of {total} batch entries refused; entry {first.index}: {first.message}",
                         "tagq", {"field": first.field})
        self.failures = list(failures)
        self.message_ids = list(message_ids or [])


def _status_classes() -> Tuple[type, type]:
    """Builds google.rpc.Status and google.rpc.ErrorInfo in a private pool."""
    F = descriptor_pb2.FieldDescriptorProto
    fd = descriptor_pb2.FileDescriptorProto(name="tagq_python_client/google_rpc.proto", package="google.rpc",
                                            syntax="proto3")
    any_ = fd.message_type.add(name="Any")  # google.protobuf.Any's wire form
    any_.field.add(name="type_url", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    any_.field.add(name="value", number=2, type=F.TYPE_BYTES, label=F.LABEL_OPTIONAL)
    st = fd.message_type.add(name="Status")
    st.field.add(name="code", number=1, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    st.field.add(name="message", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    st.field.add(name="details", number=3, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED, type_name=".google.rpc.Any")
    ei = fd.message_type.add(name="ErrorInfo")
    ei.field.add(name="reason", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    ei.field.add(name="domain", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    ei.field.add(name="metadata", number=3, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                 type_name=".google.rpc.ErrorInfo.MetadataEntry")
    entry = ei.nested_type.add(name="MetadataEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)

    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(fd.SerializeToString())
    get_class = getattr(message_factory, "GetMessageClass", None)  # protobuf >= 4.22
    if get_class is None:
        factory = message_factory.MessageFactory(pool)
        get_class = factory.GetPrototype
    return (get_class(pool.FindMessageTypeByName("google.rpc.Status")),
            get_class(pool.FindMessageTypeByName("google.rpc.ErrorInfo")))


_Status, _ErrorInfo = _status_classes()


def from_rpc_error(err: grpc.RpcError) -> TagqError:
    """Turns a failed call into a TagqError, reading the ErrorInfo if any."""
    code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
    message = (err.details() if hasattr(err, "details") else str(err)) or ""
    reason = domain = ""
    metadata: Dict[str, str] = {}
    trailers = err.trailing_metadata() if hasattr(err, "trailing_metadata") else None
    for key, value in trailers or ():
        if key != "grpc-status-details-bin":
            continue
        try:
            status = _Status.FromString(value)
        except Exception:  # a malformed trailer: keep the code and message
            break
        for detail in status.details:
            if detail.type_url.rsplit("/", 1)[-1] == _ERROR_INFO_TYPE:
                info = _ErrorInfo.FromString(detail.value)
                reason, domain, metadata = info.reason, info.domain, dict(info.metadata)
                break
    return TagqError(code, reason, metadata.get("field", ""), message, domain, metadata)
