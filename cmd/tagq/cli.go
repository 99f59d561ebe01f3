package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	tagq "github.com/tagq/tagq/clients/go"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/internal/version"
)

type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	addr, output   string
	ca, cert, key  string // TLS: CA file, client certificate and key
	tls            bool   // TLS with the system's roots
	apiKey         string // bearer API key (tagqd --auth)
	contextName    string // --context: saved settings to use
	contextUsed    string // the context the settings came from, if any
	client         *tagq.Client
}

func newCLI(stdin io.Reader, stdout, stderr io.Writer) *cli {
	return &cli{stdin: stdin, stdout: stdout, stderr: stderr}
}

// usageError is a mistake on the command line (exit code 2).
type usageError struct{ error }

func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u) || strings.HasPrefix(err.Error(), "unknown command") ||
		strings.HasPrefix(err.Error(), "unknown flag") || strings.Contains(err.Error(), "accepts ") ||
		strings.Contains(err.Error(), "requires at least") || strings.Contains(err.Error(), "invalid argument")
}

// explain turns an error into a sentence a person can act on.
// usesTLS is whether a TLS flag was given, to explain connection errors.
func explain(err error, addr string, usesTLS bool) string {
	var e *tagq.Error
	if errors.As(err, &e) {
		msg := e.Message
		if e.Code == codes.Unavailable && e.Reason == "" && usesTLS {
			return fmt.Sprintf("cannot reach tagqd at %s over TLS (%s); is it running? Check --ca (the CA that signed "+
				"tagqd's certificate), and --cert and --key if tagqd requires client certificates", addr, msg)
		}
		if e.Code == codes.Unavailable && e.Reason == "" {
			return fmt.Sprintf("cannot reach tagqd at %s (%s); is it running? Start one with `go run ./cmd/tagqd`, or pass --addr (and --ca if it serves TLS)", addr, msg)
		}
		if e.Reason != "" && !strings.Contains(msg, e.Reason) {
			msg += " [" + e.Reason + "]"
		}
		switch e.Reason {
		case "QUEUE_NOT_FOUND":
			msg += "; `tagq queue list` shows the queues"
		case "TAG_NOT_FOUND":
			msg += "; `tagq tag list QUEUE` shows a queue's tags"
		case "UNAUTHENTICATED":
			msg += "; give an API key with --api-key, TAGQ_API_KEY or a context (tagq context set), or a client certificate of a principal with --cert and --key"
		case "PERMISSION_DENIED":
			msg += "; `tagq access permissions get QUEUE` shows what you may do"
		case "NOT_A_SOURCE_QUEUE":
			msg += "; give the queue a dead-letter queue: `tagq queue update QUEUE --redrive-to DLQ --max-receives N`"
		}
		return msg
	}
	// run prefixes "tagq: "; errors of the Go client carry it already.
	return strings.TrimPrefix(err.Error(), "tagq: ")
}

func (c *cli) checkOutput() error {
	if c.output != "table" && c.output != "json" {
		return usageError{fmt.Errorf("--output must be table or json, not %q", c.output)}
	}
	return nil
}

func (c *cli) usesTLS() bool { return c.tls || c.ca != "" || c.cert != "" || c.key != "" }

func (c *cli) connect() error {
	if c.client != nil {
		return nil
	}
	var opts []grpc.DialOption
	if c.usesTLS() {
		opts = append(opts, tagq.WithTLS(c.ca))
		if c.cert != "" || c.key != "" {
			if c.cert == "" || c.key == "" {
				return usageError{errors.New("give both --cert and --key")}
			}
			opts = append(opts, tagq.WithClientCert(c.cert, c.key))
		}
	}
	if c.apiKey != "" {
		opts = append(opts, tagq.WithAPIKey(c.apiKey))
	}
	cl, err := tagq.Dial(c.addr, opts...)
	if err != nil {
		return err
	}
	c.client = cl
	return nil
}

func (c *cli) commands() *cobra.Command {
	root := &cobra.Command{
		Use:           "tagq",
		Short:         "Command-line client of the tagq message queue",
		Long:          "tagq talks to a tagqd over gRPC: queues, tags (independent readers), messages, dead letters.",
		Version:       version.Get().String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.checkOutput(); err != nil {
				return err
			}
			if err := c.resolve(cmd.Flags()); err != nil {
				return err
			}
			return c.connect()
		},
	}
	// The same line as tagqd --version: the program's name, then version.Info.
	root.SetVersionTemplate("tagq {{.Version}}\n")
	c.connectionFlags(root)
	root.PersistentFlags().StringVarP(&c.output, "output", "o", "table", "output format: table or json")
	root.AddCommand(c.queueCmd(), c.tagCmd(), c.sendCmd(), c.receiveCmd(), c.tailCmd(), c.peekCmd(),
		c.deleteCmd(), c.nackCmd(), c.extendCmd(), c.deadLetterCmd(), c.deadCmd(), c.moveCmd(), c.accessCmd(), c.contextCmd())
	return root
}

// print writes messages of the API as JSON (one object per line) or runs
// table for the table form.
func (c *cli) print(msgs []proto.Message, table func(w *tabwriter.Writer)) error {
	if c.output == "json" {
		m := protojson.MarshalOptions{UseProtoNames: true}
		for _, x := range msgs {
			b, err := m.Marshal(x)
			if err != nil {
				return err
			}
			fmt.Fprintln(c.stdout, string(b))
		}
		return nil
	}
	w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	table(w)
	return w.Flush()
}

