"""API-key authentication: every call carries ``authorization: Bearer <key>``.

A client interceptor rather than call credentials, so that it works on
plaintext channels too (loopback, local development); over a network use it
with TLS, or the key crosses the network in the clear.
"""

from __future__ import annotations

import collections
from typing import Any, Callable

import grpc

_Details = collections.namedtuple(
    "_Details", ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression"))


class _CallDetails(_Details, grpc.ClientCallDetails):
    pass


class BearerInterceptor(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor,
                        grpc.StreamUnaryClientInterceptor, grpc.StreamStreamClientInterceptor):
    """Adds the API key to the metadata of every call, unary and streaming."""

    def __init__(self, api_key: str) -> None:
        self._md = ("authorization", "Bearer " + api_key)

    def _details(self, d: grpc.ClientCallDetails) -> _CallDetails:
        md = [m for m in (d.metadata or ()) if m[0] != "authorization"]
        md.append(self._md)
        return _CallDetails(d.method, d.timeout, md, d.credentials, getattr(d, "wait_for_ready", None),
                            getattr(d, "compression", None))

    def intercept_unary_unary(self, continuation: Callable, details: Any, request: Any) -> Any:
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation: Callable, details: Any, request: Any) -> Any:
        return continuation(self._details(details), request)

    def intercept_stream_unary(self, continuation: Callable, details: Any, request_iterator: Any) -> Any:
        return continuation(self._details(details), request_iterator)

    def intercept_stream_stream(self, continuation: Callable, details: Any, request_iterator: Any) -> Any:
        return continuation(self._details(details), request_iterator)
