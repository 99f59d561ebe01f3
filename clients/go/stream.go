package tagq

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Shared by Consumer and Publisher: how a broken stream is told apart from
// a refused one, and how long to wait before opening the next.

// A stream the server ended with ReasonServerShuttingDown (reasons_gen.go)
// is reconnected by the Consumer and the Publisher (to another replica, or
// to this one once it is back).

// retryable reports whether a stream that ended with err is worth opening
// again: the server went away or is overloaded, as opposed to refusing the
// request itself (a missing queue, a bad argument, a method it lacks),
// which another attempt would only repeat.
func retryable(err error) bool {
	if err == nil || errors.Is(err, io.EOF) {
		return true // the stream ended without an error we asked for
	}
	var e *Error
	if !errors.As(err, &e) {
		return true // a transport failure without a status
	}
	switch e.Code {
	case codes.Unavailable, codes.Unknown, codes.Internal, codes.Aborted, codes.DeadlineExceeded,
		codes.Canceled, codes.ResourceExhausted:
		// ResourceExhausted is also "request too large", which is not
		// transient; the Publisher bounds frames well below the server's
		// limit, and the Consumer sends no large requests.
		return true
	}
	return false
}

// closed reports whether the Client was closed: its streams cannot come
// back, so there is nothing to retry.
func (c *Client) closed() bool { return c.conn.GetState() == connectivity.Shutdown }

// fromStreamError is a StreamError of a frame or settlement as *Error, as
// the unary calls return it.
func fromStreamError(se *tagqv1.StreamError) *Error {
	return &Error{Code: codes.Code(se.GetCode()), Reason: se.GetReason(), Field: se.GetField(), Message: se.GetMessage()}
}

// retryDelay is the wait before reconnect number n (0-based): doubling from
// 100 ms to 10 s, with jitter so that many clients of a restarting server
// do not come back at the same instant.
func retryDelay(n int) time.Duration {
	d := min(100*time.Millisecond<<min(n, 7), 10*time.Second)
	return time.Duration(float64(d) * (0.5 + 0.5*rand.Float64()))
}

// sleep waits d or until one of stop ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration, stop <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	case <-ctx.Done():
		return false
	}
}
