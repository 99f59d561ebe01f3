package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/tags"
)

// moveLease is how long a process holds a running move task between
// steps.
const moveLease = 30 * time.Second

// taskRunning tells whether a stored task is running (a task that does
// not decode is not).
func taskRunning(raw string) bool {
	var t struct {
		State string `json:"state"`
	}
	return json.Unmarshal([]byte(raw), &t) == nil && t.State == tags.MoveRunning
}

func decodeTask(dlq, raw string) (*tags.MoveTask, error) {
	var t tags.MoveTask
	if err := json.Unmarshal([]byte(raw), &t); err != nil {
		return nil, &tags.Error{Kind: tags.KindInternal, Reason: tags.ReasonInternal, Message: "bad move task: " + err.Error()}
	}
	t.DeadLetterQueue = dlq
	t.CreateTime, t.UpdateTime = time.UnixMilli(t.CreatedMs), time.UnixMilli(t.UpdatedMs)
	return &t, nil
}

func moveErr(err error, dlq string) error {
	if err == nil {
		return nil
	}
	msg := strings.TrimPrefix(err.Error(), "ERR ")
	switch {
	case strings.HasPrefix(msg, tags.ReasonMoveInProgress):
		id := strings.TrimSpace(strings.TrimPrefix(msg, tags.ReasonMoveInProgress))
		return &tags.Error{Kind: tags.KindFailedPrecondition, Reason: tags.ReasonMoveInProgress,
			Message:  fmt.Sprintf("move task %s of %q is still running; cancel it or wait", id, dlq),
			Metadata: map[string]string{"queue": dlq, "task_id": id}}
	case strings.HasPrefix(msg, tags.ReasonMoveNotFound):
		return &tags.Error{Kind: tags.KindNotFound, Reason: tags.ReasonMoveNotFound, Field: "task_id",
			Message: fmt.Sprintf("no move task with that id on %q", dlq), Metadata: map[string]string{"queue": dlq}}
	}
	return mapErr(err, dlq, "")
}

// StartMove starts moving dead letters from dlq back to their source
// queues, each to the tag it died in, at most maxPerSecond a second
// (0: DefaultMoveRate). sourceQueue and sourceTag, when set, narrow it.
func (s *Store) StartMove(ctx context.Context, dlq, sourceQueue, sourceTag string, maxPerSecond int32) (*tags.MoveTask, error) {
	ctx = s.acked(ctx)        // S20: acknowledged once replicated
	defer s.moveStarts.Add(1) // the redrive worker looks for work again
	if e := tags.CheckName("dead_letter_queue", "queue", dlq); e != nil {
		return nil, e
	}
	if sourceQueue != "" {
		if e := tags.CheckName("source_queue", "queue", sourceQueue); e != nil {
			return nil, e
		}
	}
	if sourceTag != "" {
		if e := tags.CheckName("source_tag", "tag", sourceTag); e != nil {
			return nil, e
		}
	}
	if maxPerSecond == 0 {
		maxPerSecond = tags.DefaultMoveRate
	}
	if e := tags.CheckRange("max_messages_per_second", &maxPerSecond, 1, tags.MaxMoveRate); e != nil {
		return nil, e
	}
	k := s.qkeys(dlq)
	isDLQ, err := s.rdb.HGet(ctx, k.meta, "dlq").Result()
	if isNil(err) {
		return nil, tags.QueueNotFound(dlq)
	}
	if err != nil {
		return nil, mapErr(err, dlq, "")
	}
	if isDLQ != "1" {
		return nil, &tags.Error{Kind: tags.KindFailedPrecondition, Reason: tags.ReasonNotADeadLetterQueue, Field: "dead_letter_queue",
			Message: fmt.Sprintf("queue %q is not a dead-letter queue", dlq), Metadata: map[string]string{"queue": dlq}}
	}
	t := &tags.MoveTask{ID: newTaskID(), SourceQueue: sourceQueue, SourceTag: sourceTag, MaxPerSecond: maxPerSecond}
	// Count the matching dead letters now present; the task covers those.
	t.Total, t.End, err = s.countCovered(ctx, dlq, t, "-", "+")
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(t)
	res, err := scriptMoveTask.Run(ctx, s.rdb, []string{k.meta, k.moves}, "start", string(raw)).Text()
	if err != nil {
		return nil, moveErr(err, dlq)
	}
	s.newWork(ctx) // the DLQ's worker, on any process, runs it
	return decodeTask(dlq, res)
}

