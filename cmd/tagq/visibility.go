package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// ---- nack and extend: change received messages' visibility by receipt handle

// maxVisibility is the API's bound on visibility_seconds (0-43200 s).
const maxVisibility = 12 * time.Hour

// handleArgs are QUEUE HANDLE... where a single "-" reads the handles from
// standard input, one a line.
func handleArgs(_ *cobra.Command, args []string) error {
	if len(args) < 2 {
		return usageError{errors.New("expected QUEUE HANDLE... (or QUEUE - to read handles from standard input)")}
	}
	return nil
}

func (c *cli) nackCmd() *cobra.Command {
	var delay time.Duration
	cmd := &cobra.Command{
		Use:   "nack QUEUE HANDLE...",
		Short: "Give received messages back to their tag: visible again now, or after --delay",
		Long: "Give received messages back to the tag that received them (ChangeMessageVisibility): they may be\n" +
			"received again at once, or after --delay. Their receive count stays (a later receive counts on).\n" +
			"Handles come as arguments, or one a line from standard input with '-'. Each handle's failure (for\n" +
			"example RECEIPT_HANDLE_STALE once the message was received again or deleted) is reported, the others\n" +
			"still change; the exit code is 1 if any failed.",
		Example: "  tagq nack orders <handle>\n  tagq nack orders <handle1> <handle2> --delay 30s\n" +
			"  tagq receive orders --max 10 -o json | jq -r .receipt_handle | tagq nack orders -",
		Args: handleArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.changeVisibility(cmd.Context(), "--delay", args[0], args[1:], delay, "nacked")
		},
	}
	cmd.Flags().DurationVar(&delay, "delay", 0, "visible again after this long (whole seconds, up to 12h; default: at once)")
	return cmd
}

func (c *cli) extendCmd() *cobra.Command {
	var by time.Duration
	cmd := &cobra.Command{
		Use:   "extend QUEUE HANDLE... --by DURATION",
		Short: "Keep received messages hidden from their tag's other receivers for DURATION from now",
		Long: "Set received messages' visibility deadlines to now + --by (ChangeMessageVisibility), for work that\n" +
			"takes longer than the visibility timeout. The deadline is counted from now, not from the old deadline.\n" +
			"Handles come as arguments, or one a line from standard input with '-'. Each handle's failure is\n" +
			"reported, the others still change; the exit code is 1 if any failed.",
		Example: "  tagq extend orders <handle> --by 2m",
		Args:    handleArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("by") {
				return usageError{errors.New("give --by DURATION, e.g. --by 2m")}
			}
			return c.changeVisibility(cmd.Context(), "--by", args[0], args[1:], by, "extended")
		},
	}
	cmd.Flags().DurationVar(&by, "by", 0, "hide them this long from now (whole seconds, up to 12h)")
	return cmd
}

// visibilityResult is one handle's outcome in JSON output.
type visibilityResult struct {
	ReceiptHandle string `json:"receipt_handle"`
	OK            bool   `json:"ok"`
	Reason        string `json:"reason,omitempty"`
	Message       string `json:"message,omitempty"`
}

// changeVisibility sets each handle's deadline to now + d, 100 handles a
// ChangeMessageVisibilityBatch call, and reports each failure.
func (c *cli) changeVisibility(ctx context.Context, flag, queue string, handles []string, d time.Duration, verb string) error {
	if d < 0 || d > maxVisibility || d%time.Second != 0 {
		return usageError{fmt.Errorf("%s must be whole seconds between 0s and %s, got %s", flag, maxVisibility, d)}
	}
	if len(handles) == 1 && handles[0] == "-" {
		handles = nil
		sc := bufio.NewScanner(c.stdin)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			if h := strings.TrimSpace(sc.Text()); h != "" {
				handles = append(handles, h)
			}
		}
		if err := sc.Err(); err != nil {
			return err
		}
		if len(handles) == 0 {
			return usageError{errors.New("no receipt handles on standard input")}
		}
	}
	enc := json.NewEncoder(c.stdout)
	changed, failed := 0, 0
	for start := 0; start < len(handles); start += 100 {
		chunk := handles[start:min(start+100, len(handles))]
		entries := make([]*tagqv1.ChangeMessageVisibilityBatchEntry, len(chunk))
		for i, h := range chunk {
			entries[i] = &tagqv1.ChangeMessageVisibilityBatchEntry{Id: strconv.Itoa(start + i), ReceiptHandle: h,
				VisibilitySeconds: int32(d / time.Second)}
		}
		r, err := c.client.Messages.ChangeMessageVisibilityBatch(ctx,
			&tagqv1.ChangeMessageVisibilityBatchRequest{Queue: queue, Entries: entries})
		if err != nil {
			if changed > 0 {
				return fmt.Errorf("%w (%d of %d handles %s before)", wrapErr(err), changed, len(handles), verb)
			}
			return wrapErr(err)
		}
		results := make([]visibilityResult, len(chunk))
		for i, h := range chunk {
			results[i] = visibilityResult{ReceiptHandle: h, OK: true}
		}
		for _, f := range r.GetFailed() {
			i, err := strconv.Atoi(f.GetId())
			if err != nil || i < start || i >= start+len(chunk) {
				return fmt.Errorf("the server answered for an entry it was not sent: %q", f.GetId())
			}
			results[i-start] = visibilityResult{ReceiptHandle: chunk[i-start], Reason: f.GetReason(), Message: f.GetMessage()}
		}
		for _, res := range results {
			if res.OK {
				changed++
			} else {
				failed++
				fmt.Fprintf(c.stderr, "tagq: %s: %s [%s]\n", res.ReceiptHandle, res.Message, res.Reason)
			}
			if c.output == "json" {
				if err := enc.Encode(res); err != nil {
					return err
				}
			}
		}
	}
	if c.output != "json" {
		what := "visible again now"
		switch {
		case verb == "nacked" && d > 0:
			what = "visible again in " + d.String()
		case verb == "extended":
			what = "hidden for " + d.String() + " from now"
		}
		fmt.Fprintf(c.stdout, "%s %d of %d (%s)\n", verb, changed, len(handles), what)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d receipt handles failed (each is reported above)", failed, len(handles))
	}
	return nil
}
