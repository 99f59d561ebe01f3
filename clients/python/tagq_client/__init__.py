"""Python client of tagq, a gRPC-first message queue with independent tags.

    from tagq_client import Client

    c = Client("127.0.0.1:9090")
    c.create_queue("orders")
    c.create_tag("orders", "billing")
    c.send("orders", b"order 1", attributes={"region": "eu"})
    for m in c.receive("orders", tag="billing", max_messages=10):
        c.delete("orders", m.receipt_handle)

Server errors raise TagqError with the gRPC code, the ErrorInfo reason
(QUEUE_NOT_FOUND, RECEIPT_HANDLE_STALE, ...) and the request field at fault.
"""

import os
import sys

# The generated stubs import their package as "tagq.v1": put gen/ on the path.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gen"))

from .client import Client, DeadLetter, Message, TagqError  # noqa: E402

__all__ = ["Client", "DeadLetter", "Message", "TagqError"]
