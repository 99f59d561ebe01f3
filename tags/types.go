package tags

import "time"

// Queue attribute defaults and limits (DESIGN.md §2).
const (
	DefaultVisibilityTimeout = 30
	DefaultRetention         = 345600
	DefaultMaxMessageBytes   = 262144
	DefaultTagName           = "default"

	MaxDelaySeconds      = 900
	MaxVisibilitySeconds = 43200
	MaxWaitSeconds       = 20
	MinRetentionSeconds  = 60
	MaxRetentionSeconds  = 1209600
	MinMaxMessageBytes   = 1024
	MaxMaxMessageBytes   = 1048576
	MaxBatchEntries      = 100
	MaxTagsPerQueue      = 100
	// MaxPartitions bounds QueueConfig.Partitions (see there).
	MaxPartitions       = 64
	MaxAttributes       = 32
	MaxAttributeNameLen = 256
	MaxFilterConditions = 10
	MaxUserAttributes   = 64
	MaxPageSize         = 1000
	MaxMaxReceiveCount  = 1000
	DefaultPageSize     = 100
	// MaxRetainedMessagesLimit and MaxRetainedBytesLimit bound the caps a
	// queue may set (0 is no cap).
	MaxRetainedMessagesLimit = 1_000_000_000
	MaxRetainedBytesLimit    = 1 << 50
	// MaxDeduplicationIDLen bounds a send's deduplication id (1-128
	// characters of printable ASCII, as in SQS).
	MaxDeduplicationIDLen = 128
)

// DeduplicationWindow is how long a queue remembers a deduplication id
// from the first store of a message under it (not renewed by duplicates):
// within it, a send with the same id stores nothing and answers with the
// first message's id and send time. SQS's and Yandex MQ's 5 minutes.
const DeduplicationWindow = 5 * time.Minute

// Overflow says what a send does when it would take a queue over
// MaxRetainedMessages or MaxRetainedBytes.
type Overflow int

const (
	// OverflowUnspecified is OverflowRejectNew on create.
	OverflowUnspecified Overflow = iota
	// OverflowRejectNew refuses the entries that do not fit (QUEUE_FULL).
	OverflowRejectNew
	// OverflowDropOldest stores them and removes the oldest messages until
	// the queue is within its caps, counting each in the expired total of
	// every tag that had not finished it.
	OverflowDropOldest
)

// QueueConfig is a queue's attributes. Zero-valued pointer fields mean
// "default" on create.
type QueueConfig struct {
	Name                     string
	DelaySeconds             *int32
	VisibilityTimeoutSeconds *int32
	ReceiveWaitSeconds       *int32
	MessageRetentionSeconds  *int32
	MaxMessageBytes          *int32
	DeadLetterQueue          bool
	TopicQueue               bool
	// PriorityQueue: each message has a priority 1-16 (1 highest, default
	// 8) and each tag hands out higher priority first, FIFO within a
	// priority, every PriorityOldestEvery-th message being its oldest held
	// one instead (see DESIGN's priority queue note). Fixed at creation;
	// not with TopicQueue.
	PriorityQueue       bool
	RetainAckedMessages bool
	UserAttributes      map[string]string
	DefaultTagName      string
	// NoDefaultTag creates the queue with no tag; a receive must then name
	// a tag (DefaultTagName must be "").
	NoDefaultTag bool
	// RedrivePolicy sends messages a tag received MaxReceiveCount times to
	// a dead-letter queue (S7).
	RedrivePolicy *RedrivePolicy
	// MaxRetainedMessages and MaxRetainedBytes cap what the queue holds
	// (nil or 0: no cap); Overflow says what a send beyond them does.
	MaxRetainedMessages *int64
	MaxRetainedBytes    *int64
	Overflow            Overflow
	// ContentBasedDeduplication gives a message sent without a
	// deduplication id the SHA-256 of its body (hex) as one.
	ContentBasedDeduplication bool
	// WriteQuotaPerSecond caps the messages stored per second (nil or 0:
	// none); ReadQuotaPerSecond the messages each tag receives per second
	// (nil or 0: none; a tag may have its own). See quota.go.
	WriteQuotaPerSecond *int32
	ReadQuotaPerSecond  *int32
	// RetryPolicy delays redeliveries (visibility run out, or a nack that
	// asks for the policy) by an exponential backoff with jitter, per tag;
	// nil: none (redelivered at once).
	RetryPolicy *RetryPolicy
	// Partitions splits the queue into that many streams, each in a
	// storage shard of its own (a Redis Cluster hash slot), so that one
	// queue's throughput grows with the cluster's masters (nil or 1: one,
	// the default; up to MaxPartitions). Every tag reads every partition.
	// Fixed at creation; not for dead-letter queues or priority queues.
	Partitions *int32
}