// ListMoves lists a DLQ's move tasks, newest first.
func (s *Store) ListMoves(ctx context.Context, dlq string) ([]*tags.MoveTask, error) {
	if e := tags.CheckName("dead_letter_queue", "queue", dlq); e != nil {
		return nil, e
	}
	k := s.qkeys(dlq)
	pipe := s.rdb.Pipeline()
	exists := pipe.Exists(ctx, k.meta)
	all := pipe.HGetAll(ctx, k.moves)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, mapErr(err, dlq, "")
	}
	if exists.Val() == 0 {
		return nil, tags.QueueNotFound(dlq)
	}
	out := make([]*tags.MoveTask, 0, len(all.Val()))
	for _, raw := range all.Val() {
		t, err := decodeTask(dlq, raw)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreatedMs != out[j].CreatedMs {
			return out[i].CreatedMs > out[j].CreatedMs
		}
		return out[i].Seq > out[j].Seq
	})
	return out, nil
}

// countCovered counts the dead letters from from to to (stream ids or
// "-"/"+") that t matches and some DLQ tag still needs, and returns the
// last id it examined.
func (s *Store) countCovered(ctx context.Context, dlq string, t *tags.MoveTask, from, to string) (int64, string, error) {
	k := s.qkeys(dlq)
	var n int64
	last := ""
	for {
		batch, err := s.rdb.XRangeN(ctx, k.stream, from, to, 1000).Result()
		if err != nil {
			return 0, "", mapErr(err, dlq, "")
		}
		var matching []redis.XMessage
		for _, e := range batch {
			if t.Matches(deadLetterOf(e.Values)) {
				matching = append(matching, e)
			}
			last = e.ID
		}
		needed, err := s.neededBy(ctx, dlq, matching)
		if err != nil {
			return 0, "", err
		}
		for _, ok := range needed {
			if ok {
				n++
			}
		}
		if len(batch) < 1000 {
			return n, last, nil
		}
		from = nextStreamID(last)
	}
}

// CancelMove stops a running task; dead letters already moved stay moved.
// The task it returns (and ListMoves from then on) counts the dead letters
// it leaves in the DLQ as remaining.
func (s *Store) CancelMove(ctx context.Context, dlq, id string) (*tags.MoveTask, error) {
	ctx = s.acked(ctx) // S20: acknowledged once replicated
	if e := tags.CheckName("dead_letter_queue", "queue", dlq); e != nil {
		return nil, e
	}
	k := s.qkeys(dlq)
	res, err := scriptMoveTask.Run(ctx, s.rdb, []string{k.meta, k.moves}, "cancel", id).Text()
	if err != nil {
		return nil, moveErr(err, dlq)
	}
	t, err := decodeTask(dlq, res)
	if err != nil || t.State != tags.MoveCancelled || t.Left != nil {
		return t, err
	}
	// Stopped: no step moves its cursor any more. Count what it leaves
	// behind and keep the count with the task.
	left := int64(0)
	if t.End != "" {
		from := "-"
		if t.Cursor != "" {
			from = nextStreamID(t.Cursor)
		}
		if left, _, err = s.countCovered(ctx, dlq, t, from, t.End); err != nil {
			return nil, err
		}
	}
	return s.recordLeft(ctx, dlq, id, left)
}

