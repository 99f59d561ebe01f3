package sqs

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/access"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/server"
)

// msgs is a ReceiveMessage answer's messages.
func msgs(r map[string]any) []map[string]any {
	var out []map[string]any
	list, _ := r["Messages"].([]any)
	for _, m := range list {
		out = append(out, m.(map[string]any))
	}
	return out
}

func bodies(ms []map[string]any) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m["Body"].(string))
	}
	return out
}

// Each tag is a queue URL of its own: one send, each tag reads it on its
// own, and a receipt handle counts only on the URL of its tag.
func TestHandler_TagsAreQueueURLs(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	q := b.ok("CreateQueue", obj{"QueueName": "orders"})["QueueUrl"].(string)
	require.Equal(t, b.url("orders"), q)
	billing := b.ok("CreateQueue", obj{"QueueName": "orders~billing", "Attributes": obj{"VisibilityTimeout": "60"}})["QueueUrl"].(string)
	require.Equal(t, b.url("orders~billing"), billing)
	require.Equal(t, billing, b.ok("CreateQueue", obj{"QueueName": "orders~billing", "Attributes": obj{"VisibilityTimeout": "60"}})["QueueUrl"],
		"the same again is the same tag")
	r := b.call("CreateQueue", obj{"QueueName": "orders~billing", "Attributes": obj{"VisibilityTimeout": "5"}})
	require.Equal(t, "QueueAlreadyExists", r.code(), r.body)
	require.Equal(t, billing, b.ok("GetQueueUrl", obj{"QueueName": "orders~billing"})["QueueUrl"])

	b.ok("SendMessage", obj{"QueueUrl": billing, "MessageBody": "one"}) // to a tag's URL: for every tag
	b.ok("SendMessage", obj{"QueueUrl": q, "MessageBody": "two"})
	st, err := b.q.GetQueue(context.Background(), &tagqv1.GetQueueRequest{Name: "orders"})
	require.NoError(t, err)
	require.EqualValues(t, 2, st.GetQueue().GetState().GetRetainedMessages(), "stored once each")

	def := msgs(b.ok("ReceiveMessage", obj{"QueueUrl": q, "MaxNumberOfMessages": 10}))
	bill := msgs(b.ok("ReceiveMessage", obj{"QueueUrl": billing, "MaxNumberOfMessages": 10}))
	require.ElementsMatch(t, []string{"one", "two"}, bodies(def))
	require.ElementsMatch(t, []string{"one", "two"}, bodies(bill))
	require.Empty(t, msgs(b.ok("ReceiveMessage", obj{"QueueUrl": billing})), "in flight for billing")

	attrs := b.ok("GetQueueAttributes", obj{"QueueUrl": billing, "AttributeNames": []string{"All"}})["Attributes"].(map[string]any)
	require.Equal(t, "2", attrs["ApproximateNumberOfMessagesNotVisible"])
	require.Equal(t, "60", attrs["VisibilityTimeout"], "the tag's own")
	require.Equal(t, "arn:aws:sqs:us-east-1:000000000000:orders~billing", attrs["QueueArn"])

	// A billing handle on the default tag's URL, and the reverse: refused.
	r = b.call("DeleteMessage", obj{"QueueUrl": q, "ReceiptHandle": bill[0]["ReceiptHandle"]})
	require.Equal(t, "ReceiptHandleIsInvalid", r.code(), r.body)
	r = b.call("ChangeMessageVisibility", obj{"QueueUrl": billing, "ReceiptHandle": def[0]["ReceiptHandle"], "VisibilityTimeout": 0})
	require.Equal(t, "ReceiptHandleIsInvalid", r.code(), r.body)
	r = b.call("DeleteMessage", obj{"QueueUrl": q, "ReceiptHandle": "garbage"})
	require.Equal(t, "ReceiptHandleIsInvalid", r.code(), r.body)

	res := b.ok("DeleteMessageBatch", obj{"QueueUrl": billing, "Entries": []obj{
		{"Id": "a", "ReceiptHandle": bill[0]["ReceiptHandle"]}, {"Id": "b", "ReceiptHandle": bill[1]["ReceiptHandle"]},
		{"Id": "c", "ReceiptHandle": def[0]["ReceiptHandle"]}}})
	require.Len(t, res["Successful"], 2)
	require.Len(t, res["Failed"], 1)
	require.Equal(t, "ReceiptHandleIsInvalid", res["Failed"].([]any)[0].(map[string]any)["Code"])

	// Billing is done; the default tag still holds both in flight.
	attrs = b.ok("GetQueueAttributes", obj{"QueueUrl": q, "AttributeNames": []string{"ApproximateNumberOfMessagesNotVisible"}})["Attributes"].(map[string]any)
	require.Equal(t, obj{"ApproximateNumberOfMessagesNotVisible": "2"}, attrs)
	b.ok("ChangeMessageVisibility", obj{"QueueUrl": q, "ReceiptHandle": def[0]["ReceiptHandle"], "VisibilityTimeout": 0})
	again := msgs(b.ok("ReceiveMessage", obj{"QueueUrl": q, "AttributeNames": []string{"ApproximateReceiveCount"}}))
	require.Len(t, again, 1)
	require.Equal(t, obj{"ApproximateReceiveCount": "2"}, again[0]["Attributes"])

	// Tags are listed by a prefix with the separator; deleting a tag's URL
	// deletes the tag.
	list := b.ok("ListQueues", obj{"QueueNamePrefix": "orders~"})
	require.Equal(t, []any{b.url("orders~billing"), b.url("orders~default")}, list["QueueUrls"])
	require.Equal(t, []any{b.url("orders")}, b.ok("ListQueues", obj{"QueueNamePrefix": "ord"})["QueueUrls"])
	b.ok("DeleteQueue", obj{"QueueUrl": billing})
	r = b.call("ReceiveMessage", obj{"QueueUrl": billing})
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", r.code(), r.body)
	require.Equal(t, 400, r.status)
	require.Contains(t, r.json["__type"], "QueueDoesNotExist")
}

