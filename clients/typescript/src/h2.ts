// An HTTP/2 session manager whose cancelled calls reset their stream
// without half-closing it first.
import { constants, type ClientHttp2Stream, type ClientSessionRequestOptions, type OutgoingHttpHeaders } from "node:http2";

import { Http2SessionManager } from "@connectrpc/connect-node";

/**
 * connect-node cancels a call with `stream.close(NGHTTP2_CANCEL)`, and
 * Node's close() ends the writable side (END_STREAM) before it sends
 * RST_STREAM. A gRPC server may read that END_STREAM first and take it for
 * the client closing its side cleanly: tagqd's Consume would then give the
 * stream's unsettled messages back at once instead of leaving them to their
 * visibility deadlines (seen in about half of the aborts on loopback). Here
 * such a close destroys the stream through its `signal` option instead:
 * RST_STREAM(CANCEL) alone.
 */
export class CancellingSessionManager extends Http2SessionManager {
  override async request(
    method: string,
    path: string,
    headers: OutgoingHttpHeaders,
    options: Omit<ClientSessionRequestOptions, "signal">,
  ): Promise<ClientHttp2Stream> {
    const abort = new AbortController();
    const stream = await super.request(method, path, headers, { ...options, signal: abort.signal } as ClientSessionRequestOptions);
    const close = stream.close.bind(stream);
    stream.close = (code?: number, callback?: () => void) => {
      if (code !== undefined && code !== constants.NGHTTP2_NO_ERROR && !stream.writableEnded && !stream.closed) {
        if (callback) stream.once("close", callback);
        abort.abort(); // destroys the stream with an AbortError: RST_STREAM(CANCEL), no END_STREAM
        return;
      }
      close(code, callback);
    };
    return stream;
  }
}
