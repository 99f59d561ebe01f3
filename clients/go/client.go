package tagq

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Client talks to a tagqd over gRPC. It is safe for concurrent use.
type Client struct {
	conn *grpc.ClientConn
	// The generated clients, for calls the wrapper does not cover.
	Queues   tagqv1.QueueServiceClient
	Messages tagqv1.MessageServiceClient
	Redrive  tagqv1.RedriveServiceClient
	Access   tagqv1.AccessServiceClient
}

// Dial connects to a tagqd at target (host:port). Without options the
// connection is plaintext. For a tagqd serving TLS (--tls-cert), pass
// WithTLS (a CA file) or WithCertPool, and WithClientCert when it requires
// client certificates (--tls-client-ca); they combine in any order, and
// Dial fails if their files do not load:
//
//	c, err := tagq.Dial("tagq.example:9090", tagq.WithTLS("ca.pem"),
//		tagq.WithClientCert("client.pem", "client-key.pem"))
//
// For a tagqd started with --auth, WithAPIKey sends an API key with every
// call (or a client certificate, WithClientCert, names the principal).
//
// Any other grpc.DialOption works too (grpc.WithTransportCredentials for
// credentials of your own). Answers of any size are accepted:
// a receive of 100 messages of 1 MiB is 100 MiB, and refusing it after the
// server handed the messages out would leave them in flight for nothing.
func Dial(target string, opts ...grpc.DialOption) (*Client, error) {
	opts, key := splitAPIKey(opts)
	opts, creds, err := splitTLS(opts)
	if err != nil {
		return nil, err
	}
	if creds != nil {
		opts = append(opts, creds)
	} else if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	if key != nil {
		opts = append(opts, key)
	}
	opts = append([]grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32),
		grpc.MaxCallSendMsgSize(math.MaxInt32))}, opts...)
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		return nil, err
	}
	return &Client{conn: conn, Queues: tagqv1.NewQueueServiceClient(conn),
		Messages: tagqv1.NewMessageServiceClient(conn), Redrive: tagqv1.NewRedriveServiceClient(conn),
		Access: tagqv1.NewAccessServiceClient(conn)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Error is an error the server returned.
type Error struct {
	Code     codes.Code
	Reason   string // ErrorInfo reason, e.g. QUEUE_NOT_FOUND
	Field    string // the request field at fault, if any
	Message  string
	Metadata map[string]string
}

func (e *Error) Error() string { return e.Message }

// Is makes errors.Is(err, &tagq.Error{Reason: "QUEUE_NOT_FOUND"}) match by reason.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Reason != "" && t.Reason == e.Reason
}

// WrapError turns an error of a generated client's call into *Error (for
// calls made through Client.Queues, Client.Messages, Client.Redrive or
// Client.Access).
func WrapError(err error) error { return wrap(err) }

// wrap turns a gRPC status error into *Error.
func wrap(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	e := &Error{Code: st.Code(), Message: st.Message()}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			e.Reason, e.Metadata = info.GetReason(), info.GetMetadata()
			e.Field = info.GetMetadata()["field"]
		}
	}
	return e
}

// ReasonOf is the server's ErrorInfo reason of err, or "".
func ReasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// Message is a received, peeked or dead message.
type Message = tagqv1.Message

// QueueOptions are optional queue attributes; zero values mean the
// server's defaults.
type QueueOptions struct {
	VisibilityTimeout time.Duration
	Delay             time.Duration
	ReceiveWait       time.Duration
	Retention         time.Duration
	MaxMessageBytes   int32
	// DeadLetterQueue makes this queue a dead-letter queue.
	DeadLetterQueue bool
	// TopicQueue makes this queue a topic queue: each tag receives a
	// topic's messages in send order, one in flight at a time; every
	// message needs Outgoing.Topic. Its dead-letter queue is a topic queue
	// too.
	TopicQueue bool
	// PriorityQueue makes this queue a priority queue: each message has a
	// priority 1-16 (Outgoing.Priority; 1 highest, 8 by default) and each
	// tag receives higher priority first, FIFO within a priority, except
	// that every 10th message it hands out is its oldest waiting one, so
	// no priority starves. Redeliveries come first. Not with TopicQueue.
	PriorityQueue bool
	// RedriveTo sends messages a tag received MaxReceiveCount times to
	// this dead-letter queue.
	RedriveTo       string
	MaxReceiveCount int32
	// NoDefaultTag creates the queue without the tag named "default": for
	// queues read only by named tags (a default tag nobody reads holds
	// every message until its retention expires).
	NoDefaultTag bool
	// MaxRetainedMessages and MaxRetainedBytes cap what the queue holds
	// (0: no cap). Beyond them a send is refused with QUEUE_FULL, or, with
	// DropOldest, the oldest messages are removed.
	MaxRetainedMessages int64
	MaxRetainedBytes    int64
	DropOldest          bool
	// WriteQuotaPerSecond caps the messages stored per second, and
	// ReadQuotaPerSecond those each tag receives per second (0: none);
	// beyond them calls fail with QUOTA_EXCEEDED.
	WriteQuotaPerSecond int32
	ReadQuotaPerSecond  int32
	// RetainAckedMessages keeps messages for the whole retention even once
	// every tag has finished them, so that a tag created later from the
	// oldest, or a tag sought back (SeekTagToTime), reads them again.
	RetainAckedMessages bool
	// Partitions splits the queue into that many streams (1-64; 0: one),
	// each in a Redis Cluster hash slot of its own, so that one queue's
	// throughput grows with the cluster's masters. Every tag reads every
	// partition; order holds per topic per tag, not across partitions
	// (README "Partitioned queues"). Fixed at creation; not with
	// DeadLetterQueue or PriorityQueue. The created queue reports it as
	// Queue.GetPartitions().
	Partitions int32
	// RetryBackoff is the queue's server-side retry policy (nil: none):
	// a message that comes back to a tag (its visibility ran out, or a nack
	// without a delay: NackWithBackoff, or a Consumer with ServerBackoff)
	// waits an exponential backoff with jitter first, for every client.
	RetryBackoff *RetryBackoff
}

