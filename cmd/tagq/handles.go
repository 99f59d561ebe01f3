package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	tagq "github.com/tagq/tagq/clients/go"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// ---- delete, nack, extend and dead-letter: act on received messages by
// receipt handle. A handle names its queue and tag (S3), so they take
// handles only; --queue, when given, must be each handle's queue.

// handleArgs are HANDLE..., where a single "-" reads the handles from
// standard input, one a line.
func handleArgs(_ *cobra.Command, args []string) error {
	if len(args) == 0 {
		return usageError{errors.New("expected HANDLE... (or - to read handles from standard input)")}
	}
	return nil
}

// queueFlag adds --queue to a command that takes receipt handles.
func queueFlag(cmd *cobra.Command, queue *string) {
	cmd.Flags().StringVar(queue, "queue", "",
		"the handles' queue (optional: a receipt handle names its queue; when given, each handle must be of it)")
}

// readHandles is args, or the handles on standard input for a single "-".
func (c *cli) readHandles(args []string) ([]string, error) {
	if len(args) != 1 || args[0] != "-" {
		return args, nil
	}
	var handles []string
	sc := bufio.NewScanner(c.stdin)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if h := strings.TrimSpace(sc.Text()); h != "" {
			handles = append(handles, h)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(handles) == 0 {
		return nil, usageError{errors.New("no receipt handles on standard input")}
	}
	return handles, nil
}

func (c *cli) deleteCmd() *cobra.Command {
	var queue string
	cmd := &cobra.Command{
		Use:   "delete HANDLE...",
		Short: "Delete (acknowledge) received messages by receipt handle",
		Long: "Delete received messages for the tag that received them. A receipt handle names its queue and tag,\n" +
			"so only handles are needed. Handles come as arguments, or one a line from standard input with '-'.\n" +
			"Each handle's failure is reported, the others are still deleted; the exit code is 1 if any failed.",
		Example: "  tagq delete <handle>\n  tagq receive orders --max 10 -o json | jq -r .receipt_handle | tagq delete -",
		Args:    handleArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			handles, err := c.readHandles(args)
			if err != nil {
				return err
			}
			deleted, err := c.settleHandles(cmd.Context(), queue, handles, deleteBatch, "deleted")
			switch {
			case c.output == "json":
			case err == nil:
				fmt.Fprintf(c.stdout, "deleted %d\n", deleted)
			case someFailed(err):
				fmt.Fprintf(c.stdout, "deleted %d of %d\n", deleted, len(handles))
			}
			return err
		},
	}
	queueFlag(cmd, &queue)
	return cmd
}

func (c *cli) deadLetterCmd() *cobra.Command {
	var queue, reason, description string
	cmd := &cobra.Command{
		Use: "dead-letter HANDLE", Short: "Send a received message to its queue's dead-letter queue now",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{errors.New("expected HANDLE (a receipt handle names its queue: give --queue QUEUE, or nothing)")}
			}
			return nil
		},
		Example: "  tagq dead-letter <handle> --reason BAD_ADDRESS --description 'no such street'",
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := c.client.Messages.DeadMessage(cmd.Context(), &tagqv1.DeadMessageRequest{Queue: queue,
				ReceiptHandle: args[0], Reason: reason, Description: description})
			if err != nil {
				return wrapErr(err)
			}
			fmt.Fprintln(c.stdout, "dead-lettered")
			return nil
		},
	}
	queueFlag(cmd, &queue)
	cmd.Flags().StringVar(&reason, "reason", "", "why (default CONSUMER_DEAD_LETTERED)")
	cmd.Flags().StringVar(&description, "description", "", "details")
	return cmd
}

// handleResult is one handle's outcome in JSON output.
type handleResult struct {
	ReceiptHandle string `json:"receipt_handle"`
	OK            bool   `json:"ok"`
	Reason        string `json:"reason,omitempty"`
	Message       string `json:"message,omitempty"`
}

// batchCall makes one batch call on up to 100 handles (entry ids are
// their indexes) and returns the entries that failed.
type batchCall func(ctx context.Context, c *cli, queue string, entries []string, base int) ([]*tagqv1.BatchResultError, error)

