package tags

import (
	"context"
	"embed"
	"errors"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed scripts/*.lua
var scriptFS embed.FS

// The Lua scripts, each with scripts/lib.lua prepended. See each file's
// header for KEYS, ARGV and the reply.
var (
	scriptCreateQueue = mustScript("createqueue")
	scriptUpdateQueue = mustScript("updatequeue")
	scriptDeleteQueue = mustScript("deletequeue")
	scriptPurge       = mustScript("purge")
	scriptCreateTag   = mustScript("createtag")
	scriptDeleteTag   = mustScript("deletetag")
	scriptTagState    = mustScript("tagstate")
	scriptSend        = mustScript("send")
	scriptReceive     = mustScript("receive")
	scriptDelete      = mustScript("delete")
	scriptVisibility  = mustScript("visibility")
	scriptPeek        = mustScript("peek")
	scriptJanitor     = mustScript("janitor")
	scriptDead        = mustScript("dead")
	scriptSweep       = mustScript("sweep")
	scriptDLQAdd      = mustScript("dlqadd")
	scriptMoveAdd     = mustScript("moveadd")
	scriptMoveStep    = mustScript("movestep")
	scriptMoveTask    = mustScript("movetask")
	scriptMoveNeeded  = mustScript("moveneeded")
	scriptSettle      = mustScript("settle")

	allScripts = []*luaScript{scriptCreateQueue, scriptUpdateQueue, scriptDeleteQueue, scriptPurge,
		scriptCreateTag, scriptDeleteTag, scriptTagState, scriptSend, scriptReceive, scriptDelete,
		scriptVisibility, scriptPeek, scriptJanitor, scriptDead, scriptSweep, scriptDLQAdd,
		scriptMoveAdd, scriptMoveStep, scriptMoveTask, scriptMoveNeeded, scriptSettle}
)

// luaScript is one script in its two builds: prod (lib.lua + the script)
// and test (lib.lua + testclock.lua + the script), whose clock tests drive.
// A store runs one build, chosen by Config.TestClock, so production
// scripts read no test hook.
type luaScript struct {
	prod, test *redis.Script
}

func mustScript(name string) *luaScript {
	read := func(f string) string {
		b, err := scriptFS.ReadFile("scripts/" + f + ".lua")
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	lib, body := read("lib"), read(name)
	return &luaScript{
		prod: redis.NewScript(lib + "\n" + body),
		test: redis.NewScript(lib + "\n" + read("testclock") + "\n" + body),
	}
}

// client is the store's Redis client, with the script build it runs.
type client struct {
	redis.UniversalClient
	testClock bool
}

func (l *luaScript) build(testClock bool) *redis.Script {
	if testClock {
		return l.test
	}
	return l.prod
}

// Run runs the build of c's store (EVALSHA, falling back to EVAL). c is
// the store's client; any other Scripter runs the production build.
func (l *luaScript) Run(ctx context.Context, c redis.Scripter, keys []string, args ...any) *redis.Cmd {
	tc := false
	if sc, ok := c.(*client); ok {
		tc = sc.testClock
	}
	return l.build(tc).Run(ctx, c, keys, args...)
}

// loadScripts preloads every script (on every shard of a cluster), so the
// first calls run as EVALSHA. Script.Run still falls back to EVAL after a
// Redis restart flushed the cache.
func loadScripts(ctx context.Context, c *client) error {
	for _, s := range allScripts {
		if err := s.build(c.testClock).Load(ctx, c).Err(); err != nil {
			return err
		}
	}
	return nil
}

// scriptCall is one call of a script: its keys and arguments.
type scriptCall struct {
	keys []string
	args []any
}

// evalPipelined runs script once per call in one pipelined round trip and
// returns the commands in order (each with its own result or error). A
// pipeline cannot fall back from EVALSHA to EVAL, so if Redis lost its
// scripts (a restart) they are loaded again and the calls repeated once.
func (s *Store) evalPipelined(ctx context.Context, ls *luaScript, calls []scriptCall) ([]*redis.Cmd, error) {
	script := ls.build(s.rdb.testClock)
	for attempt := 0; ; attempt++ {
		pipe := s.rdb.Pipeline()
		cmds := make([]*redis.Cmd, len(calls))
		for i, c := range calls {
			cmds[i] = script.EvalSha(ctx, pipe, c.keys, c.args...)
		}
		if len(cmds) > 0 {
			_, _ = pipe.Exec(ctx) // errors are read per command
		}
		lost := false
		for _, c := range cmds {
			if err := c.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
				lost = true
			} else if err != nil && !isScriptReply(err) {
				return nil, mapErr(err, "", "")
			}
		}
		if !lost || attempt == 1 {
			return cmds, nil
		}
		if err := loadScripts(ctx, s.rdb); err != nil {
			return nil, unavailable(err)
		}
	}
}

// isScriptReply tells an error a script returned (a redis.Error reply)
// from a failure to reach Redis.
func isScriptReply(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr)
}

// errTagsChanged: the tag list a multi-tag script was given is stale.
var errTagsChanged = errors.New("TAGS_CHANGED")

// Redis error replies that mean the backend cannot serve now (as opposed to
// a bug in a script or a wrong command).
var unavailablePrefixes = []string{"OOM", "LOADING", "BUSY", "MASTERDOWN", "READONLY", "CLUSTERDOWN",
	"TRYAGAIN", "NOREPLICAS", "MISCONF"}

// mapErr turns a Redis or script error into the engine's error for queue q
// and tag t.
func mapErr(err error, q, t string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if _, ok := AsError(err); ok {
		return err
	}
	// Redis prefixes a bare error_reply code with "ERR ".
	msg := strings.TrimPrefix(err.Error(), "ERR ")
	switch {
	case strings.HasPrefix(msg, ReasonQueueNotFound):
		return queueNotFound(q)
	case strings.HasPrefix(msg, ReasonTagNotFound):
		return tagNotFound(q, t)
	case strings.HasPrefix(msg, ReasonQueueAlreadyExists):
		return &Error{Kind: KindAlreadyExists, Reason: ReasonQueueAlreadyExists, Field: "name",
			Message: "queue " + q + " already exists", Metadata: map[string]string{"queue": q}}
	case strings.HasPrefix(msg, ReasonTagAlreadyExists):
		return &Error{Kind: KindAlreadyExists, Reason: ReasonTagAlreadyExists, Field: "name",
			Message: "tag " + t + " of queue " + q + " already exists", Metadata: map[string]string{"queue": q, "tag": t}}
	case strings.HasPrefix(msg, ReasonTooManyTags):
		return &Error{Kind: KindResourceExhausted, Reason: ReasonTooManyTags,
			Message: "queue " + q + " already has the maximum number of tags", Metadata: map[string]string{"queue": q, "limit": strconv.Itoa(MaxTagsPerQueue)}}
	case strings.HasPrefix(msg, ReasonNotASourceQueue):
		return notASourceQueue(q)
	case strings.HasPrefix(msg, "TAGS_CHANGED"):
		return errTagsChanged
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		for _, p := range unavailablePrefixes {
			if strings.HasPrefix(msg, p) {
				return unavailable(err)
			}
		}
		return &Error{Kind: KindInternal, Reason: ReasonInternal, Message: "storage error: " + msg}
	}
	return unavailable(err)
}

func notASourceQueue(q string) *Error {
	return &Error{Kind: KindFailedPrecondition, Reason: ReasonNotASourceQueue,
		Message:  "queue " + q + " has no redrive policy: there is no dead-letter queue to send messages to",
		Metadata: map[string]string{"queue": q}}
}