// RedrivePolicy names a dead-letter queue and how many receives by one tag
// a message gets before it goes there.
type RedrivePolicy struct {
	DeadLetterQueue string
	MaxReceiveCount int32
}

// RetryPolicy is a queue's server-side retry backoff (see policy.go): a
// message that a tag received n times and that comes back (its visibility
// ran out, or it was nacked without a delay of its own) is available to
// that tag again only after a backoff drawn from [Backoff(n), 2·Backoff(n)]
// capped at MaxBackoffSeconds.
type RetryPolicy struct {
	MinBackoffSeconds int32
	MaxBackoffSeconds int32
}

// Queue is a stored queue with its attributes resolved and its state.
type Queue struct {
	Name                     string
	DelaySeconds             int32
	VisibilityTimeoutSeconds int32
	ReceiveWaitSeconds       int32
	MessageRetentionSeconds  int32
	MaxMessageBytes          int32
	DeadLetterQueue          bool
	TopicQueue               bool
	PriorityQueue            bool
	RetainAckedMessages      bool
	UserAttributes           map[string]string
	DefaultTagName           string
	CreateTime               time.Time
	UpdateTime               time.Time
	RedrivePolicy            *RedrivePolicy
	// RetryPolicy: see QueueConfig (nil: none).
	RetryPolicy *RetryPolicy
	// SourceQueues are the queues whose redrive policy names this queue.
	SourceQueues []string
	// Caps (0: none) and what a send beyond them does.
	MaxRetainedMessages int64
	MaxRetainedBytes    int64
	Overflow            Overflow
	// ContentBasedDeduplication: see QueueConfig.
	ContentBasedDeduplication bool
	// Rate quotas in messages a second (0: none; see quota.go).
	WriteQuotaPerSecond int32
	ReadQuotaPerSecond  int32
	// Partitions: see QueueConfig (1 when not partitioned).
	Partitions int32

	// State; filled by GetQueue and ListQueues.
	RetainedMessages int64
	RetainedBytes    int64
	// DroppedTotal counts messages removed by OverflowDropOldest.
	DroppedTotal int64
	// DeduplicatedTotal counts sends answered as duplicates within the
	// deduplication window (nothing stored).
	DeduplicatedTotal int64
	TagCount          int
	// DefaultTag is nil when the queue has no default tag.
	DefaultTag *TagState
}

// QueueUpdate changes the non-nil attributes of a queue.
type QueueUpdate struct {
	DelaySeconds             *int32
	VisibilityTimeoutSeconds *int32
	ReceiveWaitSeconds       *int32
	MessageRetentionSeconds  *int32
	MaxMessageBytes          *int32
	RetainAckedMessages      *bool
	UserAttributes           map[string]string // replaced whole when SetUserAttributes
	SetUserAttributes        bool
	// RedrivePolicy replaces the policy when SetRedrivePolicy; nil removes it.
	RedrivePolicy    *RedrivePolicy
	SetRedrivePolicy bool
	// RetryPolicy replaces the retry policy when SetRetryPolicy; nil
	// removes it.
	RetryPolicy    *RetryPolicy
	SetRetryPolicy bool
	// Caps and overflow policy; nil leaves them. A cap of 0 removes it.
	MaxRetainedMessages *int64
	MaxRetainedBytes    *int64
	Overflow            *Overflow
	// ContentBasedDeduplication turns content-based deduplication on or off.
	ContentBasedDeduplication *bool
	// Rate quotas; nil leaves them, 0 removes them.
	WriteQuotaPerSecond *int32
	ReadQuotaPerSecond  *int32
}

// StartKind says where a new tag starts reading.
type StartKind int

const (
	// StartNow reads messages sent after the tag is created.
	StartNow StartKind = iota
	// StartOldest reads every retained message.
	StartOldest
	// StartAt reads messages sent at or after Start.At.
	StartAt
)

// Start is where a tag starts reading.
type Start struct {
	Kind StartKind
	At   time.Time
}

// Filter admits a message whose attributes satisfy Conditions: all of them,
// or any of them when Or.
type Filter struct {
	Or         bool
	Conditions []Condition
}

