package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	tagq "github.com/tagq/tagq/clients/go"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// when prints a time in RFC 3339, or "-" when the API left it unset (never
// the zero time of 1970).
func when(t *timestamppb.Timestamp) string {
	if t == nil {
		return "-"
	}
	return t.AsTime().UTC().Format(time.RFC3339)
}

// filterText writes a tag filter as its --filter flags would: region=eu AND vip.
func filterText(f *tagqv1.TagFilter) string {
	if f == nil || len(f.GetConditions()) == 0 {
		return "none (every message)"
	}
	conds := make([]string, len(f.GetConditions()))
	for i, c := range f.GetConditions() {
		conds[i] = c.GetName()
		if c.StringValue != nil {
			conds[i] += "=" + c.GetStringValue()
		}
	}
	op := " AND "
	if f.GetOperator() == tagqv1.TagFilter_OPERATOR_OR {
		op = " OR "
	}
	return strings.Join(conds, op)
}

// printTag shows everything GetTag returns about one tag; JSON output is
// the Tag as the API returns it.
func (c *cli) printTag(t *tagqv1.Tag) error {
	if c.output == "json" {
		return c.print([]proto.Message{t}, nil)
	}
	w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "name\t%s\n", t.GetName())
	fmt.Fprintf(w, "created\t%s\n", when(t.GetCreateTime()))
	start := "messages sent from its creation on"
	switch st := t.GetStartTime(); {
	case st == nil:
	case st.GetSeconds() == 0 && st.GetNanos() == 0:
		start = "the oldest retained message"
	default:
		start = "messages sent from " + when(st)
	}
	fmt.Fprintf(w, "reads\t%s\n", start)
	fmt.Fprintf(w, "filter\t%s\n", filterText(t.GetFilter()))
	vis := "the queue's"
	if t.VisibilityTimeoutSeconds != nil {
		vis = dur(t.GetVisibilityTimeoutSeconds())
	}
	fmt.Fprintf(w, "visibility\t%s\n", vis)
	if t.ReadQuotaPerSecond != nil {
		fmt.Fprintf(w, "read quota\t%d/s (0: none; in place of the queue's)\n", t.GetReadQuotaPerSecond())
	}
	if ua := t.GetUserAttributes(); len(ua) > 0 {
		keys := make([]string, 0, len(ua))
		for k := range ua {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			keys[i] = k + "=" + ua[k]
		}
		fmt.Fprintf(w, "user attributes\t%s\n", strings.Join(keys, ", "))
	}
	s := t.GetState()
	fmt.Fprintf(w, "available\t%d\nin flight\t%d\ndelayed\t%d\n", s.GetAvailable(), s.GetInFlight(), s.GetDelayed())
	age := "-"
	if s.GetAvailable() > 0 {
		age = (time.Duration(s.GetOldestAvailableAgeSeconds()) * time.Second).String()
	}
	fmt.Fprintf(w, "oldest available age\t%s\n", age)
	fmt.Fprintf(w, "received total\t%d\ndeleted total\t%d\ndead total\t%d\nexpired total\t%d\n", s.GetReceivedTotal(),
		s.GetDeletedTotal(), s.GetDeadTotal(), s.GetExpiredTotal())
	return w.Flush()
}

// peekLimit is the most PeekMessage returns in one call; dead pages on.
const peekLimit = 100

// deadMax bounds what dead lists in one run.
const deadMax = 100_000

func (c *cli) deadCmd() *cobra.Command {
	var sourceQueue string
	var max int
	cmd := &cobra.Command{
		Use: "dead DLQ", Short: "List the dead letters of a dead-letter queue with where they came from and why",
		Long: "List the dead letters available in a dead-letter queue, oldest first, without receiving them\n" +
			"(PeekMessage on its default tag, page by page). It shows at most --max; when the queue holds more,\n" +
			"a note on standard error says so.",
		Example: "  tagq dead orders-dlq\n  tagq dead orders-dlq --source-queue orders --max 20 -o json",
		Args:    exactArgs(1, "DLQ"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if max < 1 || max > deadMax {
				return usageError{fmt.Errorf("--max must be between 1 and %d, got %d", deadMax, max)}
			}
			q, err := c.client.GetQueue(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if !q.GetDeadLetterQueue() {
				msg := fmt.Sprintf("queue %s is not a dead-letter queue", args[0])
				if dlq := q.GetRedrivePolicy().GetDeadLetterQueue(); dlq != "" {
					msg += fmt.Sprintf("; its dead letters go to %s: `tagq dead %s`", dlq, dlq)
				} else {
					msg += "; `tagq peek` shows a queue's messages"
				}
				return fmt.Errorf("%s", msg)
			}
			var ms []*tagq.Message
			more := false
			for token := ""; ; {
				page, next, err := c.client.PeekPage(cmd.Context(), args[0], "", min(peekLimit, max-len(ms)), token)
				if err != nil {
					return err
				}
				ms = append(ms, page...)
				if next == "" {
					break
				}
				if len(ms) >= max {
					more = true
					break
				}
				token = next
			}
			var keep []*tagq.Message
			for _, m := range ms {
				if sourceQueue == "" || m.GetDeadLetter().GetSourceQueueName() == sourceQueue {
					keep = append(keep, m)
				}
			}
			if avail := q.GetState().GetDefaultTag().GetAvailable(); more && int64(len(ms)) < avail {
				filtered := ""
				if sourceQueue != "" {
					filtered = fmt.Sprintf(" (%d of them from %s)", len(keep), sourceQueue)
				}
				fmt.Fprintf(c.stderr, "tagq: showing the first %d of %d dead letters available in %s%s; "+
					"--max shows more\n", len(ms), avail, args[0], filtered)
			}
			return printAll(c, keep, func(w *tabwriter.Writer) {
				fmt.Fprintln(w, "MESSAGE\tSOURCE QUEUE\tSOURCE TAG\tRECEIVES\tREASON\tDIED\tORIGINAL ID\tBODY")
				for _, m := range keep {
					d := m.GetDeadLetter()
					fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", m.GetMessageId(), orDash(d.GetSourceQueueName()),
						orDash(d.GetSourceTag()), d.GetOriginalReceiveCount(), orDash(d.GetReason()), when(d.GetDeadTimestamp()),
						orDash(d.GetOriginalMessageId()), bodyText(m.GetBody()))
				}
			})
		},
	}
	cmd.Flags().StringVar(&sourceQueue, "source-queue", "", "only dead letters of this queue")
	cmd.Flags().IntVar(&max, "max", peekLimit, fmt.Sprintf("show at most this many (1-%d)", deadMax))
	return cmd
}

// sendFile sends the whole of a file (or of standard input, for "-") as
// one message. Its size is the server's to judge: a body over the queue's
// max_message_bytes gets the server's MESSAGE_TOO_LARGE.
func (c *cli) sendFile(ctx context.Context, queue, path string, m tagq.Outgoing) error {
	var err error
	if path == "-" {
		m.Body, err = io.ReadAll(c.stdin)
	} else {
		m.Body, err = os.ReadFile(path)
	}
	if err != nil {
		return usageError{fmt.Errorf("--file: %w", err)}
	}
	id, err := c.client.Send(ctx, queue, m)
	if err != nil {
		return err
	}
	if c.output == "json" {
		fmt.Fprintf(c.stdout, "{\"message_id\":%q}\n", id)
	} else {
		fmt.Fprintln(c.stdout, id)
	}
	return nil
}
