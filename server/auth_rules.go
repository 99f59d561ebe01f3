package server

import (
	"slices"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/tagq/tagq/access"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// methodRules maps every RPC the server serves (every method of every
// registered service, health and reflection included) to what it needs
// with authentication on. TestEveryMethodHasARule fails when a method has
// no entry. A call of a method without an entry is refused.
var methodRules = map[string]rule{
	// QueueService.
	"/tagq.v1.QueueService/CreateQueue": {needs: func(req any) []need {
		q := req.(*tagqv1.CreateQueueRequest).GetQueue()
		return append([]need{{act: access.ActAdmin, queue: q.GetName()}}, dlqNeed(q.GetRedrivePolicy())...)
	}},
	"/tagq.v1.QueueService/GetQueue": {needs: on(access.ActInfo, (*tagqv1.GetQueueRequest).GetName)},
	// Any principal: a non-admin sees the queues it holds a permission on
	// (queueService.ListQueues filters).
	"/tagq.v1.QueueService/ListQueues": {},
	"/tagq.v1.QueueService/UpdateQueue": {needs: func(req any) []need {
		r := req.(*tagqv1.UpdateQueueRequest)
		needs := []need{{act: access.ActAdmin, queue: r.GetQueue().GetName()}}
		if masks(r.GetUpdateMask(), "redrive_policy") {
			needs = append(needs, dlqNeed(r.GetQueue().GetRedrivePolicy())...)
		}
		return needs
	}},
	"/tagq.v1.QueueService/DeleteQueue":   {needs: on(access.ActAdmin, (*tagqv1.DeleteQueueRequest).GetName)},
	"/tagq.v1.QueueService/PurgeQueue":    {needs: on(access.ActAdmin, (*tagqv1.PurgeQueueRequest).GetName)},
	"/tagq.v1.QueueService/CreateTag":     {needs: on(access.ActAdmin, (*tagqv1.CreateTagRequest).GetQueue)},
	"/tagq.v1.QueueService/GetTag":        {needs: on(access.ActInfo, (*tagqv1.GetTagRequest).GetQueue)},
	"/tagq.v1.QueueService/ListTags":      {needs: on(access.ActInfo, (*tagqv1.ListTagsRequest).GetQueue)},
	"/tagq.v1.QueueService/GetQueueRates": {needs: on(access.ActInfo, (*tagqv1.GetQueueRatesRequest).GetQueue)},
	"/tagq.v1.QueueService/DeleteTag":     {needs: on(access.ActAdmin, (*tagqv1.DeleteTagRequest).GetQueue)},
	// A seek is a consumer's replay (Pub/Sub's Seek is a subscriber's):
	// back, it receives again; forward, it settles what it skips. So
	// RECEIVE and HANDLE on the queue (the HANDLE level), for the tag when
	// receiving is limited to tags; nothing of other tags moves (S1).
	"/tagq.v1.QueueService/SeekTag": {needs: func(req any) []need {
		r := req.(*tagqv1.SeekTagRequest)
		return []need{{act: access.ActReceive | access.ActHandle, queue: r.GetQueue(), tag: r.GetName()}}
	}},

	// MessageService.
	"/tagq.v1.MessageService/SendMessage":      {needs: on(access.ActSend, (*tagqv1.SendMessageRequest).GetQueue)},
	"/tagq.v1.MessageService/SendMessageBatch": {needs: on(access.ActSend, (*tagqv1.SendMessageBatchRequest).GetQueue)},
	"/tagq.v1.MessageService/ReceiveMessage": {needs: func(req any) []need {
		r := req.(*tagqv1.ReceiveMessageRequest)
		return []need{{act: access.ActReceive, queue: r.GetQueue(), tag: r.GetTag()}}
	}},
	"/tagq.v1.MessageService/DeleteMessage": {handles: func(req any) (string, []string) {
		r := req.(*tagqv1.DeleteMessageRequest)
		return r.GetQueue(), []string{r.GetReceiptHandle()}
	}},
	"/tagq.v1.MessageService/DeleteMessageBatch": {handles: func(req any) (string, []string) {
		r := req.(*tagqv1.DeleteMessageBatchRequest)
		return r.GetQueue(), entryHandles(r.GetEntries(), (*tagqv1.DeleteMessageBatchEntry).GetReceiptHandle)
	}},
	"/tagq.v1.MessageService/ChangeMessageVisibility": {handles: func(req any) (string, []string) {
		r := req.(*tagqv1.ChangeMessageVisibilityRequest)
		return r.GetQueue(), []string{r.GetReceiptHandle()}
	}},
	"/tagq.v1.MessageService/ChangeMessageVisibilityBatch": {handles: func(req any) (string, []string) {
		r := req.(*tagqv1.ChangeMessageVisibilityBatchRequest)
		return r.GetQueue(), entryHandles(r.GetEntries(), (*tagqv1.ChangeMessageVisibilityBatchEntry).GetReceiptHandle)
	}},
	"/tagq.v1.MessageService/DeadMessage": {handles: func(req any) (string, []string) {
		r := req.(*tagqv1.DeadMessageRequest)
		return r.GetQueue(), []string{r.GetReceiptHandle()}
	}},
	"/tagq.v1.MessageService/DeadMessageBatch": {handles: func(req any) (string, []string) {
		r := req.(*tagqv1.DeadMessageBatchRequest)
		return r.GetQueue(), entryHandles(r.GetEntries(), (*tagqv1.DeadMessageBatchEntry).GetReceiptHandle)
	}},
	"/tagq.v1.MessageService/PeekMessage": {needs: on(access.ActPeek, (*tagqv1.PeekMessageRequest).GetQueue)},
	// Streams: checked frame by frame (authStream): Publish needs SEND on
	// each frame's queue; Consume RECEIVE on the queue and tag it opens,
	// and HANDLE for acks, nacks, extends and deads.
	"/tagq.v1.MessageService/Publish": {stream: true},
	"/tagq.v1.MessageService/Consume": {stream: true},

	// RedriveService: on the dead-letter queue. A move takes its dead
	// letters back to the queues they died in, whose redrive policies sent
	// them there.
	"/tagq.v1.RedriveService/StartMessageMove":  {needs: on(access.ActAdmin, (*tagqv1.StartMessageMoveRequest).GetDeadLetterQueue)},
	"/tagq.v1.RedriveService/ListMessageMoves":  {needs: on(access.ActInfo, (*tagqv1.ListMessageMovesRequest).GetDeadLetterQueue)},
	"/tagq.v1.RedriveService/CancelMessageMove": {needs: on(access.ActAdmin, (*tagqv1.CancelMessageMoveRequest).GetDeadLetterQueue)},

	// AccessService: principals are an admin's; a principal's own keys are
	// its own too (rotation); permissions are FULL_CONTROL's on a queue
	// (EMQ: setPermission needs FULL_CONTROL), an admin's on a prefix.
	"/tagq.v1.AccessService/CreatePrincipal":  {admin: true},
	"/tagq.v1.AccessService/GetPrincipal":     {selfOr: func(req any) string { return req.(*tagqv1.GetPrincipalRequest).GetName() }},
	"/tagq.v1.AccessService/ListPrincipals":   {admin: true},
	"/tagq.v1.AccessService/DeletePrincipal":  {admin: true},
	"/tagq.v1.AccessService/IssueKey":         {selfOr: func(req any) string { return req.(*tagqv1.IssueKeyRequest).GetPrincipal() }},
	"/tagq.v1.AccessService/ListKeys":         {selfOr: func(req any) string { return req.(*tagqv1.ListKeysRequest).GetPrincipal() }},
	"/tagq.v1.AccessService/RevokeKey":        {selfOr: func(req any) string { return req.(*tagqv1.RevokeKeyRequest).GetPrincipal() }},
	"/tagq.v1.AccessService/SetPermission":    {needs: grantOn(func(req any) string { return req.(*tagqv1.SetPermissionRequest).GetGrant().GetQueue() })},
	"/tagq.v1.AccessService/RevokePermission": {needs: grantOn(func(req any) string { return req.(*tagqv1.RevokePermissionRequest).GetQueue() })},
	// EMQ: querying one's own permission needs nothing; another's,
	// ADMIN_QUEUE on the queue.
	"/tagq.v1.AccessService/GetPermission": {selfOrNeeds: func(req any, caller string) (bool, []need) {
		r := req.(*tagqv1.GetPermissionRequest)
		return r.GetPrincipal() == "" || r.GetPrincipal() == caller, []need{{act: access.ActAdmin, queue: r.GetQueue()}}
	}},
	// One's own permissions; those on one queue for ADMIN_QUEUE on it;
	// everyone's, or those on a prefix, for an admin.
	"/tagq.v1.AccessService/ListPermissions": {selfOrNeeds: func(req any, caller string) (bool, []need) {
		r := req.(*tagqv1.ListPermissionsRequest)
		if r.GetPrincipal() == caller {
			return true, nil
		}
		if r.GetQueue() == "" || access.CheckQueueName("queue", r.GetQueue()) != nil {
			return false, []need{{admin: true}}
		}
		return false, []need{{act: access.ActAdmin, queue: r.GetQueue()}}
	}},

	// Health answers load balancers, which carry no credentials (as
	// /healthz and /readyz do over HTTP). Reflection describes the API to
	// any authenticated principal.
	"/grpc.health.v1.Health/Check":                                   {open: true},
	"/grpc.health.v1.Health/Watch":                                   {open: true},
	"/grpc.health.v1.Health/List":                                    {open: true},
	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo":      {},
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": {},
}

// rule is what one RPC needs. With no field set, any authenticated
// principal may call it.
type rule struct {
	open   bool                 // no credentials needed
	admin  bool                 // an admin principal only
	needs  func(req any) []need // actions on queues
	stream bool                 // checked per stream frame (authStream)
	// handles: HANDLE on the queue and tag of each receipt handle.
	handles func(req any) (queue string, handles []string)
	// selfOr: allowed when the principal named is the caller, else admin.
	selfOr func(req any) string
	// selfOrNeeds: allowed when the call is about the caller itself
	// (self), else when the needs are met.
	selfOrNeeds func(req any, caller string) (self bool, needs []need)
}

// need is one action on one queue ("" for tag: the default tag), or admin.
type need struct {
	act   access.Action
	queue string
	tag   string
	admin bool
}

// on is the rule of an RPC whose request names one queue.
func on[R any](act access.Action, queueOf func(R) string) func(any) []need {
	return func(req any) []need { return []need{{act: act, queue: queueOf(req.(R))}} }
}

// grantOn: FULL_CONTROL on the queue; on a prefix (or anything not a
// queue name), an admin.
func grantOn(queueOf func(any) string) func(any) []need {
	return func(req any) []need {
		q := queueOf(req)
		if isPrefix(q) {
			return []need{{admin: true}}
		}
		return []need{{act: access.ActGrant, queue: q}}
	}
}

func isPrefix(q string) bool { return len(q) > 0 && q[len(q)-1] == '*' }

// dlqNeed: a redrive policy sends dead letters to its dead-letter queue,
// so setting one needs SEND there (dead-lettering itself then needs no
// permission on the DLQ, as in SQS).
func dlqNeed(p *tagqv1.RedrivePolicy) []need {
	if dlq := p.GetDeadLetterQueue(); dlq != "" {
		return []need{{act: access.ActSend, queue: dlq}}
	}
	return nil
}

func masks(m *fieldmaskpb.FieldMask, path string) bool { return slices.Contains(m.GetPaths(), path) }

func entryHandles[E any](entries []E, handleOf func(E) string) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = handleOf(e)
	}
	return out
}