// Condition holds when the message has attribute Name and, if Value is
// set, the attribute is a string equal to *Value.
type Condition struct {
	Name  string
	Value *string
}

// TagConfig is a tag's configuration.
type TagConfig struct {
	Name                     string
	Start                    Start
	Filter                   *Filter
	VisibilityTimeoutSeconds *int32
	UserAttributes           map[string]string
	// ReadQuotaPerSecond overrides the queue's read_quota_per_second for
	// this tag (0: no quota for it); nil: the queue's.
	ReadQuotaPerSecond *int32
}

// Tag is a stored tag with its state.
type Tag struct {
	TagConfig
	CreateTime time.Time
	State      TagState
}

// TagState is a tag's counters (S12). Available, InFlight and Delayed are
// exact at the time of the call; the totals count since creation.
type TagState struct {
	Available          int64
	InFlight           int64
	Delayed            int64
	ReceivedTotal      int64
	DeletedTotal       int64
	DeadTotal          int64
	ExpiredTotal       int64
	OldestAvailableAge time.Duration
}

// Attribute is a message attribute: a string, or bytes when Binary.
type Attribute struct {
	Binary bool
	String string
	Bytes  []byte
}

// OutMessage is a message to send.
type OutMessage struct {
	Body       []byte
	Attributes map[string]Attribute
	// DelaySeconds overrides the queue's delay when non-nil.
	DelaySeconds *int32
	// DeduplicationID, when non-nil (1-128 characters of printable ASCII,
	// '!' to '~'; "" is refused), makes the send idempotent for
	// DeduplicationWindow: a send with an id the queue stored a message
	// under within the window stores nothing and answers with that
	// message's id and send time. Nil on a queue with
	// ContentBasedDeduplication: the SHA-256 of Body (hex), attributes
	// not included.
	DeduplicationID *string
	// Topic orders delivery on a topic queue (S13): each tag gets the
	// messages of one topic in send order, one in flight at a time.
	// Required there (1-128 characters of [A-Za-z0-9_.:-]), refused
	// (INVALID_ARGUMENT, field "topic") on other queues.
	Topic string
	// Priority on a priority queue: 1-16, 1 highest; 0: the default,
	// DefaultPriority. Refused (INVALID_ARGUMENT, field "priority") unless
	// 0 on other queues.
	Priority int32
}

// SendResult is the outcome of one sent message: ID and SendTime, or Err.
type SendResult struct {
	ID       string
	SendTime time.Time
	// Duplicate: nothing was stored; ID and SendTime are those of the
	// message first stored under the same deduplication id.
	Duplicate bool
	Err       error
}

// Message is a received or peeked message.
type Message struct {
	ID            string
	Body          []byte
	Attributes    map[string]Attribute
	SendTime      time.Time
	ReceiptHandle string // receive only
	Tag           string
	ReceiveCount  int
	// FirstReceiveTime is when Tag first received the message, to the
	// millisecond, which names the delivery (Delivery); zero when never
	// received by Tag.
	FirstReceiveTime time.Time
	// VisibleFor is how long this receive keeps the message in flight
	// (received messages only).
	VisibleFor time.Duration
	// DeadLetter is set on a message in a dead-letter queue.
	DeadLetter *DeadLetter
	// MoveCount is how many times the message was moved back from a
	// dead-letter queue (S10).
	MoveCount int
	// Topic is the message's topic on a topic queue (S13), else "".
	Topic string
	// Priority is the message's priority on a priority queue (1-16,
	// DefaultPriority when sent without one), else 0.
	Priority int32
}

// SourceQueueAttribute is the reserved attribute every dead letter
// carries: the name of the queue it came from. (The dead-letter reasons
// tagq sets itself are in reasons_gen.go.)
const SourceQueueAttribute = "DLQ.sourceQueue"

// DeadLetter says where a dead letter came from and why (S9).
type DeadLetter struct {
	SourceQueue          string    `json:"sq"`
	SourceTag            string    `json:"st"`
	DeadTime             time.Time `json:"-"`
	DeadMs               int64     `json:"ts"`
	OriginalMessageID    string    `json:"oi"`
	OriginalReceiveCount int       `json:"rc"`
	Reason               string    `json:"r"`
	Description          string    `json:"ds,omitempty"`
	MoveCount            int       `json:"mv,omitempty"`
}

// DeadRequest is one DeadMessage entry.
type DeadRequest struct {
	ReceiptHandle string
	// Reason defaults to CONSUMER_DEAD_LETTERED.
	Reason      string
	Description string
}