// printAll prints API messages with c.print.
func printAll[T proto.Message](c *cli, xs []T, table func(w *tabwriter.Writer)) error {
	msgs := make([]proto.Message, len(xs))
	for i, x := range xs {
		msgs[i] = x
	}
	return c.print(msgs, table)
}

func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("expected %s", names)}
		}
		return nil
	}
}

func dur(v int32) string { return (time.Duration(v) * time.Second).String() }

// ---- queues

func (c *cli) queueCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "queue", Short: "Create, list, show, update, purge and delete queues"}
	var o tagq.QueueOptions
	var retryMin, retryMax time.Duration
	create := &cobra.Command{
		Use: "create NAME", Short: "Create a queue (with its default tag unless --no-default-tag)", Args: exactArgs(1, "NAME"),
		Example: "  tagq queue create orders-dlq --dead-letter-queue\n  tagq queue create orders --redrive-to orders-dlq --max-receives 5\n" +
			"  tagq queue create clicks --no-default-tag --max-retained-bytes 1073741824 --drop-oldest\n" +
			"  tagq queue create events --write-quota 1000 --read-quota 500\n  tagq queue create clicks --partitions 12",
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Partitions == 0 { // the client's "unset": refuse it here
				return usageError{fmt.Errorf("--partitions: 1-64, got 0")}
			}
			p, err := retryFlags(cmd, retryMin, retryMax)
			if err != nil {
				return err
			}
			if p != nil {
				o.RetryBackoff = &tagq.RetryBackoff{Min: retryMin, Max: retryMax}
			}
			q, err := c.client.CreateQueue(cmd.Context(), args[0], o)
			if err != nil {
				return err
			}
			return c.printQueueWithTags(cmd.Context(), q)
		},
	}
	create.Flags().DurationVar(&o.VisibilityTimeout, "visibility", 0, "visibility timeout (default 30s)")
	create.Flags().DurationVar(&o.Delay, "delay", 0, "delay of every message")
	create.Flags().DurationVar(&o.Retention, "retention", 0, "message retention (default 96h)")
	create.Flags().BoolVar(&o.DeadLetterQueue, "dead-letter-queue", false, "this queue is a dead-letter queue")
	create.Flags().BoolVar(&o.TopicQueue, "topic-queue", false,
		"a topic queue: each tag gets a topic's messages in send order, one at a time (send with --topic)")
	create.Flags().BoolVar(&o.PriorityQueue, "priority-queue", false,
		"a priority queue: each tag gets priority 1 first, 16 last, FIFO within one; every 10th message is the oldest waiting (send with --priority)")
	create.Flags().StringVar(&o.RedriveTo, "redrive-to", "", "dead-letter queue for messages received --max-receives times by a tag")
	create.Flags().Int32Var(&o.MaxReceiveCount, "max-receives", 5, "receives by one tag before a message is dead-lettered (with --redrive-to)")
	create.Flags().BoolVar(&o.NoDefaultTag, "no-default-tag", false, "no tag named default: every reader names its tag")
	addRetryFlags(create, &retryMin, &retryMax)
	create.Flags().BoolVar(&o.RetainAckedMessages, "retain-acked", false,
		"keep messages for the whole retention once every tag has finished them, so that tags can replay them (tagq tag seek)")
	create.Flags().Int64Var(&o.MaxRetainedMessages, "max-retained-messages", 0, "most messages the queue holds (0: no cap)")
	create.Flags().Int64Var(&o.MaxRetainedBytes, "max-retained-bytes", 0, "most bytes of messages the queue holds (0: no cap)")
	create.Flags().BoolVar(&o.DropOldest, "drop-oldest", false, "beyond a cap, drop the oldest messages (default: refuse sends with QUEUE_FULL)")
	create.Flags().Int32Var(&o.WriteQuotaPerSecond, "write-quota", 0, "most messages stored per second (0: no quota)")
	create.Flags().Int32Var(&o.ReadQuotaPerSecond, "read-quota", 0, "most messages each tag receives per second (0: no quota)")
	create.Flags().Int32Var(&o.Partitions, "partitions", 1,
		"streams the queue is split into, 1-64, each in a Redis Cluster hash slot of its own (fixed at creation; not with --dead-letter-queue or --priority-queue)")

	var prefix, contains, sortBy string
	list := &cobra.Command{
		Use: "list", Short: "List queues with their tags' backlog", Args: exactArgs(0, "no arguments"),
		Long: "List queues, each with its messages, AVAILABLE (MAX TAG): the available messages of its tag furthest\n" +
			"behind (a message counts once, however many tags read it), and IN FLIGHT (ALL TAGS): the messages\n" +
			"out to consumers, summed over its tags. With -o json, each queue carries its tags with their state.",
		Example: "  tagq queue list --contains orders --sort 'available desc'",
		RunE: func(cmd *cobra.Command, _ []string) error {
			var all []*tagqv1.Queue
			for tok := ""; ; {
				r, err := c.client.Queues.ListQueues(cmd.Context(), &tagqv1.ListQueuesRequest{Prefix: prefix, NameContains: contains,
					OrderBy: sortBy, View: tagqv1.QueueView_QUEUE_VIEW_TAGS, PageToken: tok})
				if err != nil {
					return wrapErr(err)
				}
				all = append(all, r.GetQueues()...)
				if tok = r.GetNextPageToken(); tok == "" {
					break
				}
			}
			return c.printQueues(all...)
		},
	}
	list.Flags().StringVar(&prefix, "prefix", "", "only queues whose name starts with this")
	list.Flags().StringVar(&contains, "contains", "", "only queues whose name contains this")
	list.Flags().StringVar(&sortBy, "sort", "", "order: name (default), messages, tags, available, oldest_available_age, in_flight or dead_total, with ' desc' to reverse")

	get := &cobra.Command{
		Use: "get NAME", Short: "Show a queue with its attributes and state", Args: exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			q, err := c.client.GetQueue(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if c.output == "json" {
				return c.print([]proto.Message{q}, nil)
			}
			w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintf(w, "name\t%s\n", q.GetName())
			fmt.Fprintf(w, "visibility\t%s\ndelay\t%s\nretention\t%s\nmax message bytes\t%d\n", dur(q.GetVisibilityTimeoutSeconds()),
				dur(q.GetDelaySeconds()), dur(q.GetMessageRetentionSeconds()), q.GetMaxMessageBytes())
			if n := q.GetPartitions(); n > 1 {
				fmt.Fprintf(w, "partitions\t%d: every tag reads each; order per topic per tag, none across partitions\n", n)
			} else {
				fmt.Fprintf(w, "partitions\t1\n")
			}
			if p := q.GetRedrivePolicy(); p != nil {
				fmt.Fprintf(w, "redrive\tto %s after %d receives\n", p.GetDeadLetterQueue(), p.GetMaxReceiveCount())
			}
			if p := q.GetRetryPolicy(); p != nil {
				fmt.Fprintf(w, "retry backoff\t%s to %s, exponential with jitter\n", dur(p.GetMinBackoffSeconds()), dur(p.GetMaxBackoffSeconds()))
			}
			if q.GetDeadLetterQueue() {
				fmt.Fprintf(w, "dead-letter queue of\t%s\n", strings.Join(q.GetSourceQueues(), ", "))
			}
			if q.GetTopicQueue() {
				fmt.Fprintf(w, "topic queue\tyes: per tag, a topic's messages in send order, one in flight\n")
			}
			if q.GetPriorityQueue() {
				fmt.Fprintf(w, "priority queue\tyes: per tag, priority 1 first, FIFO within one; every 10th the oldest waiting\n")
			}
			if q.GetRetainAckedMessages() {
				fmt.Fprintf(w, "retain acked	yes: messages stay for the retention, for replays (tagq tag seek)\n")
			}
			if q.GetMaxRetainedMessages() != 0 || q.GetMaxRetainedBytes() != 0 {
				fmt.Fprintf(w, "caps\t%d messages, %d bytes (0: none), %s\n", q.GetMaxRetainedMessages(), q.GetMaxRetainedBytes(),
					q.GetOverflowPolicy())
			}
			if q.GetWriteQuotaPerSecond() != 0 || q.GetReadQuotaPerSecond() != 0 {
				fmt.Fprintf(w, "quotas\twrite %d/s, read %d/s per tag (0: none)\n", q.GetWriteQuotaPerSecond(), q.GetReadQuotaPerSecond())
			}
			st := q.GetState()
			fmt.Fprintf(w, "tags\t%d\nretained messages\t%d\nretained bytes\t%d\n", st.GetTagCount(), st.GetRetainedMessages(),
				st.GetRetainedBytes())
			if n := st.GetDroppedTotal(); n > 0 {
				fmt.Fprintf(w, "dropped (overflow)\t%d\n", n)
			}
			if d := st.GetDefaultTag(); d != nil {
				fmt.Fprintf(w, "default tag\tavailable %d, in flight %d, delayed %d\n", d.GetAvailable(), d.GetInFlight(), d.GetDelayed())
			}
			return w.Flush()
		},
	}

	var redriveTo string
	var maxReceives int32
	var noRedrive, noRetry bool
	var writeQuota, readQuota int32
	var upRetryMin, upRetryMax time.Duration
	update := &cobra.Command{
		Use: "update NAME", Short: "Change a queue's redrive policy, retry backoff or rate quotas", Args: exactArgs(1, "NAME"),
		Example: "  tagq queue update orders --redrive-to orders-dlq --max-receives 3\n  tagq queue update orders --no-redrive\n" +
			"  tagq queue update orders --retry-min 1s --retry-max 5m\n  tagq queue update orders --no-retry\n" +
			"  tagq queue update orders --write-quota 100 --read-quota 0",
		RunE: func(cmd *cobra.Command, args []string) error {
			q := &tagqv1.Queue{Name: args[0]}
			var paths []string
			if redriveTo != "" && noRedrive {
				return usageError{errors.New("give --redrive-to DLQ or --no-redrive, not both")}
			}
			if redriveTo != "" || noRedrive {
				paths = append(paths, "redrive_policy")
			}
			if redriveTo != "" {
				q.RedrivePolicy = &tagqv1.RedrivePolicy{DeadLetterQueue: redriveTo, MaxReceiveCount: maxReceives}
			}
			p, err := retryFlags(cmd, upRetryMin, upRetryMax)
			if err != nil {
				return err
			}
			if p != nil && noRetry {
				return usageError{errors.New("give --retry-min/--retry-max or --no-retry, not both")}
			}
			if p != nil || noRetry {
				paths, q.RetryPolicy = append(paths, "retry_policy"), p
			}
			if cmd.Flags().Changed("write-quota") {
				paths, q.WriteQuotaPerSecond = append(paths, "write_quota_per_second"), &writeQuota
			}
			if cmd.Flags().Changed("read-quota") {
				paths, q.ReadQuotaPerSecond = append(paths, "read_quota_per_second"), &readQuota
			}
			if len(paths) == 0 {
				return usageError{errors.New("give --redrive-to DLQ, --no-redrive, --retry-min/--retry-max, --no-retry, --write-quota or --read-quota")}
			}
			r, err := c.client.Queues.UpdateQueue(cmd.Context(), &tagqv1.UpdateQueueRequest{Queue: q,
				UpdateMask: &fieldmaskpb.FieldMask{Paths: paths}})
			if err != nil {
				return wrapErr(err)
			}
			return c.printQueueWithTags(cmd.Context(), r.GetQueue())
		},
	}
	update.Flags().StringVar(&redriveTo, "redrive-to", "", "dead-letter queue")
	update.Flags().Int32Var(&maxReceives, "max-receives", 5, "receives by one tag before a message is dead-lettered")
	update.Flags().BoolVar(&noRedrive, "no-redrive", false, "remove the redrive policy")
	addRetryFlags(update, &upRetryMin, &upRetryMax)
	update.Flags().BoolVar(&noRetry, "no-retry", false, "remove the retry backoff (redeliveries at once)")
	update.Flags().Int32Var(&writeQuota, "write-quota", 0, "most messages stored per second (0: no quota)")
	update.Flags().Int32Var(&readQuota, "read-quota", 0, "most messages each tag receives per second (0: no quota)")

	var force bool
	del := &cobra.Command{
		Use: "delete NAME", Short: "Delete a queue with all its messages and tags", Args: exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := c.client.DeleteQueue(cmd.Context(), args[0], force); err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "deleted queue %s\n", args[0])
			return nil
		},
	}
	del.Flags().BoolVar(&force, "force", false, "also when it is the dead-letter queue of other queues (their policies are removed)")
	purge := &cobra.Command{
		Use: "purge NAME", Short: "Drop every message of a queue (tags and totals stay)", Args: exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := c.client.Queues.PurgeQueue(cmd.Context(), &tagqv1.PurgeQueueRequest{Name: args[0]})
			if err != nil {
				return wrapErr(err)
			}
			fmt.Fprintf(c.stdout, "purged %d messages from %s\n", r.GetPurgedMessages(), args[0])
			return nil
		},
	}
	cmd.AddCommand(create, list, get, update, del, purge)
	return cmd
}