// RetryBackoff is a queue's retry policy (README "Retry backoff"): after
// a tag's n-th receive, a message comes back after a backoff drawn from
// [b, min(Max, 2b)], b = min(Max, Min·2^(n-1)). Whole seconds, 0-12 h,
// Min <= Max.
type RetryBackoff struct {
	Min, Max time.Duration
}

// Proto is the policy as the API carries it.
func (r *RetryBackoff) Proto() *tagqv1.RetryPolicy {
	if r == nil {
		return nil
	}
	return &tagqv1.RetryPolicy{MinBackoffSeconds: int32(r.Min / time.Second), MaxBackoffSeconds: int32(r.Max / time.Second)}
}

func secs(d time.Duration) *int32 {
	if d == 0 {
		return nil
	}
	v := int32(d / time.Second)
	return &v
}

// CreateQueue creates a queue (with its default tag unless NoDefaultTag).
func (c *Client) CreateQueue(ctx context.Context, name string, o QueueOptions) (*tagqv1.Queue, error) {
	q := &tagqv1.Queue{Name: name, VisibilityTimeoutSeconds: secs(o.VisibilityTimeout), DelaySeconds: secs(o.Delay),
		ReceiveWaitSeconds: secs(o.ReceiveWait), MessageRetentionSeconds: secs(o.Retention), DeadLetterQueue: o.DeadLetterQueue,
		TopicQueue: o.TopicQueue, PriorityQueue: o.PriorityQueue, RetainAckedMessages: o.RetainAckedMessages}
	if o.MaxMessageBytes != 0 {
		q.MaxMessageBytes = &o.MaxMessageBytes
	}
	if o.RedriveTo != "" {
		q.RedrivePolicy = &tagqv1.RedrivePolicy{DeadLetterQueue: o.RedriveTo, MaxReceiveCount: o.MaxReceiveCount}
	}
	q.RetryPolicy = o.RetryBackoff.Proto()
	if o.MaxRetainedMessages != 0 {
		q.MaxRetainedMessages = &o.MaxRetainedMessages
	}
	if o.MaxRetainedBytes != 0 {
		q.MaxRetainedBytes = &o.MaxRetainedBytes
	}
	if o.DropOldest {
		q.OverflowPolicy = tagqv1.OverflowPolicy_OVERFLOW_POLICY_DROP_OLDEST
	}
	if o.WriteQuotaPerSecond != 0 {
		q.WriteQuotaPerSecond = &o.WriteQuotaPerSecond
	}
	if o.ReadQuotaPerSecond != 0 {
		q.ReadQuotaPerSecond = &o.ReadQuotaPerSecond
	}
	if o.Partitions != 0 {
		q.Partitions = &o.Partitions
	}
	r, err := c.Queues.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: q, NoDefaultTag: o.NoDefaultTag})
	return r.GetQueue(), wrap(err)
}

// GetQueue returns a queue with its state.
func (c *Client) GetQueue(ctx context.Context, name string) (*tagqv1.Queue, error) {
	r, err := c.Queues.GetQueue(ctx, &tagqv1.GetQueueRequest{Name: name})
	return r.GetQueue(), wrap(err)
}

// DeleteQueue deletes a queue; force also deletes a dead-letter queue that
// other queues still use.
func (c *Client) DeleteQueue(ctx context.Context, name string, force bool) error {
	_, err := c.Queues.DeleteQueue(ctx, &tagqv1.DeleteQueueRequest{Name: name, Force: force})
	return wrap(err)
}

