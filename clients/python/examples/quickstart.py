"""Two tags read one queue; a missing tag is an error naming the field.

    python3 examples/quickstart.py 127.0.0.1:9090

Run by check_install.sh (in CI) against the installed package; it exits
non-zero if anything is not as shown in the comments.
"""

import os
import sys

from tagq import Client, TagqError


def main(addr: str) -> None:
    q = f"quickstart-{os.getpid()}"
    with Client(addr) as c:
        c.create_queue(q)
        try:
            c.create_tag(q, "billing")  # tags are independent readers
            c.create_tag(q, "shipping")
            sent = c.send(q, "order 1", attributes={"region": "eu"})
            for tag in ("billing", "shipping"):
                (m,) = c.receive(q, tag=tag, max_messages=10, wait_seconds=5)
                assert (m.id, m.body, m.attributes) == (sent, b"order 1", {"region": "eu"}), m
                print(tag, "got", m.body.decode())  # billing got order 1, shipping got order 1
                c.delete(m.receipt_handle)
            state = c.get_tag(q, "billing").state
            assert (state.available, state.in_flight, state.deleted_total) == (0, 0, 1), state
            try:
                c.get_tag(q, "no-such-tag")
                raise AssertionError("get_tag of a missing tag returned")
            except TagqError as e:
                print(e.reason, e.field)  # TAG_NOT_FOUND name
                assert (e.reason, e.field) == ("TAG_NOT_FOUND", "name"), repr(e)
        finally:
            c.delete_queue(q)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9090")
