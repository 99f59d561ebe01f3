package redisstore

import (
	"context"
	"embed"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/internal/rediserr"
	"github.com/tagq/tagq/tags"
)

//go:embed scripts/*.lua
var scriptFS embed.FS

// The Lua scripts, each with what it uses of scripts/lib.lua prepended. See each file's
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
	scriptPeek        = mustScript("peek")
	scriptJanitor     = mustScript("janitor")
	scriptSweep       = mustScript("sweep")
	scriptDLQAdd      = mustScript("dlqadd")
	scriptMoveAdd     = mustScript("moveadd")
	scriptMoveStep    = mustScript("movestep")
	scriptMoveTask    = mustScript("movetask")
	scriptMoveNeeded  = mustScript("moveneeded")
	scriptSettle      = mustScript("settle")
	scriptSendPost    = mustScript("sendpost")
	scriptWorkers     = mustScript("workers")
	scriptUnlease     = mustScript("unlease")
	scriptRates       = mustScript("rates")
	scriptRatesLease  = mustScript("rateslease")
	scriptSeek        = mustScript("seek")

	allScripts = []*luaScript{scriptCreateQueue, scriptUpdateQueue, scriptDeleteQueue, scriptPurge,
		scriptCreateTag, scriptDeleteTag, scriptTagState, scriptSend, scriptReceive,
		scriptPeek, scriptJanitor, scriptSweep, scriptDLQAdd,
		scriptMoveAdd, scriptMoveStep, scriptMoveTask, scriptMoveNeeded, scriptSettle, scriptSendPost, scriptWorkers, scriptUnlease, scriptSeek,
		scriptRates, scriptRatesLease}
)

// luaScript is one script in its builds: prod (lib.lua + the script)
// and test (testcount.lua + lib.lua + testclock.lua + the script), whose
// clock tests drive and whose Redis commands they may count
// (of lib.lua, what the build uses: see luaLib); and each of them for the
// embedded store (Config.Embedded: EMBEDDED set after lib.lua, for the
// scripts whose lib uses it; the others' embedded build is their build).
// A store runs one build, chosen by Config.TestClock and Config.Embedded,
// so production scripts read no test hook.
type luaScript struct {
	prod, test       *redis.Script
	embProd, embTest *redis.Script
}