func wrapErr(err error) error {
	if err == nil {
		return nil
	}
	// Reuse the client's status parsing.
	return tagq.WrapError(err)
}

// printQueueWithTags prints one queue with its tags' backlog (CreateQueue
// and UpdateQueue answer without the tags).
func (c *cli) printQueueWithTags(ctx context.Context, q *tagqv1.Queue) error {
	r, err := c.client.Queues.ListTags(ctx, &tagqv1.ListTagsRequest{Queue: q.GetName(), PageSize: 100})
	if err != nil {
		return wrapErr(err)
	}
	q.Tags = r.GetTags()
	return c.printQueues(q)
}

// printQueues prints queues with their tags (Queue.tags) summed up as the
// console does: AVAILABLE is the largest of its tags' (the tag furthest
// behind; a sum would count a message once per tag), IN FLIGHT the sum.
func (c *cli) printQueues(qs ...*tagqv1.Queue) error {
	return printAll(c, qs, func(w *tabwriter.Writer) {
		fmt.Fprintln(w, "QUEUE\tTAGS\tMESSAGES\tAVAILABLE (MAX TAG)\tIN FLIGHT (ALL TAGS)\tPARTITIONS\tDLQ")
		for _, q := range qs {
			st := q.GetState()
			dlq := q.GetRedrivePolicy().GetDeadLetterQueue()
			if q.GetDeadLetterQueue() {
				dlq = "(is one)"
			}
			var avail, inFlight int64
			for _, t := range q.GetTags() {
				avail = max(avail, t.GetState().GetAvailable())
				inFlight += t.GetState().GetInFlight()
			}
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%s\n", q.GetName(), st.GetTagCount(), st.GetRetainedMessages(), avail, inFlight,
				max(q.GetPartitions(), 1), dlq)
		}
	})
}