// ReceiveOptions controls a receive.
type ReceiveOptions struct {
	// MaxMessages is 1-100.
	MaxMessages int
	// WaitSeconds is the long-poll wait, 0-20; nil: the queue's default.
	WaitSeconds *int32
	// VisibilitySeconds overrides the tag's and queue's timeout, 0-43200.
	VisibilitySeconds *int32
}

// VisibilityChange is one ChangeVisibility entry.
type VisibilityChange struct {
	ReceiptHandle     string
	VisibilitySeconds int32
	// RetryBackoff: visible again after the queue's retry backoff instead
	// of VisibilitySeconds (which must be 0): a nack that asks for the
	// policy (policy.go).
	RetryBackoff bool
}

// Move task states.
const (
	MoveRunning   = "RUNNING"
	MoveCompleted = "COMPLETED"
	MoveCancelled = "CANCELLED"
	MoveFailed    = "FAILED"

	DefaultMoveRate = 500
	MaxMoveRate     = 10000
)

// MoveTask moves a DLQ's dead letters back to the tags they died in (S10).
// It covers the dead letters present when it started that some DLQ tag
// still needs (not yet received and deleted by every tag), optionally only
// those of one source queue and/or source tag.
type MoveTask struct {
	ID              string `json:"id"`
	DeadLetterQueue string `json:"-"`
	SourceQueue     string `json:"sq,omitempty"`
	SourceTag       string `json:"st,omitempty"`
	MaxPerSecond    int32  `json:"rate"`
	State           string `json:"state"`
	Moved           int64  `json:"moved"`
	// Failed counts dead letters whose source queue or tag no longer
	// exists; they stay in the DLQ.
	Failed int64 `json:"failed"`
	// Total is how many matching dead letters the DLQ held at the start.
	Total         int64  `json:"total"`
	FailureReason string `json:"failure,omitempty"`
	// Left is how many of the task's dead letters were still in the DLQ,
	// not moved and still needed, when it was cancelled (counted then).
	Left *int64 `json:"left,omitempty"`
	// Cursor to UntilMs are the storage's own: how far the task got, when
	// it started and changed, and which process holds it until when (the
	// Redis engine keeps the task as this JSON).
	Cursor     string    `json:"cursor"`
	End        string    `json:"end"`
	CreatedMs  int64     `json:"created"`
	Seq        int64     `json:"seq,omitempty"` // orders tasks started in the same ms
	UpdatedMs  int64     `json:"updated"`
	Owner      string    `json:"owner,omitempty"`
	UntilMs    int64     `json:"until,omitempty"`
	CreateTime time.Time `json:"-"`
	UpdateTime time.Time `json:"-"`
}

// Remaining is how many of the task's dead letters are still to be moved
// (running) or were left in the DLQ unmoved (cancelled, failed): counted
// exactly when it was cancelled, estimated otherwise as those covered less
// those moved and failed. 0 once completed.
func (t *MoveTask) Remaining() int64 {
	switch {
	case t.State == MoveCompleted:
		return 0
	case t.State != MoveRunning && t.Left != nil:
		return *t.Left
	}
	return max(t.Total-t.Moved-t.Failed, 0)
}

// Matches says whether a dead letter is one the task moves.
func (t *MoveTask) Matches(dl *DeadLetter) bool {
	return dl != nil && (t.SourceQueue == "" || dl.SourceQueue == t.SourceQueue) &&
		(t.SourceTag == "" || dl.SourceTag == t.SourceTag)
}

// QueueStats is what the metrics exporter reads of one queue: its backlogs
// and every tag's state (the counters GetTag returns).
type QueueStats struct {
	Name string
	// Messages is the number of entries the queue's stream retains
	// (messages some tag may still need, and finished ones the janitor has
	// not trimmed yet).
	Messages int64
	// Outbox is the number of dead letters on their way to the DLQ.
	Outbox int64
	// MovesRunning and MovesRemaining describe the running move tasks of a
	// DLQ (zero for other queues): how many, and how many dead letters
	// they still have to move.
	MovesRunning, MovesRemaining int64
	// Deduplicated counts the sends answered as duplicates (Queue.DeduplicatedTotal).
	Deduplicated int64
	Tags         []*Tag
}

// StatsSnapshot is the per-queue figures as one replica read them.
type StatsSnapshot struct {
	Queues    []QueueStats
	Truncated bool
	// At is when they were read, on the clock of the replica that read
	// them (replicas' clocks are taken to agree within a small part of
	// the interval).
	At time.Time
}