func mustScript(name string) *luaScript {
	read := func(f string) string {
		b, err := scriptFS.ReadFile("scripts/" + f + ".lua")
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	lib, body, clock, count := parseLib(read("lib")), read(name), read("testclock"), read("testcount")
	prodLib, testLib := lib.shake(body), lib.shake(clock+body)
	l := &luaScript{
		prod: redis.NewScript(prodLib + "\n" + body),
		test: redis.NewScript(count + "\n" + testLib + "\n" + clock + "\n" + body),
	}
	l.embProd, l.embTest = l.prod, l.test
	if strings.Contains(prodLib, embeddedDef) {
		l.embProd = redis.NewScript(prodLib + "\n" + embeddedSet + "\n" + body)
	}
	if strings.Contains(testLib, embeddedDef) {
		l.embTest = redis.NewScript(count + "\n" + testLib + "\n" + clock + "\n" + embeddedSet + "\n" + body)
	}
	return l
}

// The embedded store's switch in lib.lua, and its setting in its builds.
const (
	embeddedDef = "local EMBEDDED = false"
	embeddedSet = "EMBEDDED = true"
)

// luaLib is lib.lua as its top-level definitions, each with the comment
// above it. A script gets only those it uses (directly or through others):
// every definition runs on every call (each local function is a closure
// made anew), and the whole of lib.lua cost about 26,000 instructions of
// Redis per call (callgrind, Redis 7.0.15), more than most scripts' work.
type luaLib []luaDef

type luaDef struct {
	names []string // the locals it defines
	text  string
}

var (
	luaIdent    = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	luaLocalDef = regexp.MustCompile(`^local (?:function ([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_, ]*)=)`)
)

// parseLib splits lib.lua: a definition is "local function f(...)" up to
// the next "end" at the start of a line, or a one-line "local a, b = ...";
// comment lines go with the definition after them.
func parseLib(src string) luaLib {
	var out luaLib
	var cur []string
	inFunc := false
	for _, line := range strings.Split(src, "\n") {
		cur = append(cur, line)
		switch {
		case inFunc:
			if line == "end" {
				out[len(out)-1].text = strings.Join(cur, "\n")
				cur, inFunc = nil, false
			}
		case strings.HasPrefix(line, "local "):
			m := luaLocalDef.FindStringSubmatch(line)
			if m == nil {
				panic("lib.lua: cannot parse " + line)
			}
			d := luaDef{}
			if m[1] != "" {
				d.names = []string{m[1]}
				inFunc = true
			} else {
				for _, n := range strings.Split(m[2], ",") {
					d.names = append(d.names, strings.TrimSpace(n))
				}
				d.text = strings.Join(cur, "\n")
				cur = nil
			}
			out = append(out, d)
		case line != "" && !strings.HasPrefix(line, "--"):
			panic("lib.lua: top-level statement outside a definition: " + line)
		}
	}
	if inFunc {
		panic("lib.lua: unterminated function")
	}
	return out
}

// shake is the definitions body needs, in lib.lua's order. A definition
// can use only earlier ones, so one pass from the end finds them all.
// (Names are matched as words anywhere, comments and strings included:
// at worst a definition too many.)
func (l luaLib) shake(body string) string {
	need := map[string]bool{}
	for _, w := range luaIdent.FindAllString(body, -1) {
		need[w] = true
	}
	keep := make([]bool, len(l))
	for i := len(l) - 1; i >= 0; i-- {
		for _, n := range l[i].names {
			if need[n] {
				keep[i] = true
			}
		}
		if keep[i] {
			for _, w := range luaIdent.FindAllString(l[i].text, -1) {
				need[w] = true
			}
		}
	}
	var b strings.Builder
	for i, d := range l {
		if keep[i] {
			b.WriteString(d.text)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// client is the store's Redis client, with the script build it runs.
type client struct {
	redis.UniversalClient
	testClock bool
	embedded  bool
}

// build is the build c's store runs (nil: the production build).
func (l *luaScript) build(c *client) *redis.Script {
	switch {
	case c == nil:
		return l.prod
	case c.testClock && c.embedded:
		return l.embTest
	case c.testClock:
		return l.test
	case c.embedded:
		return l.embProd
	}
	return l.prod
}

// Run runs the build of c's store (EVALSHA, falling back to EVAL). c is
// the store's client; any other Scripter runs the production build.
func (l *luaScript) Run(ctx context.Context, c redis.Scripter, keys []string, args ...any) *redis.Cmd {
	sc, _ := c.(*client)
	return l.build(sc).Run(ctx, c, keys, args...)
}

// loadScripts preloads every script (on every shard of a cluster), so the
// first calls run as EVALSHA. Script.Run still falls back to EVAL after a
// Redis restart flushed the cache.
func loadScripts(ctx context.Context, c *client) error {
	for _, s := range allScripts {
		if err := s.build(c).Load(ctx, c).Err(); err != nil {
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
// pipeline cannot fall back from EVALSHA to EVAL by itself, so the calls
// Redis answered NOSCRIPT (it lost its scripts: a restart, a SCRIPT FLUSH)
// run again, alone, as EVAL, which also caches the script again. Only
// those: the others ran.
func (s *Store) evalPipelined(ctx context.Context, ls *luaScript, calls []scriptCall) ([]*redis.Cmd, error) {
	script := ls.build(s.rdb)
	cmds := make([]*redis.Cmd, len(calls))
	if len(calls) == 0 {
		return cmds, nil
	}
	pipe := s.rdb.Pipeline()
	for i, c := range calls {
		cmds[i] = script.EvalSha(ctx, pipe, c.keys, c.args...)
	}
	_, _ = pipe.Exec(ctx) // errors are read per command
	var lost []int
	for i, c := range cmds {
		if err := c.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			lost = append(lost, i)
		} else if err != nil && !isScriptReply(err) {
			return nil, mapErr(err, "", "")
		}
	}
	if len(lost) == 0 {
		return cmds, nil
	}
	pipe = s.rdb.Pipeline()
	for _, i := range lost {
		cmds[i] = script.Eval(ctx, pipe, calls[i].keys, calls[i].args...)
	}
	_, _ = pipe.Exec(ctx)
	for _, i := range lost {
		if err := cmds[i].Err(); err != nil && !isScriptReply(err) {
			return nil, mapErr(err, "", "")
		}
	}
	return cmds, nil
}

// isScriptReply tells an error a script returned (a redis.Error reply)
// from a failure to reach Redis.
func isScriptReply(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr)
}

// errTagsChanged: the tag list a multi-tag script was given is stale.
var errTagsChanged = errors.New("TAGS_CHANGED")

// mapErr turns a Redis or script error into the engine's error for queue q
// and tag t.
func mapErr(err error, q, t string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if _, ok := tags.AsError(err); ok {
		return err
	}
	// Redis prefixes a bare error_reply code with "ERR ".
	msg := strings.TrimPrefix(err.Error(), "ERR ")
	switch {
	case strings.HasPrefix(msg, tags.ReasonQueueNotFound):
		return tags.QueueNotFound(q)
	case strings.HasPrefix(msg, tags.ReasonTagNotFound):
		return tags.TagNotFound(q, t)
	case strings.HasPrefix(msg, tags.ReasonQueueAlreadyExists):
		return &tags.Error{Kind: tags.KindAlreadyExists, Reason: tags.ReasonQueueAlreadyExists, Field: "name",
			Message: "queue " + q + " already exists", Metadata: map[string]string{"queue": q}}
	case strings.HasPrefix(msg, tags.ReasonTagAlreadyExists):
		return &tags.Error{Kind: tags.KindAlreadyExists, Reason: tags.ReasonTagAlreadyExists, Field: "name",
			Message: "tag " + t + " of queue " + q + " already exists", Metadata: map[string]string{"queue": q, "tag": t}}
	case strings.HasPrefix(msg, tags.ReasonTooManyTags):
		return &tags.Error{Kind: tags.KindResourceExhausted, Reason: tags.ReasonTooManyTags,
			Message: "queue " + q + " already has the maximum number of tags", Metadata: map[string]string{"queue": q, "limit": strconv.Itoa(tags.MaxTagsPerQueue)}}
	case strings.HasPrefix(msg, tags.ReasonNotASourceQueue):
		return tags.NotASourceQueue(q)
	case strings.HasPrefix(msg, "TAGS_CHANGED"):
		return errTagsChanged
	}
	return rediserr.StorageError(err)
}