// ---- tags

func (c *cli) tagCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "tag", Short: "Create, list, show, seek and delete tags (independent readers of a queue)"}
	var oldest bool
	var from string
	var filters []string
	var or bool
	var readQuota int32
	create := &cobra.Command{
		Use: "create QUEUE NAME", Short: "Add a tag to a queue", Args: exactArgs(2, "QUEUE NAME"),
		Example: "  tagq tag create orders billing\n  tagq tag create orders eu --filter region=eu --from-oldest",
		RunE: func(cmd *cobra.Command, args []string) error {
			t := &tagqv1.Tag{Name: args[1]}
			if cmd.Flags().Changed("read-quota") {
				t.ReadQuotaPerSecond = &readQuota
			}
			switch {
			case oldest:
				t.StartTime = timestamppb.New(time.Unix(0, 0))
			case from != "":
				at, err := time.Parse(time.RFC3339, from)
				if err != nil {
					return usageError{fmt.Errorf("--from: %v (use RFC 3339, e.g. 2026-11-22T10:00:00Z)", err)}
				}
				t.StartTime = timestamppb.New(at)
			}
			if len(filters) > 0 {
				f := &tagqv1.TagFilter{Operator: tagqv1.TagFilter_OPERATOR_AND}
				if or {
					f.Operator = tagqv1.TagFilter_OPERATOR_OR
				}
				for _, s := range filters {
					name, value, hasValue := strings.Cut(s, "=")
					cond := &tagqv1.AttributeCondition{Name: name}
					if hasValue {
						cond.StringValue = &value
					}
					f.Conditions = append(f.Conditions, cond)
				}
				t.Filter = f
			}
			r, err := c.client.Queues.CreateTag(cmd.Context(), &tagqv1.CreateTagRequest{Queue: args[0], Tag: t})
			if err != nil {
				return wrapErr(err)
			}
			return c.printTags(r.GetTag())
		},
	}
	create.Flags().BoolVar(&oldest, "from-oldest", false, "read every retained message (default: messages sent from now on)")
	create.Flags().StringVar(&from, "from", "", "read messages sent from this time (RFC 3339)")
	create.Flags().StringArrayVar(&filters, "filter", nil, "only messages with this attribute (name) or value (name=value); repeatable")
	create.Flags().BoolVar(&or, "or", false, "a message needs one --filter to match, not all")
	create.Flags().Int32Var(&readQuota, "read-quota", 0, "most messages this tag receives per second, in place of the queue's read quota (0: none)")
	list := &cobra.Command{
		Use: "list QUEUE", Short: "List a queue's tags with their counters", Args: exactArgs(1, "QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var all []*tagqv1.Tag
			for tok := ""; ; {
				r, err := c.client.Queues.ListTags(cmd.Context(), &tagqv1.ListTagsRequest{Queue: args[0], PageToken: tok})
				if err != nil {
					return wrapErr(err)
				}
				all = append(all, r.GetTags()...)
				if tok = r.GetNextPageToken(); tok == "" {
					break
				}
			}
			return c.printTags(all...)
		},
	}
	get := &cobra.Command{
		Use: "get QUEUE NAME", Short: "Show a tag: its start, filter, visibility timeout, counters and oldest available age",
		Args: exactArgs(2, "QUEUE NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := c.client.GetTag(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			return c.printTag(t)
		},
	}
	del := &cobra.Command{
		Use: "delete QUEUE NAME", Short: "Delete a tag with its in-flight messages and counters", Args: exactArgs(2, "QUEUE NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := c.client.Queues.DeleteTag(cmd.Context(), &tagqv1.DeleteTagRequest{Queue: args[0], Name: args[1]})
			if err != nil {
				return wrapErr(err)
			}
			fmt.Fprintf(c.stdout, "deleted tag %s of %s\n", args[1], args[0])
			return nil
		},
	}
	cmd.AddCommand(create, list, get, del, c.tagSeekCmd())
	return cmd
}