// CreateTag adds a tag reading messages sent from now on; use Queues for
// start times and filters.
func (c *Client) CreateTag(ctx context.Context, queue, name string) (*tagqv1.Tag, error) {
	r, err := c.Queues.CreateTag(ctx, &tagqv1.CreateTagRequest{Queue: queue, Tag: &tagqv1.Tag{Name: name}})
	return r.GetTag(), wrap(err)
}

// GetTag returns a tag with its counters.
func (c *Client) GetTag(ctx context.Context, queue, name string) (*tagqv1.Tag, error) {
	r, err := c.Queues.GetTag(ctx, &tagqv1.GetTagRequest{Queue: queue, Name: name})
	return r.GetTag(), wrap(err)
}

// SeekTagToTime moves a tag's cursor to t (DESIGN S22): the retained
// messages sent at or after t are available again to that tag alone (a
// time before the oldest: all of them; t at or after now: none, only
// what is sent from now on), and what the tag had in flight is dropped
// from it (their receipt handles end). It returns the tag with its
// state after the seek.
func (c *Client) SeekTagToTime(ctx context.Context, queue, tag string, t time.Time) (*tagqv1.Tag, error) {
	r, err := c.Queues.SeekTag(ctx, &tagqv1.SeekTagRequest{Queue: queue, Name: tag,
		Target: &tagqv1.SeekTagRequest_Time{Time: timestamppb.New(t)}})
	return r.GetTag(), wrap(err)
}

// SeekTagToMessage moves a tag's cursor to just before message messageID,
// as SeekTagToTime does: that message and every later one are available
// again to the tag. A message the queue no longer retains is an *Error
// with Reason MESSAGE_NOT_FOUND.
func (c *Client) SeekTagToMessage(ctx context.Context, queue, tag, messageID string) (*tagqv1.Tag, error) {
	r, err := c.Queues.SeekTag(ctx, &tagqv1.SeekTagRequest{Queue: queue, Name: tag,
		Target: &tagqv1.SeekTagRequest_MessageId{MessageId: messageID}})
	return r.GetTag(), wrap(err)
}

// Outgoing is a message to send.
type Outgoing struct {
	Body []byte
	// Attributes: string values; use the generated client for binary ones.
	Attributes map[string]string
	// Delay overrides the queue's delay when non-zero.
	Delay time.Duration
	// DeduplicationID, when set (1-128 characters of printable ASCII),
	// makes the send idempotent for 5 minutes: a send with an id the queue
	// stored a message under within that time stores nothing and returns
	// that message's id. Set it to send again safely after an error whose
	// outcome is unknown (a timeout, a lost connection).
	DeduplicationID string
	// Topic is required on a topic queue and refused elsewhere: 1-128
	// characters of [A-Za-z0-9_.:-].
	Topic string
	// Priority on a priority queue: 1-16, 1 highest; 0: the default, 8.
	// Refused (unless 0) on other queues. A received message's
	// GetPriority() tells it.
	Priority int32
}

// dedupID is the API's form of Outgoing.DeduplicationID (nil: none).
func dedupID(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}

func attrs(m map[string]string) map[string]*tagqv1.MessageAttribute {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]*tagqv1.MessageAttribute, len(m))
	for k, v := range m {
		out[k] = &tagqv1.MessageAttribute{Value: &tagqv1.MessageAttribute_StringValue{StringValue: v}}
	}
	return out
}

// Send sends one message and returns its id.
func (c *Client) Send(ctx context.Context, queue string, m Outgoing) (string, error) {
	r, err := c.Messages.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: queue, Body: m.Body,
		Attributes: withTrace(ctx, attrs(m.Attributes)), DelaySeconds: secs(m.Delay), DeduplicationId: dedupID(m.DeduplicationID),
		Topic: m.Topic, Priority: m.Priority})
	return r.GetMessageId(), wrap(err)
}

// SendBatch sends up to 100 messages in one atomic step and returns their
// ids in order. If any entry is refused, the others are still stored and
// the error (an *BatchError) says which failed.
func (c *Client) SendBatch(ctx context.Context, queue string, msgs ...Outgoing) ([]string, error) {
	entries := make([]*tagqv1.SendMessageBatchEntry, len(msgs))
	for i, m := range msgs {
		entries[i] = &tagqv1.SendMessageBatchEntry{Id: fmt.Sprint(i), Body: m.Body, Attributes: withTrace(ctx, attrs(m.Attributes)),
			DelaySeconds: secs(m.Delay), DeduplicationId: dedupID(m.DeduplicationID), Topic: m.Topic,
			Priority: m.Priority}
	}
	r, err := c.Messages.SendMessageBatch(ctx, &tagqv1.SendMessageBatchRequest{Queue: queue, Entries: entries})
	if err != nil {
		return nil, wrap(err)
	}
	ids := make([]string, len(msgs))
	for _, s := range r.GetSuccessful() {
		var i int
		_, _ = fmt.Sscan(s.GetId(), &i)
		ids[i] = s.GetMessageId()
	}
	if len(r.GetFailed()) > 0 {
		return ids, &BatchError{Failed: r.GetFailed()}
	}
	return ids, nil
}