func deleteBatch(ctx context.Context, c *cli, queue string, handles []string, base int) ([]*tagqv1.BatchResultError, error) {
	entries := make([]*tagqv1.DeleteMessageBatchEntry, len(handles))
	for i, h := range handles {
		entries[i] = &tagqv1.DeleteMessageBatchEntry{Id: strconv.Itoa(base + i), ReceiptHandle: h}
	}
	r, err := c.client.Messages.DeleteMessageBatch(ctx, &tagqv1.DeleteMessageBatchRequest{Queue: queue, Entries: entries})
	return r.GetFailed(), err
}

// settleHandles makes call on the handles, 100 a call, reports each
// failure (on stderr, and every outcome with -o json) and returns how many
// succeeded, with an error when any failed. Without --queue, a batch
// whose handles are of several queues is refused whole (MIXED_QUEUE_BATCH):
// its handles then go one a call, so each still acts on its own queue.
func (c *cli) settleHandles(ctx context.Context, queue string, handles []string, call batchCall, verb string) (int, error) {
	enc := json.NewEncoder(c.stdout)
	done, failed := 0, 0
	for start := 0; start < len(handles); start += 100 {
		chunk := handles[start:min(start+100, len(handles))]
		res, err := c.settleChunk(ctx, queue, chunk, start, call)
		if err != nil {
			if done > 0 {
				return done, fmt.Errorf("%w (%d of %d handles %s before)", err, done, len(handles), verb)
			}
			return done, err
		}
		for _, r := range res {
			if r.OK {
				done++
			} else {
				failed++
				fmt.Fprintf(c.stderr, "tagq: %s: %s [%s]%s\n", r.ReceiptHandle, r.Message, r.Reason, oldUsageHint(r, queue))
			}
			if c.output == "json" {
				if err := enc.Encode(r); err != nil {
					return done, err
				}
			}
		}
	}
	if failed > 0 {
		return done, handlesFailed{failed: failed, total: len(handles)}
	}
	return done, nil
}

// handlesFailed is settleHandles' error when some handles failed and the
// others succeeded (each failure reported).
type handlesFailed struct{ failed, total int }

func (e handlesFailed) Error() string {
	return fmt.Sprintf("%d of %d receipt handles failed (each is reported above)", e.failed, e.total)
}

// someFailed is whether err is settleHandles' report of failed handles,
// rather than a call that failed whole.
func someFailed(err error) bool {
	var hf handlesFailed
	return errors.As(err, &hf)
}

// settleChunk makes call on up to 100 handles (base: the first one's
// index) and returns each one's outcome.
func (c *cli) settleChunk(ctx context.Context, queue string, chunk []string, base int, call batchCall) ([]handleResult, error) {
	res := make([]handleResult, len(chunk))
	for i, h := range chunk {
		res[i] = handleResult{ReceiptHandle: h, OK: true}
	}
	failed, err := call(ctx, c, queue, chunk, base)
	if err = wrapErr(err); err != nil && tagq.ReasonOf(err) == tagq.ReasonMixedQueueBatch {
		for i, h := range chunk {
			one, err := call(ctx, c, queue, []string{h}, base+i)
			if err != nil {
				return nil, wrapErr(err)
			}
			failed = append(failed, one...)
		}
	} else if err != nil {
		return nil, err
	}
	for _, f := range failed {
		i, err := strconv.Atoi(f.GetId())
		if err != nil || i < base || i >= base+len(chunk) {
			return nil, fmt.Errorf("the server answered for an entry it was not sent: %q", f.GetId())
		}
		res[i-base] = handleResult{ReceiptHandle: chunk[i-base], Reason: f.GetReason(), Message: f.GetMessage()}
	}
	return res, nil
}

// queueNamePattern is what a queue name too short to be a receipt handle
// looks like: a handle is at least 32 characters (its MAC alone is 8 bytes
// of the 24 or more it encodes).
var queueNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,31}$`)

// oldUsageHint explains a refused handle that is likely a queue name given
// as the first argument, as these commands once took it.
func oldUsageHint(r handleResult, queue string) string {
	if r.Reason != tagq.ReasonInvalidReceiptHandle || queue != "" || !queueNamePattern.MatchString(r.ReceiptHandle) {
		return ""
	}
	return " (if that is a queue: commands on receipt handles take handles only, and the queue, optional, as --queue)"
}