// tagSeekCmd is `tagq tag seek`: a tag's cursor moved (DESIGN S22).
func (c *cli) tagSeekCmd() *cobra.Command {
	var at, messageID string
	var ago time.Duration
	var oldest, now bool
	cmd := &cobra.Command{
		Use:   "seek QUEUE NAME (--time T | --ago D | --message-id ID | --oldest | --now)",
		Short: "Move a tag's cursor: replay what follows it, or skip what comes before it",
		Long: "Move a tag's cursor to a time or a message id (as Pub/Sub's seek). The retained messages after it\n" +
			"are available again to this tag alone, in send order, with receive counts from 1; what the tag had\n" +
			"in flight is dropped from it (their receipt handles no longer settle anything). Its totals, filter\n" +
			"and settings stay; other tags do not move. Messages every tag had finished are kept only with\n" +
			"retain_acked_messages: a seek finds what the queue retains.",
		Example: "  tagq tag seek orders billing --ago 1h            # replay the last hour\n" +
			"  tagq tag seek orders billing --time 2026-11-22T10:00:00Z\n" +
			"  tagq tag seek orders billing --message-id 1763800000000-0\n" +
			"  tagq tag seek orders billing --now               # skip the backlog",
		Args: exactArgs(2, "QUEUE NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := &tagqv1.SeekTagRequest{Queue: args[0], Name: args[1]}
			set := 0
			for _, f := range []string{"time", "ago", "message-id", "oldest", "now"} {
				if cmd.Flags().Changed(f) {
					set++
				}
			}
			if set != 1 {
				return usageError{errors.New("give one of --time, --ago, --message-id, --oldest, --now")}
			}
			switch {
			case cmd.Flags().Changed("time"):
				t, err := time.Parse(time.RFC3339, at)
				if err != nil {
					return usageError{fmt.Errorf("--time: %v (use RFC 3339, e.g. 2026-11-22T10:00:00Z)", err)}
				}
				req.Target = &tagqv1.SeekTagRequest_Time{Time: timestamppb.New(t)}
			case cmd.Flags().Changed("ago"):
				if ago < 0 {
					return usageError{errors.New("--ago: a duration back from now, e.g. 90m")}
				}
				req.Target = &tagqv1.SeekTagRequest_Time{Time: timestamppb.New(time.Now().Add(-ago))}
			case oldest:
				req.Target = &tagqv1.SeekTagRequest_Time{Time: timestamppb.New(time.Unix(0, 0))}
			case now:
				// The server's clock decides where now is: any time at or
				// after it is the end, so a day ahead is whatever the skew.
				req.Target = &tagqv1.SeekTagRequest_Time{Time: timestamppb.New(time.Now().Add(24 * time.Hour))}
			default:
				req.Target = &tagqv1.SeekTagRequest_MessageId{MessageId: messageID}
			}
			r, err := c.client.Queues.SeekTag(cmd.Context(), req)
			if err != nil {
				return wrapErr(err)
			}
			return c.printTags(r.GetTag())
		},
	}
	cmd.Flags().StringVar(&at, "time", "", "replay from this time (RFC 3339): messages sent at or after it")
	cmd.Flags().DurationVar(&ago, "ago", 0, "replay what was sent in this last stretch of time (e.g. 1h)")
	cmd.Flags().StringVar(&messageID, "message-id", "", "replay from this message (it included)")
	cmd.Flags().BoolVar(&oldest, "oldest", false, "replay every retained message")
	cmd.Flags().BoolVar(&now, "now", false, "skip every retained message: only what is sent from now on")
	return cmd
}