// BatchError lists the entries of a batch the server refused.
type BatchError struct{ Failed []*tagqv1.BatchResultError }

func (e *BatchError) Error() string {
	f := e.Failed[0]
	return fmt.Sprintf("%d batch entries failed; entry %s: %s (%s)", len(e.Failed), f.GetId(), f.GetMessage(), f.GetReason())
}

// ReceiveOptions controls a receive.
type ReceiveOptions struct {
	Tag string // "" = the queue's default tag
	Max int    // 1-100; 0 = 1
	// Wait is the long-poll wait (whole seconds, at most 20s).
	Wait time.Duration
	// Visibility overrides the tag's and queue's visibility timeout.
	Visibility time.Duration
}

// Receive returns up to o.Max messages, waiting up to o.Wait for the first.
func (c *Client) Receive(ctx context.Context, queue string, o ReceiveOptions) ([]*Message, error) {
	req := &tagqv1.ReceiveMessageRequest{Queue: queue, Tag: o.Tag, VisibilitySeconds: secs(o.Visibility)}
	if o.Max != 0 {
		m := int32(o.Max)
		req.MaxMessages = &m
	}
	w := int32(o.Wait / time.Second)
	req.WaitSeconds = &w
	r, err := c.Messages.ReceiveMessage(ctx, req)
	return r.GetMessages(), wrap(err)
}

// Delete acknowledges a message for the tag that received it. The
// receipt handle names its queue and tag: no queue is needed (with
// authentication on, the caller needs HANDLE on that queue and tag).
func (c *Client) Delete(ctx context.Context, receiptHandle string) error {
	_, err := c.Messages.DeleteMessage(ctx, &tagqv1.DeleteMessageRequest{ReceiptHandle: receiptHandle})
	return wrap(err)
}

// ChangeVisibility sets the message's deadline to now + d; 0 gives it back
// at once (a nack).
func (c *Client) ChangeVisibility(ctx context.Context, receiptHandle string, d time.Duration) error {
	_, err := c.Messages.ChangeMessageVisibility(ctx, &tagqv1.ChangeMessageVisibilityRequest{
		ReceiptHandle: receiptHandle, VisibilitySeconds: int32(d / time.Second)})
	return wrap(err)
}

// NackWithBackoff gives a message back after its queue's retry backoff
// (RetryBackoff; at once on a queue without one, or for a message at its
// max receive count, which is dead-lettered then).
func (c *Client) NackWithBackoff(ctx context.Context, receiptHandle string) error {
	_, err := c.Messages.ChangeMessageVisibility(ctx, &tagqv1.ChangeMessageVisibilityRequest{
		ReceiptHandle: receiptHandle, RetryBackoff: true})
	return wrap(err)
}

// SetRetryBackoff sets a queue's retry policy; nil removes it.
func (c *Client) SetRetryBackoff(ctx context.Context, queue string, r *RetryBackoff) (*tagqv1.Queue, error) {
	res, err := c.Queues.UpdateQueue(ctx, &tagqv1.UpdateQueueRequest{Queue: &tagqv1.Queue{Name: queue, RetryPolicy: r.Proto()},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"retry_policy"}}})
	return res.GetQueue(), wrap(err)
}

// Dead dead-letters a message now (an ACK for its tag) with a reason.
func (c *Client) Dead(ctx context.Context, receiptHandle, reason, description string) error {
	_, err := c.Messages.DeadMessage(ctx, &tagqv1.DeadMessageRequest{ReceiptHandle: receiptHandle,
		Reason: reason, Description: description})
	return wrap(err)
}

// Peek returns up to max messages available to tag without receiving them.
func (c *Client) Peek(ctx context.Context, queue, tag string, max int) ([]*Message, error) {
	msgs, _, err := c.PeekPage(ctx, queue, tag, max, "")
	return msgs, err
}

// PeekPage is one page of Peek: token is "" for the first page, else the
// next token of the page before; next is "" when no page follows. Pages
// follow the queue as it is when each is read (a listing, not a
// snapshot), and one may be empty.
func (c *Client) PeekPage(ctx context.Context, queue, tag string, max int, token string) (msgs []*Message, next string, err error) {
	m := int32(max)
	r, err := c.Messages.PeekMessage(ctx, &tagqv1.PeekMessageRequest{Queue: queue, Tag: tag, MaxMessages: &m, PageToken: token})
	return r.GetMessages(), r.GetNextPageToken(), wrap(err)
}
