package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// ---- nack and extend: change received messages' visibility by receipt handle

// maxVisibility is the API's bound on visibility_seconds (0-43200 s).
const maxVisibility = 12 * time.Hour

func (c *cli) nackCmd() *cobra.Command {
	var queue string
	var delay time.Duration
	var backoff bool
	cmd := &cobra.Command{
		Use:   "nack HANDLE...",
		Short: "Give received messages back to their tag: visible again now, or after --delay",
		Long: "Give received messages back to the tag that received them (ChangeMessageVisibility): they may be\n" +
			"received again at once, or after --delay, or with --backoff after the queue's retry backoff (its\n" +
			"retry policy; at once without one). Their receive count stays (a later receive counts on).\n" +
			"Handles come as arguments, or one a line from standard input with '-'. Each handle's failure (for\n" +
			"example RECEIPT_HANDLE_STALE once the message was received again or deleted) is reported, the others\n" +
			"still change; the exit code is 1 if any failed.",
		Example: "  tagq nack <handle>\n  tagq nack <handle1> <handle2> --delay 30s\n  tagq nack <handle> --backoff\n" +
			"  tagq receive orders --max 10 -o json | jq -r .receipt_handle | tagq nack -",
		Args: handleArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if backoff && cmd.Flags().Changed("delay") {
				return usageError{errors.New("give --delay or --backoff, not both")}
			}
			verb := "nacked"
			if backoff {
				verb = "nacked with backoff"
			}
			return c.changeVisibility(cmd.Context(), "--delay", queue, args, delay, verb)
		},
	}
	queueFlag(cmd, &queue)
	cmd.Flags().DurationVar(&delay, "delay", 0, "visible again after this long (whole seconds, up to 12h; default: at once)")
	cmd.Flags().BoolVar(&backoff, "backoff", false, "visible again after the queue's retry backoff (tagq queue update --retry-min/--retry-max)")
	return cmd
}

func (c *cli) extendCmd() *cobra.Command {
	var queue string
	var by time.Duration
	cmd := &cobra.Command{
		Use:   "extend HANDLE... --by DURATION",
		Short: "Keep received messages hidden from their tag's other receivers for DURATION from now",
		Long: "Set received messages' visibility deadlines to now + --by (ChangeMessageVisibility), for work that\n" +
			"takes longer than the visibility timeout. The deadline is counted from now, not from the old deadline.\n" +
			"Handles come as arguments, or one a line from standard input with '-'. Each handle's failure is\n" +
			"reported, the others still change; the exit code is 1 if any failed.",
		Example: "  tagq extend <handle> --by 2m",
		Args:    handleArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("by") {
				return usageError{errors.New("give --by DURATION, e.g. --by 2m")}
			}
			return c.changeVisibility(cmd.Context(), "--by", queue, args, by, "extended")
		},
	}
	queueFlag(cmd, &queue)
	cmd.Flags().DurationVar(&by, "by", 0, "hide them this long from now (whole seconds, up to 12h)")
	return cmd
}

// changeVisibility sets each handle's deadline to now + d, 100 handles a
// ChangeMessageVisibilityBatch call, and reports each failure.
func (c *cli) changeVisibility(ctx context.Context, flag, queue string, args []string, d time.Duration, verb string) error {
	if d < 0 || d > maxVisibility || d%time.Second != 0 {
		return usageError{fmt.Errorf("%s must be whole seconds between 0s and %s, got %s", flag, maxVisibility, d)}
	}
	handles, err := c.readHandles(args)
	if err != nil {
		return err
	}
	changed, err := c.settleHandles(ctx, queue, handles, func(ctx context.Context, c *cli, queue string, chunk []string, base int) ([]*tagqv1.BatchResultError, error) {
		entries := make([]*tagqv1.ChangeMessageVisibilityBatchEntry, len(chunk))
		for i, h := range chunk {
			entries[i] = &tagqv1.ChangeMessageVisibilityBatchEntry{Id: strconv.Itoa(base + i), ReceiptHandle: h,
				VisibilitySeconds: int32(d / time.Second), RetryBackoff: verb == "nacked with backoff"}
		}
		r, err := c.client.Messages.ChangeMessageVisibilityBatch(ctx,
			&tagqv1.ChangeMessageVisibilityBatchRequest{Queue: queue, Entries: entries})
		return r.GetFailed(), err
	}, verb)
	if c.output != "json" && (err == nil || someFailed(err)) {
		what := "visible again now"
		switch {
		case verb == "nacked with backoff":
			what = "visible again after the queue's retry backoff"
		case verb == "nacked" && d > 0:
			what = "visible again in " + d.String()
		case verb == "extended":
			what = "hidden for " + d.String() + " from now"
		}
		fmt.Fprintf(c.stdout, "%s %d of %d (%s)\n", verb, changed, len(handles), what)
	}
	return err
}