func (c *cli) printTags(ts ...*tagqv1.Tag) error {
	return printAll(c, ts, func(w *tabwriter.Writer) {
		fmt.Fprintln(w, "TAG\tAVAILABLE\tIN FLIGHT\tDELAYED\tRECEIVED\tDELETED\tDEAD\tEXPIRED")
		for _, t := range ts {
			s := t.GetState()
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", t.GetName(), s.GetAvailable(), s.GetInFlight(), s.GetDelayed(),
				s.GetReceivedTotal(), s.GetDeletedTotal(), s.GetDeadTotal(), s.GetExpiredTotal())
		}
	})
}

// ---- messages

func parseAttrs(kv []string) (map[string]string, error) {
	if len(kv) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, s := range kv {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return nil, usageError{fmt.Errorf("--attr %q: use name=value", s)}
		}
		out[k] = v
	}
	return out, nil
}

func (c *cli) sendCmd() *cobra.Command {
	var attrKV []string
	var delay time.Duration
	var file, dedupID, topic string
	var priority int32
	cmd := &cobra.Command{
		Use:   "send QUEUE [BODY... | --file PATH]",
		Short: "Send messages: each BODY argument, or each line of standard input, or one whole file",
		Example: "  tagq send orders '{\"id\": 1}' '{\"id\": 2}'\n  cat orders.jsonl | tagq send orders --attr source=import\n" +
			"  tagq send images --file photo.jpg\n  gzip -c report.csv | tagq send reports --file -\n" +
			"  tagq send orders --dedup-id order-1 '{\"id\": 1}'   # again within 5 minutes: the same id, nothing stored\n" +
			"  tagq send payments --topic account-42 debit credit   # a topic queue: in this order, one at a time\n" +
			"  tagq send jobs --priority 1 page-oncall              # a priority queue: 1 highest, 16 lowest, 8 by default",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 1 {
				return usageError{errors.New("expected QUEUE [BODY...]")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			attrs, err := parseAttrs(attrKV)
			if err != nil {
				return err
			}
			if file != "" {
				if len(args) > 1 {
					return usageError{errors.New("give BODY arguments or --file, not both")}
				}
				return c.sendFile(cmd.Context(), args[0], file, tagq.Outgoing{Attributes: attrs, Delay: delay, DeduplicationID: dedupID,
					Topic: topic, Priority: priority})
			}
			bodies := args[1:]
			if len(bodies) == 0 {
				sc := bufio.NewScanner(c.stdin)
				sc.Buffer(make([]byte, 1024*1024), 2*1024*1024)
				for sc.Scan() {
					bodies = append(bodies, sc.Text())
				}
				if err := sc.Err(); err != nil {
					return err
				}
			}
			if dedupID != "" && len(bodies) != 1 {
				return usageError{fmt.Errorf("--dedup-id names one message: give one BODY (or --file), not %d", len(bodies))}
			}
			sent := 0
			for len(bodies) > 0 {
				n := min(len(bodies), 100)
				batch := make([]tagq.Outgoing, n)
				for i, b := range bodies[:n] {
					batch[i] = tagq.Outgoing{Body: []byte(b), Attributes: attrs, Delay: delay, DeduplicationID: dedupID, Topic: topic,
						Priority: priority}
				}
				ids, err := c.client.SendBatch(cmd.Context(), args[0], batch...)
				for _, id := range ids {
					if id != "" {
						sent++
						if c.output == "json" {
							fmt.Fprintf(c.stdout, "{\"message_id\":%q}\n", id)
						} else {
							fmt.Fprintln(c.stdout, id)
						}
					}
				}
				if err != nil {
					return fmt.Errorf("%w (%d sent before)", err, sent)
				}
				bodies = bodies[n:]
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&attrKV, "attr", nil, "attribute name=value on every message; repeatable")
	cmd.Flags().DurationVar(&delay, "delay", 0, "deliver after this delay (up to 15m)")
	cmd.Flags().StringVar(&file, "file", "", "send this file's bytes as one message ('-': all of standard input)")
	cmd.Flags().StringVar(&topic, "topic", "", "the topic of every message (required on a topic queue, refused elsewhere)")
	cmd.Flags().Int32Var(&priority, "priority", 0, "the priority of every message on a priority queue: 1 (highest) to 16; 0: the default, 8")
	cmd.Flags().StringVar(&dedupID, "dedup-id", "",
		"deduplication id of the one message: a send with an id the queue stored a message under in the last 5 minutes stores nothing and prints that message's id")
	return cmd
}

func bodyText(b []byte) string {
	if utf8.Valid(b) {
		return strings.ReplaceAll(string(b), "\n", `\n`)
	}
	return "base64:" + base64.StdEncoding.EncodeToString(b)
}

func (c *cli) printMessages(ms []*tagq.Message, withHandle bool) error {
	return printAll(c, ms, func(w *tabwriter.Writer) {
		head := "MESSAGE\tRECEIVES\tBODY"
		if withHandle {
			head += "\tRECEIPT HANDLE"
		}
		fmt.Fprintln(w, head)
		for _, m := range ms {
			line := fmt.Sprintf("%s\t%d\t%s", m.GetMessageId(), m.GetReceiveCount(), bodyText(m.GetBody()))
			if withHandle {
				line += "\t" + m.GetReceiptHandle()
			}
			fmt.Fprintln(w, line)
		}
	})
}

func (c *cli) receiveCmd() *cobra.Command {
	var o tagq.ReceiveOptions
	var del bool
	cmd := &cobra.Command{
		Use: "receive QUEUE", Short: "Receive messages for a tag (prints receipt handles)", Args: exactArgs(1, "QUEUE"),
		Example: "  tagq receive orders --tag billing --max 10 --wait 20s",
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Max < 1 || o.Max > 100 {
				return usageError{fmt.Errorf("--max must be between 1 and 100, got %d", o.Max)}
			}
			ms, err := c.client.Receive(cmd.Context(), args[0], o)
			if err != nil {
				return err
			}
			if err := c.printMessages(ms, !del); err != nil {
				return err
			}
			if del {
				return c.deleteAll(cmd.Context(), ms)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Tag, "tag", "", "tag to receive for (default: the queue's default tag)")
	cmd.Flags().IntVar(&o.Max, "max", 1, "at most this many messages (1-100)")
	cmd.Flags().DurationVar(&o.Wait, "wait", 0, "wait up to this long for a message (up to 20s)")
	cmd.Flags().DurationVar(&o.Visibility, "visibility", 0, "hide them from the tag's other receivers this long")
	cmd.Flags().BoolVar(&del, "delete", false, "delete the messages once printed")
	return cmd
}

func (c *cli) deleteAll(ctx context.Context, ms []*tagq.Message) error {
	for _, m := range ms {
		if err := c.client.Delete(ctx, m.GetReceiptHandle()); err != nil {
			return err
		}
	}
	return nil
}

// errKeep is tail's verdict on a message printed without --delete: the
// Consumer nacks it with tail's Backoff, which is the visibility timeout,
// so it comes back then, as a received and not deleted message would.
var errKeep = errors.New("printed, not deleted")

func (c *cli) tailCmd() *cobra.Command {
	var tag string
	var del bool
	cmd := &cobra.Command{
		Use: "tail QUEUE", Short: "Follow a tag: print messages as they arrive, until interrupted", Args: exactArgs(1, "QUEUE"),
		Long: "Follow a tag over a Consume stream: print each message as the server pushes it (up to 10 held at once).\n" +
			"With --delete each message is acknowledged (deleted for the tag) once printed; without, it is given\n" +
			"back to the tag to come again after its visibility timeout, as a received message would. On interrupt\n" +
			"the stream closes cleanly: messages pushed and not yet printed go back to the tag at once.",
		Example: "  tagq tail orders --tag billing --delete",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			// Look the queue and tag up first: a missing one (or no
			// tagqd) fails at once with a message, and they give the
			// visibility timeout a kept message waits out.
			q, err := c.client.GetQueue(ctx, args[0])
			if err != nil {
				return err
			}
			vis := time.Duration(q.GetVisibilityTimeoutSeconds()) * time.Second
			if tag != "" {
				t, err := c.client.GetTag(ctx, args[0], tag)
				if err != nil {
					return err
				}
				if t.VisibilityTimeoutSeconds != nil {
					vis = time.Duration(t.GetVisibilityTimeoutSeconds()) * time.Second
				}
			}
			co := c.client.NewConsumer(tagq.ConsumerConfig{Queue: args[0], Tag: tag, Workers: 1, MaxOutstandingMessages: 10,
				Visibility: vis, Backoff: func(int) time.Duration { return vis },
				Logger: slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))},
				tagq.HandlerFunc(func(_ context.Context, m *tagq.Message) error {
					// One worker: messages print whole and in the order pushed.
					if c.output == "json" {
						if err := c.print([]proto.Message{m}, nil); err != nil {
							return err
						}
					} else {
						fmt.Fprintf(c.stdout, "%s\t%s\n", m.GetMessageId(), bodyText(m.GetBody()))
					}
					if del {
						return nil
					}
					return errKeep
				}))
			return co.Run(ctx) // until interrupted: nil
		},
	}
	cmd.Flags().StringVar(&tag, "tag", "", "tag to follow (default: the queue's default tag)")
	cmd.Flags().BoolVar(&del, "delete", false, "delete each message once printed (otherwise they come back after their visibility timeout)")
	return cmd
}

func (c *cli) peekCmd() *cobra.Command {
	var tag string
	var max int
	cmd := &cobra.Command{
		Use: "peek QUEUE", Short: "Show the next messages a tag would receive, without receiving them", Args: exactArgs(1, "QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if max < 1 || max > 100 {
				return usageError{fmt.Errorf("--max must be between 1 and 100, got %d", max)}
			}
			ms, err := c.client.Peek(cmd.Context(), args[0], tag, max)
			if err != nil {
				return err
			}
			return c.printMessages(ms, false)
		},
	}
	cmd.Flags().StringVar(&tag, "tag", "", "tag (default: the queue's default tag)")
	cmd.Flags().IntVar(&max, "max", 10, "at most this many (1-100)")
	return cmd
}

