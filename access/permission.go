package access

import (
	"math/bits"
	"strings"
)

// Permission is one of EMQ's permission levels: one value per principal per
// queue (name or prefix), not combined (EMQ's setPermission takes one).
type Permission string

// The levels, as EMQ defines them (docs.api.xiaomi.com/emq QueuePermission),
// mapped onto tagq's RPCs by actionsOf.
const (
	None        Permission = "NONE"
	Send        Permission = "SEND"
	Receive     Permission = "RECEIVE"
	SendReceive Permission = "SEND_RECEIVE"
	Handle      Permission = "HANDLE"
	SendHandle  Permission = "SEND_HANDLE"
	GetInfo     Permission = "GET_QUEUE_INFO"
	UseQueue    Permission = "USE_QUEUE"
	AdminQueue  Permission = "ADMIN_QUEUE"
	Peek        Permission = "PEEK"
	DeletePeek  Permission = "DELETE_PEEK"
	FullControl Permission = "FULL_CONTROL"
)

// Levels lists every level, weakest first (as EMQ numbers them).
var Levels = []Permission{None, Send, Receive, SendReceive, Handle, SendHandle, GetInfo, UseQueue, AdminQueue, Peek,
	DeletePeek, FullControl}

// Action is what a call does to a queue; a level allows a set of actions.
type Action uint16

// The actions. Each RPC needs one (server's method table).
const (
	// ActSend: SendMessage, SendMessageBatch, Publish frames.
	ActSend Action = 1 << iota
	// ActReceive: ReceiveMessage, opening a Consume stream.
	ActReceive
	// ActHandle: delete, change visibility and dead-letter with a receipt
	// handle (or a Consume stream's acks, nacks, extends and deads);
	// with ActReceive, SeekTag (a replay receives again, a skip settles).
	ActHandle
	// ActInfo: GetQueue, GetTag, ListTags, ListMessageMoves.
	ActInfo
	// ActPeek: PeekMessage.
	ActPeek
	// ActDeletePeek: EMQ's deletePeekMessage (delete a message never
	// received). tagq has no such call yet; the level is kept for parity.
	ActDeletePeek
	// ActAdmin: CreateQueue, UpdateQueue, DeleteQueue, PurgeQueue,
	// CreateTag, DeleteTag, StartMessageMove, CancelMessageMove.
	ActAdmin
	// ActGrant: set and revoke other principals' permissions on the queue.
	ActGrant
)

const allActions = ActSend | ActReceive | ActHandle | ActInfo | ActPeek | ActDeletePeek | ActAdmin | ActGrant

// actionsOf is what each level allows (EMQ: HANDLE = receive, change
// visibility and delete; USE_QUEUE = SEND_HANDLE + GET_QUEUE_INFO;
// ADMIN_QUEUE = everything but setting permissions; FULL_CONTROL =
// everything, the owner's level).
var actionsOf = map[Permission]Action{
	None:        0,
	Send:        ActSend,
	Receive:     ActReceive,
	SendReceive: ActSend | ActReceive,
	Handle:      ActReceive | ActHandle,
	SendHandle:  ActSend | ActReceive | ActHandle,
	GetInfo:     ActInfo,
	UseQueue:    ActSend | ActReceive | ActHandle | ActInfo,
	AdminQueue:  allActions &^ ActGrant,
	Peek:        ActPeek,
	DeletePeek:  ActPeek | ActDeletePeek,
	FullControl: allActions,
}

// Allows reports whether level p allows act.
func (p Permission) Allows(act Action) bool { return act != 0 && actionsOf[p]&act == act }

// Valid reports whether p is one of Levels.
func (p Permission) Valid() bool {
	_, ok := actionsOf[p]
	return ok
}

// Needed is the weakest level that allows act: what an error names as
// missing.
func Needed(act Action) Permission {
	best := FullControl
	for _, p := range Levels {
		if p.Allows(act) && bits.OnesCount16(uint16(actionsOf[p])) < bits.OnesCount16(uint16(actionsOf[best])) {
			best = p
		}
	}
	return best
}

// ParsePermission reads a level by name, case-insensitively, with or
// without the proto enum's "PERMISSION_" prefix.
func ParsePermission(s string) (Permission, bool) {
	p := Permission(strings.TrimPrefix(strings.ToUpper(s), "PERMISSION_"))
	return p, p.Valid()
}

// String names the actions in act, for messages.
func (act Action) String() string {
	names := []string{"send", "receive", "handle", "info", "peek", "delete-peek", "admin", "grant"}
	var out []string
	for i, n := range names {
		if act&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return strings.Join(out, "+")
}
