package sqs

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// authLogInterval is the least time between two log lines about requests
// refused for their signature or credentials: one guessing credentials
// is seen (the line counts the refusals since the last one), and cannot
// fill the log.
const authLogInterval = 10 * time.Second

// authFailures counts and logs the requests refused for their signature
// or credentials (MissingAuthenticationToken, IncompleteSignature,
// InvalidClientTokenId, SignatureDoesNotMatch), so that credential
// guessing shows: tagq_sqs_auth_failures_total by code, and an info line
// at most every authLogInterval.
type authFailures struct {
	count *prometheus.CounterVec
	log   *slog.Logger
	now   func() time.Time

	mu         sync.Mutex
	last       time.Time // of the last line
	suppressed int       // refusals since it
}

func newAuthFailures(log *slog.Logger, now func() time.Time) *authFailures {
	count := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tagq_sqs_auth_failures_total",
		Help: "SQS requests refused for their signature or credentials, by SQS error code."}, []string{"code"})
	for _, e := range []*Error{errMissingAuth(""), errIncompleteSig(""), errInvalidClientKey(""), errSignatureMismatch("")} {
		count.WithLabelValues(e.Code)
	}
	return &authFailures{count: count, log: log, now: now}
}

// refused counts e, the refusal of r (signed with accessKey, "" when
// unknown), logs it unless a line was written within authLogInterval, and
// returns it.
func (a *authFailures) refused(r *http.Request, accessKey string, e *Error) *Error {
	a.count.WithLabelValues(e.Code).Inc()
	a.mu.Lock()
	now := a.now()
	if !a.last.IsZero() && now.Sub(a.last) < authLogInterval {
		a.suppressed++
		a.mu.Unlock()
		return e
	}
	suppressed := a.suppressed
	a.last, a.suppressed = now, 0
	a.mu.Unlock()
	// The access key id is a key's id, not its secret.
	a.log.Info("sqs request refused for its signature or credentials", "code", e.Code, "access_key_id", clip(accessKey),
		"remote", r.RemoteAddr, "message", clip(e.Message), "refused_since_last_line", suppressed)
	return e
}