func (c *cli) moveCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "move", Short: "Move dead letters back to the tags they died in"}
	var sq, st string
	var rate int32
	start := &cobra.Command{
		Use: "start DLQ", Short: "Start moving a dead-letter queue's dead letters back", Args: exactArgs(1, "DLQ"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := c.client.Redrive.StartMessageMove(cmd.Context(), &tagqv1.StartMessageMoveRequest{DeadLetterQueue: args[0],
				SourceQueue: sq, SourceTag: st, MaxMessagesPerSecond: rate})
			if err != nil {
				return wrapErr(err)
			}
			return c.printMoves(r.GetTask())
		},
	}
	start.Flags().StringVar(&sq, "source-queue", "", "only dead letters of this queue")
	start.Flags().StringVar(&st, "source-tag", "", "only dead letters of this tag")
	start.Flags().Int32Var(&rate, "rate", 0, "at most this many messages a second (default 500)")
	list := &cobra.Command{
		Use: "list DLQ", Short: "List a dead-letter queue's move tasks with their progress", Args: exactArgs(1, "DLQ"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := c.client.Redrive.ListMessageMoves(cmd.Context(), &tagqv1.ListMessageMovesRequest{DeadLetterQueue: args[0]})
			if err != nil {
				return wrapErr(err)
			}
			return c.printMoves(r.GetTasks()...)
		},
	}
	cancel := &cobra.Command{
		Use: "cancel DLQ TASK", Short: "Stop a running move task", Args: exactArgs(2, "DLQ TASK"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := c.client.Redrive.CancelMessageMove(cmd.Context(), &tagqv1.CancelMessageMoveRequest{DeadLetterQueue: args[0], TaskId: args[1]})
			if err != nil {
				return wrapErr(err)
			}
			return c.printMoves(r.GetTask())
		},
	}
	cmd.AddCommand(start, list, cancel)
	return cmd
}