// recordLeft stores left in a cancelled task that has no count yet (a
// concurrent cancel may have stored one first: that one stands) and
// returns the task.
func (s *Store) recordLeft(ctx context.Context, dlq, id string, left int64) (*tags.MoveTask, error) {
	k := s.qkeys(dlq)
	var out *tags.MoveTask
	for attempt := 0; ; attempt++ {
		err := s.rdb.Watch(ctx, func(tx *redis.Tx) error {
			raw, err := tx.HGet(ctx, k.moves, id).Result()
			if err != nil {
				return err
			}
			if out, err = decodeTask(dlq, raw); err != nil {
				return err
			}
			if out.State != tags.MoveCancelled || out.Left != nil {
				return nil
			}
			out.Left = &left
			enc, _ := json.Marshal(out)
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.HSet(ctx, k.moves, id, string(enc))
				return nil
			})
			if err != nil {
				return err
			}
			return s.acks.Wait(ctx, tx, k.moves) // S20: EXEC cannot carry the WAIT
		}, k.moves)
		switch {
		case err == nil:
			return out, nil
		case isNil(err):
			return nil, moveErr(errors.New(tags.ReasonMoveNotFound), dlq) // pruned meanwhile
		case errors.Is(err, redis.TxFailedErr) && attempt < 5:
			continue
		}
		if _, ok := tags.AsError(err); ok {
			return nil, err
		}
		return nil, mapErr(err, dlq, "")
	}
}

// RunMove works on dlq's running task, if any and if no other process
// holds it: it moves up to the task's rate for one period of dead letters
// and reports how many. It marks the task COMPLETED once every dead letter
// it covers was examined.
func (s *Store) RunMove(ctx context.Context, dlq string, period time.Duration) (int, error) {
	ctx = s.acked(ctx) // S20: acknowledged once replicated
	k := s.qkeys(dlq)
	tasks, err := s.rdb.HGetAll(ctx, k.moves).Result()
	if err != nil {
		return 0, mapErr(err, dlq, "")
	}
	var id string
	for tid, raw := range tasks {
		if taskRunning(raw) {
			id = tid
		}
	}
	if id == "" {
		return 0, nil
	}
	res, err := scriptMoveTask.Run(ctx, s.rdb, []string{k.meta, k.moves}, "lease", id, s.owner, moveLease.Milliseconds()).Result()
	if err != nil {
		return 0, moveErr(err, dlq)
	}
	raw, ok := res.(string)
	if !ok {
		return 0, nil // not running, or another process holds it
	}
	t, err := decodeTask(dlq, raw)
	if err != nil {
		return 0, err
	}
	budget := max(1, int(float64(t.MaxPerSecond)*period.Seconds()))
	from := "-"
	if t.Cursor != "" {
		from = nextStreamID(t.Cursor)
	}
	moved := 0
	for moved < budget {
		if t.End == "" || (from != "-" && idAfter(from, t.End)) {
			return moved, s.finishMove(ctx, t, tags.MoveCompleted, "")
		}
		batch, err := s.rdb.XRangeN(ctx, k.stream, from, t.End, int64(min(budget-moved, 100))).Result()
		if err != nil {
			return moved, mapErr(err, dlq, "")
		}
		if len(batch) == 0 {
			return moved, s.finishMove(ctx, t, tags.MoveCompleted, "")
		}
		needed, err := s.neededBy(ctx, dlq, batch)
		if err != nil {
			return moved, err
		}
		for i, e := range batch {
			from = nextStreamID(e.ID)
			dl := deadLetterOf(e.Values)
			outcome, note := "skip", ""
			if t.Matches(dl) && needed[i] {
				outcome, note, err = s.moveBack(ctx, dlq, e.ID, e.Values, dl)
				if err != nil {
					return moved, err
				}
			}
			if ok, err := s.moveStep(ctx, dlq, t.ID, e.ID, outcome, note); err != nil || !ok {
				return moved, err // cancelled, or the lease went to another process
			}
			if outcome == "moved" {
				moved++
			}
		}
	}
	return moved, nil
}

// moveBack adds one dead letter to its source queue for its source tag
// (deduplicated). The outcome is "moved", or "failed" with a note when the
// queue or tag is gone.
func (s *Store) moveBack(ctx context.Context, dlq, id string, v map[string]any, dl *tags.DeadLetter) (string, string, error) {
	body, _ := v["b"].(string)
	a, _ := v["a"].(string)
	tp, _ := v["tp"].(string)
	pr, _ := v["pr"].(string) // the priority it had (a priority queue's dead letter)
	attrs := decodeAttrs(a)
	delete(attrs, tags.SourceQueueAttribute)
	sk := s.qkeys(dl.SourceQueue)
	res, err := scriptMoveAdd.Run(ctx, s.rdb, []string{sk.meta, sk.stream, sk.dedupe, sk.filters, sk.tags, sk.sizes, sk.holes},
		"mv/"+dlq+"/"+id, dl.SourceTag, body, encodeAttrs(attrs), dl.OriginalMessageID, dl.MoveCount+1,
		len(body)+tags.AttributesSize(attrs), tp, pr).Int()
	if err != nil {
		return "", "", mapErr(err, dl.SourceQueue, dl.SourceTag)
	}
	switch res {
	case -1:
		return "failed", fmt.Sprintf("source queue %q does not exist", dl.SourceQueue), nil
	case -2:
		return "failed", fmt.Sprintf("source tag %q of queue %q does not exist", dl.SourceTag, dl.SourceQueue), nil
	}
	return "moved", "", nil
}