// Errors in each protocol's shape, with SQS's codes and statuses.
func TestHandler_ErrorShapes(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	r := b.call("GetQueueUrl", obj{"QueueName": "nope"})
	require.Equal(t, 400, r.status)
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue;Sender", r.header.Get("X-Amzn-Query-Error"))
	require.Equal(t, "com.amazonaws.sqs#QueueDoesNotExist", r.json["__type"])
	require.NotEmpty(t, r.header.Get("X-Amzn-Requestid"))

	r = b.query("GetQueueUrl", url.Values{"QueueName": {"nope"}})
	require.Equal(t, 400, r.status)
	require.Contains(t, r.body, `<ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><Error><Type>Sender</Type>`+
		`<Code>AWS.SimpleQueueService.NonExistentQueue</Code>`)
	require.Contains(t, r.body, "<RequestId>"+r.header.Get("X-Amzn-Requestid")+"</RequestId>")

	for _, tc := range []struct {
		action string
		req    any
		code   string
	}{
		{"AddPermission", obj{"QueueUrl": b.url("q"), "Label": "x"}, "AWS.SimpleQueueService.UnsupportedOperation"},
		{"NoSuchAction", obj{}, "InvalidAction"},
		{"SendMessage", obj{"QueueUrl": b.url("q")}, "MissingParameter"},
		{"ReceiveMessage", obj{"QueueUrl": b.url("q"), "MaxNumberOfMessages": 11}, "InvalidParameterValue"},
		{"ReceiveMessage", obj{"QueueUrl": b.url("q"), "WaitTimeSeconds": 21}, "InvalidParameterValue"},
		{"ReceiveMessage", obj{"QueueUrl": "not a url"}, "InvalidAddress"},
		{"ReceiveMessage", obj{"QueueUrl": b.url("q"), "MaxNumberOfMessages": "ten"}, "SerializationException"},
		{"CreateQueue", obj{"QueueName": "q", "Attributes": obj{"Bogus": "1"}}, "InvalidAttributeName"},
		{"CreateQueue", obj{"QueueName": "q", "Attributes": obj{"DelaySeconds": "901"}}, "InvalidAttributeValue"},
		{"CreateQueue", obj{"QueueName": "q", "Attributes": obj{"QueueArn": "x"}}, "InvalidAttributeName"},
		{"CreateQueue", obj{"QueueName": "q.fifo"}, "InvalidParameterValue"},
		{"CreateQueue", obj{"QueueName": "bad name"}, "InvalidParameterValue"},
		{"GetQueueAttributes", obj{"QueueUrl": b.url("q"), "AttributeNames": []string{"Bogus"}}, "InvalidAttributeName"},
		{"SendMessageBatch", obj{"QueueUrl": b.url("q"), "Entries": []obj{}}, "AWS.SimpleQueueService.EmptyBatchRequest"},
		{"DeleteMessageBatch", obj{"QueueUrl": b.url("q"), "Entries": []obj{{"Id": "a", "ReceiptHandle": "x"}, {"Id": "a", "ReceiptHandle": "y"}}},
			"AWS.SimpleQueueService.BatchEntryIdsNotDistinct"},
		{"DeleteMessageBatch", obj{"QueueUrl": b.url("q"), "Entries": []obj{{"Id": "a b", "ReceiptHandle": "x"}}},
			"AWS.SimpleQueueService.InvalidBatchEntryId"},
	} {
		r := b.call(tc.action, tc.req)
		require.Equal(t, tc.code, r.code(), "%s %v: %s", tc.action, tc.req, r.body)
		require.Less(t, r.status, 500)
	}
	var eleven []obj
	for i := range 11 {
		eleven = append(eleven, obj{"Id": string(rune('a' + i)), "MessageBody": "x"})
	}
	r = b.call("SendMessageBatch", obj{"QueueUrl": b.url("q"), "Entries": eleven})
	require.Equal(t, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", r.code())

	// Not a POST; a body over the limit; not signed.
	r = b.send("ListQueues", "/", "{}", func(req *http.Request) { req.Method = "PUT" })
	require.Equal(t, http.StatusMethodNotAllowed, r.status)
	b.h.maxBytes = 100
	r = b.send("ListQueues", "/", `{"QueueNamePrefix":"`+strings.Repeat("a", 200)+`"}`)
	require.Equal(t, http.StatusRequestEntityTooLarge, r.status, r.body)
	b.h.maxBytes = DefaultMaxRequestBytes
	r = b.send("ListQueues", "/", "{}", func(req *http.Request) { req.Header.Del("Authorization") })
	require.Equal(t, "MissingAuthenticationToken", r.code())
	require.Equal(t, 403, r.status)
	// A browser's form post (no signature) does nothing.
	resp, err := http.PostForm(b.srv.URL+"/", url.Values{"Action": {"CreateQueue"}, "QueueName": {"csrf"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 403, resp.StatusCode)
	_, err = b.q.GetQueue(context.Background(), &tagqv1.GetQueueRequest{Name: "csrf"})
	require.Error(t, err, "nothing made")
}

// A refused send stores nothing; a batch stores its valid entries and
// reports the others.
func TestHandler_BatchesAndRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	q := b.ok("CreateQueue", obj{"QueueName": "q", "Attributes": obj{"MaximumMessageSize": "1024"}})["QueueUrl"].(string)
	for _, bad := range []obj{
		{"QueueUrl": q, "MessageBody": "x", "MessageAttributes": obj{"AWS.a": obj{"DataType": "String", "StringValue": "v"}}},
		{"QueueUrl": q, "MessageBody": "\u0000"},
		{"QueueUrl": q, "MessageBody": strings.Repeat("x", 1025)},
		{"QueueUrl": q, "MessageBody": "x", "MessageGroupId": "g"},
		{"QueueUrl": q, "MessageBody": "x", "DelaySeconds": 901},
	} {
		r := b.call("SendMessage", bad)
		require.Equal(t, 400, r.status, "%v: %s", bad, r.body)
	}
	res := b.ok("SendMessageBatch", obj{"QueueUrl": q, "Entries": []obj{
		{"Id": "ok1", "MessageBody": "a", "MessageAttributes": obj{"n": obj{"DataType": "Number", "StringValue": "1"}}},
		{"Id": "bad", "MessageBody": "b", "MessageAttributes": obj{"n": obj{"DataType": "Number", "StringValue": "one"}}},
		{"Id": "big", "MessageBody": strings.Repeat("x", 1025)},
		{"Id": "ok2", "MessageBody": "c"},
	}})
	require.Len(t, res["Successful"], 2)
	failed := map[string]string{}
	for _, f := range res["Failed"].([]any) {
		m := f.(map[string]any)
		failed[m["Id"].(string)] = m["Code"].(string)
		require.Equal(t, true, m["SenderFault"])
	}
	require.Equal(t, map[string]string{"bad": "InvalidParameterValue", "big": "InvalidParameterValue"}, failed)
	for _, s := range res["Successful"].([]any) {
		m := s.(map[string]any)
		if m["Id"] == "ok1" {
			require.Equal(t, md5OfAttributes(map[string]attrValue{"n": {DataType: "Number", StringValue: str("1")}}), m["MD5OfMessageAttributes"])
		}
	}
	st, err := b.q.GetQueue(context.Background(), &tagqv1.GetQueueRequest{Name: "q"})
	require.NoError(t, err)
	require.EqualValues(t, 2, st.GetQueue().GetState().GetRetainedMessages(), "the refused sends stored nothing")

	// Attributes come back with their types and checksum, when asked.
	got := msgs(b.ok("ReceiveMessage", obj{"QueueUrl": q, "MaxNumberOfMessages": 10, "MessageAttributeNames": []string{"All"}}))
	require.Len(t, got, 2)
	for _, m := range got {
		if m["Body"] == "a" {
			require.Equal(t, obj{"n": obj{"DataType": "Number", "StringValue": "1"}}, m["MessageAttributes"])
			require.Equal(t, md5OfAttributes(map[string]attrValue{"n": {DataType: "Number", StringValue: str("1")}}), m["MD5OfMessageAttributes"])
		}
		require.Equal(t, md5Hex([]byte(m["Body"].(string))), m["MD5OfBody"])
	}
}

// FIFO queues are topic queues: groups in order, one in flight per group,
// sequence numbers, deduplication, and a retried receive attempt.
func TestHandler_FIFO(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	q := b.ok("CreateQueue", obj{"QueueName": "jobs.fifo", "Attributes": obj{"FifoQueue": "true", "ContentBasedDeduplication": "true"}})["QueueUrl"].(string)
	r := b.call("CreateQueue", obj{"QueueName": "jobs"})
	require.Equal(t, "QueueAlreadyExists", r.code(), "jobs.fifo is tagq's jobs: %s", r.body)
	r = b.call("GetQueueUrl", obj{"QueueName": "jobs"})
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", r.code(), "jobs is no standard queue")

	var seqs []string
	for i, body := range []string{"a1", "a2", "b1", "a1"} {
		g := body[:1]
		res := b.ok("SendMessage", obj{"QueueUrl": q, "MessageBody": body, "MessageGroupId": g})
		if i < 3 {
			seqs = append(seqs, res["SequenceNumber"].(string))
		} else {
			require.Equal(t, seqs[0], res["SequenceNumber"], "a duplicate by content answers the first")
		}
	}
	require.Less(t, seqs[0], seqs[1])
	r = b.call("SendMessage", obj{"QueueUrl": q, "MessageBody": "x"})
	require.Equal(t, "MissingParameter", r.code(), "a FIFO send needs a group")

	got := msgs(b.ok("ReceiveMessage", obj{"QueueUrl": q, "MaxNumberOfMessages": 10, "ReceiveRequestAttemptId": "try-1",
		"MessageSystemAttributeNames": []string{"MessageGroupId", "SequenceNumber"}}))
	require.Equal(t, []string{"a1", "b1"}, bodies(got), "one in flight per group")
	require.Equal(t, "a", got[0]["Attributes"].(map[string]any)["MessageGroupId"])
	require.Equal(t, seqs[0], got[0]["Attributes"].(map[string]any)["SequenceNumber"])
	retry := msgs(b.ok("ReceiveMessage", obj{"QueueUrl": q, "MaxNumberOfMessages": 10, "ReceiveRequestAttemptId": "try-1"}))
	require.Equal(t, got[0]["ReceiptHandle"], retry[0]["ReceiptHandle"], "the same attempt answers the same")
	b.ok("DeleteMessage", obj{"QueueUrl": q, "ReceiptHandle": got[0]["ReceiptHandle"]})
	next := msgs(b.ok("ReceiveMessage", obj{"QueueUrl": q, "MaxNumberOfMessages": 10}))
	require.Equal(t, []string{"a2"}, bodies(next), "then the group's next")
}

// RedrivePolicy onto tagq's per-tag redrive, and a move back.
func TestHandler_RedriveAndMoveBack(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	dlq := b.ok("CreateQueue", obj{"QueueName": "dlq", "Attributes": obj{"RedriveAllowPolicy": `{"redrivePermission":"allowAll"}`}})["QueueUrl"].(string)
	r := b.call("CreateQueue", obj{"QueueName": "src", "Attributes": obj{
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:plain","maxReceiveCount":"1"}`}})
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", r.code(), r.body)
	src := b.ok("CreateQueue", obj{"QueueName": "src", "Attributes": obj{
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:eu-west-1:000000000000:dlq","maxReceiveCount":1}`}})["QueueUrl"].(string)
	b.ok("CreateQueue", obj{"QueueName": "src~audit"})
	attrs := b.ok("GetQueueAttributes", obj{"QueueUrl": src, "AttributeNames": []string{"RedrivePolicy"}})["Attributes"].(map[string]any)
	require.JSONEq(t, `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`, attrs["RedrivePolicy"].(string))
	require.Equal(t, []any{src}, b.ok("ListDeadLetterSourceQueues", obj{"QueueUrl": dlq})["queueUrls"])

	b.ok("SendMessage", obj{"QueueUrl": src, "MessageBody": "poison"})
	m := msgs(b.ok("ReceiveMessage", obj{"QueueUrl": src}))[0]
	b.ok("ChangeMessageVisibility", obj{"QueueUrl": src, "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0})
	b.background() // the sweep: received once, visible again: dead for the default tag only
	dead := msgs(b.ok("ReceiveMessage", obj{"QueueUrl": dlq, "AttributeNames": []string{"All"}, "MessageAttributeNames": []string{"All"}}))
	require.Len(t, dead, 1)
	a := dead[0]["Attributes"].(map[string]any)
	require.Equal(t, "arn:aws:sqs:us-east-1:000000000000:src~default", a["DeadLetterQueueSourceArn"])
	require.Equal(t, "MAX_RECEIVE_COUNT_EXCEEDED", a["tagq.DeadLetterReason"])
	require.Equal(t, "src", dead[0]["MessageAttributes"].(map[string]any)["DLQ.sourceQueue"].(map[string]any)["StringValue"])
	require.Equal(t, []string{"poison"}, bodies(msgs(b.ok("ReceiveMessage", obj{"QueueUrl": b.url("src~audit")}))), "the other tag still has it")
	b.ok("ChangeMessageVisibility", obj{"QueueUrl": dlq, "ReceiptHandle": dead[0]["ReceiptHandle"], "VisibilityTimeout": 0})

	task := b.ok("StartMessageMoveTask", obj{"SourceArn": "arn:aws:sqs:us-east-1:000000000000:dlq", "MaxNumberOfMessagesPerSecond": 100})["TaskHandle"].(string)
	b.background()
	tasks := b.ok("ListMessageMoveTasks", obj{"SourceArn": "arn:aws:sqs:us-east-1:000000000000:dlq", "MaxResults": 10})["Results"].([]any)
	require.Len(t, tasks, 1)
	require.Equal(t, "COMPLETED", tasks[0].(map[string]any)["Status"])
	require.EqualValues(t, 1, tasks[0].(map[string]any)["ApproximateNumberOfMessagesMoved"])
	back := msgs(b.ok("ReceiveMessage", obj{"QueueUrl": src, "AttributeNames": []string{"All"}}))
	require.Equal(t, []string{"poison"}, bodies(back), "back to the tag it died in")
	require.Equal(t, "1", back[0]["Attributes"].(map[string]any)["ApproximateReceiveCount"])
	require.Equal(t, "1", back[0]["Attributes"].(map[string]any)["tagq.MoveCount"])
	r = b.call("CancelMessageMoveTask", obj{"TaskHandle": task})
	require.Less(t, r.status, 500, r.body)
	r = b.call("CancelMessageMoveTask", obj{"TaskHandle": "bogus"})
	require.Equal(t, "ResourceNotFoundException", r.code())
	r = b.call("StartMessageMoveTask", obj{"SourceArn": "arn:aws:sqs:us-east-1:000000000000:nope"})
	require.Equal(t, "ResourceNotFoundException", r.code(), r.body)
}

// Queue attributes and SQS's queue tags (labels, apart from tagq's tags).
func TestHandler_AttributesAndLabels(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	q := b.ok("CreateQueue", obj{"QueueName": "q", "tags": obj{"team": "a"}})["QueueUrl"].(string)
	b.ok("SetQueueAttributes", obj{"QueueUrl": q, "Attributes": obj{"DelaySeconds": "5", "VisibilityTimeout": "90",
		"MessageRetentionPeriod": "3600", "ReceiveMessageWaitTimeSeconds": "2", "SqsManagedSseEnabled": "false"}})
	attrs := b.ok("GetQueueAttributes", obj{"QueueUrl": q, "AttributeNames": []string{"All"}})["Attributes"].(map[string]any)
	for k, v := range map[string]string{"DelaySeconds": "5", "VisibilityTimeout": "90", "MessageRetentionPeriod": "3600",
		"ReceiveMessageWaitTimeSeconds": "2", "MaximumMessageSize": "262144", "RedriveAllowPolicy": `{"redrivePermission":"denyAll"}`} {
		require.Equal(t, v, attrs[k], k)
	}
	require.Equal(t, 400, b.call("SetQueueAttributes", obj{"QueueUrl": q, "Attributes": obj{"SqsManagedSseEnabled": "true"}}).status)
	require.Equal(t, 400, b.call("SetQueueAttributes", obj{"QueueUrl": q, "Attributes": obj{"FifoQueue": "true"}}).status)
	require.Equal(t, 400, b.call("SetQueueAttributes", obj{"QueueUrl": q,
		"Attributes": obj{"RedriveAllowPolicy": `{"redrivePermission":"allowAll"}`}}).status)

	require.Equal(t, obj{"team": "a"}, b.ok("ListQueueTags", obj{"QueueUrl": q})["Tags"])
	b.ok("TagQueue", obj{"QueueUrl": q, "Tags": obj{"env": "prod"}})
	b.ok("UntagQueue", obj{"QueueUrl": q, "TagKeys": []string{"team"}})
	require.Equal(t, obj{"env": "prod"}, b.ok("ListQueueTags", obj{"QueueUrl": q})["Tags"])
	tl, err := b.q.ListTags(context.Background(), &tagqv1.ListTagsRequest{Queue: "q"})
	require.NoError(t, err)
	require.Len(t, tl.GetTags(), 1, "SQS's tags are labels, not tagq tags")

	r := b.call("PurgeQueue", obj{"QueueUrl": b.url("q~default")})
	require.Equal(t, "AWS.SimpleQueueService.UnsupportedOperation", r.code())
	b.ok("SendMessage", obj{"QueueUrl": q, "MessageBody": "x", "DelaySeconds": 0})
	b.ok("PurgeQueue", obj{"QueueUrl": q})

	// The query protocol's XML answers.
	x := b.query("GetQueueAttributes", url.Values{"QueueUrl": {q}, "AttributeName.1": {"DelaySeconds"}})
	require.Equal(t, 200, x.status, x.body)
	require.Contains(t, x.body, `<GetQueueAttributesResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><GetQueueAttributesResult>`+
		`<Attribute><Name>DelaySeconds</Name><Value>5</Value></Attribute></GetQueueAttributesResult>`)
	x = b.query("ListQueueTags", url.Values{"QueueUrl": {q}})
	require.Contains(t, x.body, "<Tag><Key>env</Key><Value>prod</Value></Tag>")
}

// With authentication on: SigV4 with a key's derived secret, and tagq's
// permissions.
func TestHandler_Auth(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	b.ok("CreateQueue", obj{"QueueName": "q"})
	ctx := context.Background()
	_, err := b.acc.CreatePrincipal(ctx, access.Principal{Name: "user"})
	require.NoError(t, err)
	_, userKey, err := b.acc.IssueKey(ctx, "user")
	require.NoError(t, err)
	admin := b.creds
	b.creds = b.credsOf(userKey)
	r := b.call("SendMessage", obj{"QueueUrl": b.url("q"), "MessageBody": "x"})
	require.Equal(t, "AccessDenied", r.code(), r.body)
	require.Equal(t, 403, r.status)
	require.Contains(t, r.body, "SEND")
	require.NoError(t, b.acc.SetGrant(ctx, access.Grant{Principal: "user", Queue: "q", Permission: access.Send}))
	b.ok("SendMessage", obj{"QueueUrl": b.url("q"), "MessageBody": "x"})

	b.creds.SecretAccessKey = "wrong"
	require.Equal(t, "SignatureDoesNotMatch", b.call("ListQueues", obj{}).code())
	b.creds = admin
	b.creds.AccessKeyID = "ffffffffffffffff"
	require.Equal(t, "InvalidClientTokenId", b.call("ListQueues", obj{}).code())

	// Revoking the key voids its SigV4 credentials.
	b.creds = b.credsOf(userKey)
	keys, err := b.acc.ListKeys(ctx, "user")
	require.NoError(t, err)
	require.NoError(t, b.acc.RevokeKey(ctx, "user", keys[0].ID))
	require.Equal(t, "InvalidClientTokenId", b.call("ListQueues", obj{}).code())

	req, err := http.NewRequest("GET", b.srv.URL+CredentialsPath, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+userKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 401, resp.StatusCode, "a revoked key gets no credentials")
}

// GetQueueUrl takes any permission but NONE on the queue (a producer
// with SEND, as boto3's get_queue_by_name, Celery and JMS call it first);
// a permission limited to tags finds those tags' URLs; no permission is
// AccessDenied whether the queue exists or not.
func TestHandler_GetQueueUrlWithAnyPermission(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	b.ok("CreateQueue", obj{"QueueName": "q"})
	b.ok("CreateQueue", obj{"QueueName": "q~x"})
	b.ok("CreateQueue", obj{"QueueName": "q~y"})
	b.ok("CreateQueue", obj{"QueueName": "f.fifo", "Attributes": obj{"FifoQueue": "true"}})
	userCreds := func(name string, grants ...access.Grant) aws.Credentials {
		return b.credsOf(b.principal(name, grants...))
	}
	b.creds = userCreds("producer", access.Grant{Queue: "q", Permission: access.Send}, access.Grant{Queue: "f", Permission: access.Send},
		access.Grant{Queue: "n*", Permission: access.Send})
	require.Equal(t, b.url("q"), b.ok("GetQueueUrl", obj{"QueueName": "q"})["QueueUrl"])
	require.Equal(t, b.url("q~x"), b.ok("GetQueueUrl", obj{"QueueName": "q~x"})["QueueUrl"])
	require.Equal(t, b.url("f.fifo"), b.ok("GetQueueUrl", obj{"QueueName": "f.fifo"})["QueueUrl"])
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", b.call("GetQueueUrl", obj{"QueueName": "f"}).code(), "FIFO-ness")
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", b.call("GetQueueUrl", obj{"QueueName": "q~z"}).code())
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", b.call("GetQueueUrl", obj{"QueueName": "nope"}).code(),
		"a queue its prefix grant covers")
	r := b.call("GetQueueUrl", obj{"QueueName": "other"})
	require.Equal(t, "AccessDenied", r.code(), r.body)
	b.ok("SendMessage", obj{"QueueUrl": b.url("q"), "MessageBody": "x"})
	require.Equal(t, "AccessDenied", b.call("GetQueueAttributes", obj{"QueueUrl": b.url("q")}).code(), "still GET_QUEUE_INFO's")

	b.creds = userCreds("xreader", access.Grant{Queue: "q", Permission: access.Handle, Tags: []string{"x"}})
	require.Equal(t, b.url("q~x"), b.ok("GetQueueUrl", obj{"QueueName": "q~x"})["QueueUrl"])
	require.Equal(t, b.url("q"), b.ok("GetQueueUrl", obj{"QueueName": "q"})["QueueUrl"])
	require.Equal(t, "AccessDenied", b.call("GetQueueUrl", obj{"QueueName": "q~y"}).code(), "not a tag it may name")

	b.creds = userCreds("nobody")
	require.Equal(t, "AccessDenied", b.call("GetQueueUrl", obj{"QueueName": "q"}).code())
	require.Equal(t, "AccessDenied", b.call("GetQueueUrl", obj{"QueueName": "missing"}).code(), "no word of existence")
}

// A URL's .fifo must say what its queue is: on a plain queue's .fifo URL
// (or a FIFO queue's plain one) every action answers QueueDoesNotExist and
// does nothing; to a principal without a permission on the queue, the
// action's own refusal answers instead (no word of the queue).
func TestHandler_FifoSuffixMustMatch(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	b.ok("CreateQueue", obj{"QueueName": "qa"})
	b.ok("CreateQueue", obj{"QueueName": "f.fifo", "Attributes": obj{"FifoQueue": "true"}})
	b.ok("SendMessage", obj{"QueueUrl": b.url("qa"), "MessageBody": "x"})
	for _, c := range []struct {
		action string
		req    obj
	}{
		{"ReceiveMessage", obj{"QueueUrl": b.url("qa.fifo")}},
		{"SendMessage", obj{"QueueUrl": b.url("qa.fifo"), "MessageBody": "x", "MessageGroupId": "g"}},
		{"SendMessage", obj{"QueueUrl": b.url("f"), "MessageBody": "x"}},
		{"ReceiveMessage", obj{"QueueUrl": b.url("f")}},
		{"PurgeQueue", obj{"QueueUrl": b.url("qa.fifo")}},
		{"DeleteQueue", obj{"QueueUrl": b.url("qa.fifo")}},
		{"TagQueue", obj{"QueueUrl": b.url("qa.fifo"), "Tags": obj{"a": "b"}}},
		{"ListQueueTags", obj{"QueueUrl": b.url("f")}},
	} {
		r := b.call(c.action, c.req)
		require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", r.code(), "%s %v: %s", c.action, c.req, r.body)
	}
	got := msgs(b.ok("ReceiveMessage", obj{"QueueUrl": b.url("qa")}))
	require.Len(t, got, 1, "qa kept its message and exists")

	a := setup(t, true)
	a.ok("CreateQueue", obj{"QueueName": "qa"})
	a.creds = a.credsOf(a.principal("stranger"))
	r := a.call("ReceiveMessage", obj{"QueueUrl": a.url("qa.fifo")})
	require.Equal(t, "AccessDenied", r.code(), r.body)
}

// Each action is a call of tagq's own API through the server's
// interceptors: the server's gRPC metrics count it, by method and code
// (and so does its access log: server's TestInProcess_AsAGRPCCall).
func TestHandler_ActionsAreTagqCalls(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	b.ok("CreateQueue", obj{"QueueName": "q"})
	b.ok("SendMessageBatch", obj{"QueueUrl": b.url("q"), "Entries": []obj{{"Id": "a", "MessageBody": "x"}}})
	require.Len(t, msgs(b.ok("ReceiveMessage", obj{"QueueUrl": b.url("q")})), 1)
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", b.call("ReceiveMessage", obj{"QueueUrl": b.url("nope")}).code())
	for _, c := range [][2]string{{"CreateQueue", "OK"}, {"SendMessageBatch", "OK"}, {"ReceiveMessage", "OK"}, {"ReceiveMessage", "NotFound"}} {
		require.Equal(t, 1.0, metric(t, b, "grpc_server_handled_total", c[0], c[1]), "%s %s", c[0], c[1])
	}
}

// A body sent through tagq's own API with bytes SQS cannot carry is
// delivered with each as U+FFFD, and its MD5OfBody is of what is
// delivered; a body SQS can carry has the MD5 of its own bytes.
func TestHandler_BodiesAsDelivered(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	b.ok("CreateQueue", obj{"QueueName": "q"})
	for _, body := range []string{"a\x00b\xff", "plain é"} {
		_, err := b.m.SendMessage(context.Background(), &tagqv1.SendMessageRequest{Queue: "q", Body: []byte(body)})
		require.NoError(t, err)
	}
	got := map[string]string{}
	for _, m := range msgs(b.ok("ReceiveMessage", obj{"QueueUrl": b.url("q"), "MaxNumberOfMessages": 10})) {
		got[m["Body"].(string)] = m["MD5OfBody"].(string)
		require.NotContains(t, m, "Attributes", "no system attributes unless asked for")
	}
	want := func(s string) string { sum := md5.Sum([]byte(s)); return hex.EncodeToString(sum[:]) }
	require.Equal(t, map[string]string{"a\uFFFDb\uFFFD": want("a\uFFFDb\uFFFD"), "plain é": want("plain é")}, got)
}

// A request's body counts in tagqd's request bytes in flight until it is
// answered (--max-request-bytes-in-flight, over every protocol): while a
// long poll holds more than the limit, other requests are refused unread
// with RequestThrottled, counted under the protocol "sqs"; once it ends,
// they are served.
func TestHandler_RequestBytesInFlight(t *testing.T) {
	t.Parallel()
	b := setup(t, false, func(c *server.Config, _ *Config) { c.MaxRequestBytesInFlight = 10 })
	b.ok("CreateQueue", obj{"QueueName": "q"})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	poll := `{"QueueUrl":"` + b.url("q") + `","WaitTimeSeconds":20}`
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.srv.URL+"/", strings.NewReader(poll))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", jsonContentType)
		req.Header.Set("X-Amz-Target", targetPrefix+"ReceiveMessage")
		b.serveSigned(t, req, []byte(poll))
	}()
	require.Eventually(t, func() bool { return metric(t, b, "tagq_request_bytes_in_flight") == float64(len(poll)) },
		10*time.Second, time.Millisecond, "the long poll holds its bytes")
	r := b.call("ListQueues", obj{})
	require.Equal(t, "RequestThrottled", r.code(), r.body)
	require.Contains(t, r.body, server.ReasonTooManyRequestBytes)
	require.Equal(t, 1.0, metric(t, b, "tagq_requests_refused_in_flight_total", "sqs"))

	cancel()
	<-done
	b.ok("ListQueues", obj{})
}