func (c *cli) printMoves(ts ...*tagqv1.MessageMoveTask) error {
	return printAll(c, ts, func(w *tabwriter.Writer) {
		fmt.Fprintln(w, "TASK\tSTATE\tMOVED\tFAILED\tREMAINING\tRATE\tSOURCE")
		for _, t := range ts {
			src := t.GetSourceQueue()
			if t.GetSourceTag() != "" {
				src += "/" + t.GetSourceTag()
			}
			if src == "" {
				src = "(all)"
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d/s\t%s\n", t.GetTaskId(), strings.TrimPrefix(t.GetState().String(), "STATE_"),
				t.GetMovedMessages(), t.GetFailedMessages(), t.GetRemainingMessages(), t.GetMaxMessagesPerSecond(), src)
		}
	})
}

// addRetryFlags adds --retry-min and --retry-max (a queue's retry policy).
func addRetryFlags(cmd *cobra.Command, lo, hi *time.Duration) {
	cmd.Flags().DurationVar(lo, "retry-min", 0,
		"retry backoff: a message that comes back to a tag (visibility ran out, or tagq nack --backoff) waits at least this (whole seconds; with --retry-max)")
	cmd.Flags().DurationVar(hi, "retry-max", 0,
		"retry backoff: the longest wait; it doubles from --retry-min per receive, with jitter (whole seconds, up to 12h)")
}

// retryFlags is the retry policy --retry-min and --retry-max give (nil:
// neither given).
func retryFlags(cmd *cobra.Command, lo, hi time.Duration) (*tagqv1.RetryPolicy, error) {
	setLo, setHi := cmd.Flags().Changed("retry-min"), cmd.Flags().Changed("retry-max")
	if !setLo && !setHi {
		return nil, nil
	}
	if setLo != setHi {
		return nil, usageError{errors.New("give --retry-min and --retry-max together, e.g. --retry-min 1s --retry-max 5m")}
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"--retry-min", lo}, {"--retry-max", hi}} {
		if f.d < 0 || f.d > maxVisibility || f.d%time.Second != 0 {
			return nil, usageError{fmt.Errorf("%s must be whole seconds between 0s and %s, got %s", f.name, maxVisibility, f.d)}
		}
	}
	return (&tagq.RetryBackoff{Min: lo, Max: hi}).Proto(), nil
}
