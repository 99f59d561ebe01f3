"""Python client of tagq, a gRPC-first message queue with independent tags.

    from tagq import Client

    with Client("127.0.0.1:9090") as c:
        c.create_queue("orders")
        c.create_tag("orders", "billing")
        c.send("orders", "order 1", attributes={"region": "eu"})
        for m in c.receive("orders", tag="billing", max_messages=10):
            c.delete(m.receipt_handle)

Server errors raise :class:`TagqError` with the gRPC code, the
``google.rpc.ErrorInfo`` reason (QUEUE_NOT_FOUND, RECEIPT_HANDLE_STALE, ...;
every one is a constant of :mod:`tagq.reasons`) and the request field at
fault.

The generated stubs live in ``clients/python/gen/tagq/v1`` (written by
``generate.sh``) and import each other as ``tagq.v1.*_pb2``, the module path
protoc derives from the proto package ``tagq.v1``. This package is also named
``tagq``, so putting ``gen/`` on ``sys.path`` would not work (the first
``tagq`` found wins) and rewriting protoc's imports would be fragile. Instead
``gen/tagq`` is added to this package's ``__path__``: ``tagq.v1`` is then the
generated package, imported by the stubs and by this wrapper alike, with
protoc's output left untouched.

Installed with pip (pyproject.toml), the stubs are the subpackage
``tagq/v1`` itself and there is no ``gen/`` beside the package.
"""

import os as _os

_gen = _os.path.join(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))), "gen", "tagq")
if _os.path.isdir(_gen):  # the source tree
    __path__.append(_gen)  # noqa: F821 (__path__ is set for a package)

from .client import Client  # noqa: E402
from .consumer import ConsumedMessage, Consumer, Poison, default_backoff  # noqa: E402
from .errors import BatchEntryError, BatchError, TagqError  # noqa: E402
from .models import AttributeValue, DeadLetter, Message  # noqa: E402
from .publisher import Publisher  # noqa: E402
from .tracing import SpanContext, producer_span_context  # noqa: E402

__all__ = ["AttributeValue", "BatchEntryError", "BatchError", "Client", "ConsumedMessage", "Consumer", "DeadLetter",
           "Message", "Poison", "Publisher", "SpanContext", "TagqError", "default_backoff", "producer_span_context"]