func (s *Store) moveStep(ctx context.Context, dlq, taskID, id, outcome, note string) (bool, error) {
	k := s.qkeys(dlq)
	var ok int
	err := s.withTags(ctx, dlq, func(names, tagKeys []string) error {
		keys := append(append([]string{k.meta, k.stream, k.moves, k.tags}, tagKeys...), k.holes)
		args := append([]any{taskID, s.owner, id, outcome, note}, toAny(names)...)
		var err error
		ok, err = scriptMoveStep.Run(ctx, s.rdb, keys, args...).Int()
		return mapErr(err, dlq, "")
	})
	return ok == 1, err
}

func (s *Store) finishMove(ctx context.Context, t *tags.MoveTask, state, note string) error {
	k := s.qkeys(t.DeadLetterQueue)
	return moveErr(scriptMoveTask.Run(ctx, s.rdb, []string{k.meta, k.moves}, "finish", t.ID, s.owner, state, note).Err(),
		t.DeadLetterQueue)
}

// MoveWork lists the DLQs that have a running move task (one pipelined
// round trip for all queues).
func (s *Store) MoveWork(ctx context.Context) ([]string, error) {
	names, err := s.QueueNames(ctx)
	if err != nil {
		return nil, err
	}
	return s.MoveWorkOf(ctx, names)
}

// MoveWorkOf is MoveWork among the named queues only (a background
// worker's share of them): one pipelined round trip.
func (s *Store) MoveWorkOf(ctx context.Context, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	tasks := make([]*redis.StringSliceCmd, len(names))
	for i, n := range names {
		tasks[i] = pipe.HVals(ctx, s.qkeys(n).moves)
	}
	if _, err := pipe.Exec(ctx); err != nil && !isNil(err) {
		return nil, mapErr(err, "", "")
	}
	var out []string
	for i, n := range names {
		for _, raw := range tasks[i].Val() {
			if taskRunning(raw) {
				out = append(out, n)
				break
			}
		}
	}
	return out, nil
}

// neededBy reports, per entry, whether some tag of the DLQ still needs it
// (see scripts/moveneeded.lua).
func (s *Store) neededBy(ctx context.Context, dlq string, entries []redis.XMessage) ([]bool, error) {
	out := make([]bool, len(entries))
	if len(entries) == 0 {
		return out, nil
	}
	k := s.qkeys(dlq)
	err := s.withTags(ctx, dlq, func(names []string, _ []string) error {
		keys := []string{k.stream, k.tags}
		for _, n := range names {
			tk := k.tag(n)
			keys = append(keys, tk.state, tk.visible, tk.parked)
		}
		args := append([]any{len(names)}, toAny(names)...)
		for _, e := range entries {
			a, _ := e.Values["a"].(string)
			only, _ := e.Values["only"].(string)
			args = append(args, e.ID, a, only)
		}
		res, err := scriptMoveNeeded.Run(ctx, s.rdb, keys, args...).Int64Slice()
		if err != nil {
			return mapErr(err, dlq, "")
		}
		for i, v := range res {
			out[i] = v == 1
		}
		return nil
	})
	return out, err
}

func deadLetterOf(v map[string]any) *tags.DeadLetter {
	raw, _ := v["x"].(string)
	if raw == "" {
		return nil
	}
	var dl tags.DeadLetter
	if json.Unmarshal([]byte(raw), &dl) != nil {
		return nil
	}
	return &dl
}

func nextStreamID(id string) string {
	ms, seq, _ := parseID(id)
	return formatID(ms, seq+1)
}

func newTaskID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
