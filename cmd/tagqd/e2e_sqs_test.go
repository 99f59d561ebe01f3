package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/internal/tagqdtest"
)

// The SQS endpoint driven by unmodified aws-sdk-go-v2 (the JSON protocol)
// against a real tagqd, on the embedded store and on Redis. The SDK checks
// MD5OfMessageBody on every send and receive and fails the call on a wrong
// one (TestE2E_SQS_SDKChecksMD5 shows the check is live).

// sqsClient is an SDK client for the endpoint at addr (host:port) signing
// with creds.
func sqsClient(addr string, creds aws.Credentials) *sqs.Client {
	return sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://" + addr),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return creds, nil })})
}

// anyCreds: with authentication off any credentials sign.
var anyCreds = aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}

// apiCode is the SQS error code of err (smithy's ErrorCode).
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func TestE2E_SQS_AWSSDKGo(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		c := sqsClient(d.proc.SQS, anyCreds)
		ctx := context.Background()

		// Queues: a queue, a tag URL of it, their attributes.
		cq, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders"),
			Attributes: map[string]string{"VisibilityTimeout": "45", "ReceiveMessageWaitTimeSeconds": "1"}, Tags: map[string]string{"team": "shop"}})
		require.NoError(t, err)
		orders := aws.ToString(cq.QueueUrl)
		require.Equal(t, "http://"+d.proc.SQS+"/000000000000/orders", orders)
		cb, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders~billing")})
		require.NoError(t, err)
		billing := aws.ToString(cb.QueueUrl)
		gu, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("orders~billing")})
		require.NoError(t, err)
		require.Equal(t, billing, aws.ToString(gu.QueueUrl))
		_, err = c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("nope")})
		var notFound *types.QueueDoesNotExist
		require.ErrorAs(t, err, &notFound)
		require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", apiCode(err))
		ga, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(billing),
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
		require.NoError(t, err)
		require.Equal(t, "45", ga.Attributes["VisibilityTimeout"], "the queue's, the tag having none of its own")
		require.Equal(t, "arn:aws:sqs:us-east-1:000000000000:orders~billing", ga.Attributes["QueueArn"])
		_, err = c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(orders),
			Attributes: map[string]string{"DelaySeconds": "0", "MaximumMessageSize": "65536"}})
		require.NoError(t, err)
		_, err = c.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: aws.String(orders), Tags: map[string]string{"env": "test"}})
		require.NoError(t, err)
		_, err = c.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: aws.String(orders), TagKeys: []string{"team"}})
		require.NoError(t, err)
		lt, err := c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(orders)})
		require.NoError(t, err)
		require.Equal(t, map[string]string{"env": "test"}, lt.Tags)
		for _, n := range []string{"other-a", "other-b", "other-c"} {
			_, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(n)})
			require.NoError(t, err)
		}
		var listed []string
		p := sqs.NewListQueuesPaginator(c, &sqs.ListQueuesInput{QueueNamePrefix: aws.String("other-"), MaxResults: aws.Int32(2)})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			require.NoError(t, err)
			require.LessOrEqual(t, len(page.QueueUrls), 2)
			listed = append(listed, page.QueueUrls...)
		}
		require.Len(t, listed, 3, "three queues over two pages: %v", listed)

		// Messages: sent once to the queue, read by two tags on their own.
		var sent []string
		for i := range 15 {
			sent = append(sent, fmt.Sprintf("order %d é✓", i))
		}
		_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(billing), MessageBody: aws.String(sent[0]),
			MessageAttributes: map[string]types.MessageAttributeValue{
				"region": {DataType: aws.String("String"), StringValue: aws.String("eu")},
				"amount": {DataType: aws.String("Number.cents"), StringValue: aws.String("1250")},
				"blob":   {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2, 255}},
			}})
		require.NoError(t, err)
		for i := 1; i < len(sent); i += 10 {
			var entries []types.SendMessageBatchRequestEntry
			for j := i; j < min(i+10, len(sent)); j++ {
				entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(j)), MessageBody: aws.String(sent[j])})
			}
			out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(orders), Entries: entries})
			require.NoError(t, err)
			require.Empty(t, out.Failed)
		}
		// A batch with a partial failure: stored are the good entries only.
		pb, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(orders), Entries: []types.SendMessageBatchRequestEntry{
			{Id: aws.String("big"), MessageBody: aws.String(strings.Repeat("x", 65537))},
			{Id: aws.String("bad"), MessageBody: aws.String("x"), MessageAttributes: map[string]types.MessageAttributeValue{
				"n": {DataType: aws.String("Number"), StringValue: aws.String("not a number")}}},
		}})
		require.NoError(t, err)
		require.Empty(t, pb.Successful)
		require.Len(t, pb.Failed, 2)
		for _, f := range pb.Failed {
			require.True(t, f.SenderFault)
			require.Equal(t, "InvalidParameterValue", aws.ToString(f.Code))
		}

		drain := func(queueURL string) []types.Message {
			var got []types.Message
			for len(got) < len(sent) {
				r, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), MaxNumberOfMessages: 10,
					WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"},
					MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
				require.NoError(t, err)
				require.NotEmpty(t, r.Messages, "got %d of %d", len(got), len(sent))
				got = append(got, r.Messages...)
			}
			return got
		}
		for _, u := range []string{billing, orders} {
			got := drain(u)
			var bodies []string
			seen := map[string]bool{}
			var handles []types.DeleteMessageBatchRequestEntry
			for i, m := range got {
				require.False(t, seen[aws.ToString(m.MessageId)], "delivered twice in one tag")
				seen[aws.ToString(m.MessageId)] = true
				bodies = append(bodies, aws.ToString(m.Body))
				require.Equal(t, "1", m.Attributes["ApproximateReceiveCount"])
				require.NotEmpty(t, m.Attributes["SentTimestamp"])
				if aws.ToString(m.Body) == sent[0] {
					require.Equal(t, "Number.cents", aws.ToString(m.MessageAttributes["amount"].DataType))
					require.Equal(t, []byte{0, 1, 2, 255}, m.MessageAttributes["blob"].BinaryValue)
					require.NotEmpty(t, aws.ToString(m.MD5OfMessageAttributes))
				}
				handles = append(handles, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
			}
			require.ElementsMatch(t, sent, bodies)
			r, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(u), WaitTimeSeconds: 0})
			require.NoError(t, err)
			require.Empty(t, r.Messages, "all in flight for this tag")
			// Give one back (a nack), then delete the rest in batches.
			_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(u),
				ReceiptHandle: handles[0].ReceiptHandle, VisibilityTimeout: 0})
			require.NoError(t, err)
			cv, err := c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(u),
				Entries: []types.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("a"), ReceiptHandle: handles[1].ReceiptHandle, VisibilityTimeout: 600}}})
			require.NoError(t, err)
			require.Len(t, cv.Successful, 1)
			again, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(u), WaitTimeSeconds: 5,
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount}})
			require.NoError(t, err)
			require.Len(t, again.Messages, 1)
			require.Equal(t, "2", again.Messages[0].Attributes["ApproximateReceiveCount"])
			handles[0].ReceiptHandle = again.Messages[0].ReceiptHandle
			for i := 0; i < len(handles); i += 10 {
				out, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(u), Entries: handles[i:min(i+10, len(handles))]})
				require.NoError(t, err)
				require.Empty(t, out.Failed)
			}
		}

		// A long poll returns the message sent while it waits.
		got := make(chan *sqs.ReceiveMessageOutput, 1)
		go func() {
			r, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(billing), WaitTimeSeconds: 20})
			if err != nil {
				t.Error(err)
			}
			got <- r
		}()
		require.Eventually(t, func() bool { return waiting(t, d) > 0 }, 10*time.Second, 5*time.Millisecond)
		_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(orders), MessageBody: aws.String("wake")})
		require.NoError(t, err)
		r := <-got
		require.Len(t, r.Messages, 1)
		require.Equal(t, "wake", aws.ToString(r.Messages[0].Body))
		_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(billing), ReceiptHandle: r.Messages[0].ReceiptHandle})
		require.NoError(t, err)
		_, err = c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(orders)})
		require.NoError(t, err)

		// Unsupported and malformed.
		_, err = c.AddPermission(ctx, &sqs.AddPermissionInput{QueueUrl: aws.String(orders), Label: aws.String("l"),
			AWSAccountIds: []string{"1"}, Actions: []string{"SendMessage"}})
		var unsupported *types.UnsupportedOperation
		require.ErrorAs(t, err, &unsupported)
		_, err = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(orders), MaxNumberOfMessages: 11})
		require.Equal(t, "InvalidParameterValue", apiCode(err))
		_, err = c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(orders), Entries: []types.DeleteMessageBatchRequestEntry{
			{Id: aws.String("a"), ReceiptHandle: aws.String("x")}, {Id: aws.String("a"), ReceiptHandle: aws.String("y")}}})
		var notDistinct *types.BatchEntryIdsNotDistinct
		require.ErrorAs(t, err, &notDistinct)

		_, err = c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(billing)})
		require.NoError(t, err)
		tl, err := d.q.ListTags(ctx, &tagqv1.ListTagsRequest{Queue: "orders"})
		require.NoError(t, err)
		require.Len(t, tl.GetTags(), 1, "the billing tag is gone, the default one stays")
		_, err = c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(orders)})
		require.NoError(t, err)
	})
}

// waiting is tagqd's count of waiting receives (/metrics).
func waiting(t *testing.T, d *daemon) int {
	resp, err := http.Get("http://" + d.http + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "tagq_receives_waiting ") {
			n, _ := strconv.ParseFloat(strings.TrimPrefix(line, "tagq_receives_waiting "), 64)
			return int(n)
		}
	}
	return 0
}

// FIFO queues: per group, in order, each message once; a dead-letter queue
// and a move back.
func TestE2E_SQS_FIFOAndRedrive(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		d := start(t, be)
		c := sqsClient(d.proc.SQS, anyCreds)
		ctx := context.Background()

		fq, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("jobs.fifo"),
			Attributes: map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}})
		require.NoError(t, err)
		jobs := aws.ToString(fq.QueueUrl)
		groups := []string{"g1", "g2", "g3"}
		var entries []types.SendMessageBatchRequestEntry
		for i := range 30 {
			g := groups[i%3]
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)),
				MessageBody: aws.String(fmt.Sprintf("%s-%02d", g, i)), MessageGroupId: aws.String(g)})
			if len(entries) == 10 {
				out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(jobs), Entries: entries})
				require.NoError(t, err)
				require.Len(t, out.Successful, 10)
				require.NotEmpty(t, aws.ToString(out.Successful[0].SequenceNumber))
				entries = nil
			}
		}
		byGroup := map[string][]string{}
		for n := 0; n < 30; {
			r, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(jobs), MaxNumberOfMessages: 10, WaitTimeSeconds: 2,
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameMessageGroupId}})
			require.NoError(t, err)
			require.NotEmpty(t, r.Messages)
			inFlight := map[string]bool{}
			for _, m := range r.Messages {
				g := m.Attributes["MessageGroupId"]
				require.False(t, inFlight[g], "two of group %s in flight at once", g)
				inFlight[g] = true
				byGroup[g] = append(byGroup[g], aws.ToString(m.Body))
				_, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(jobs), ReceiptHandle: m.ReceiptHandle})
				require.NoError(t, err)
				n++
			}
		}
		for _, g := range groups {
			require.Len(t, byGroup[g], 10)
			require.True(t, sort.StringsAreSorted(byGroup[g]), "group %s out of order: %v", g, byGroup[g])
		}

		// A dead-letter queue (RedriveAllowPolicy), a source whose default
		// tag gives up after one receive while its audit tag goes on.
		dq, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("pay-dlq"),
			Attributes: map[string]string{"RedriveAllowPolicy": `{"redrivePermission":"allowAll"}`}})
		require.NoError(t, err)
		dlq := aws.ToString(dq.QueueUrl)
		da, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: dq.QueueUrl,
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
		require.NoError(t, err)
		dlqArn := da.Attributes["QueueArn"]
		policy, _ := json.Marshal(map[string]any{"deadLetterTargetArn": dlqArn, "maxReceiveCount": "1"})
		sq, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("pay"),
			Attributes: map[string]string{"RedrivePolicy": string(policy)}})
		require.NoError(t, err)
		src := aws.ToString(sq.QueueUrl)
		au, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("pay~audit")})
		require.NoError(t, err)
		ls, err := c.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: dq.QueueUrl})
		require.NoError(t, err)
		require.Equal(t, []string{src}, ls.QueueUrls)

		_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(src), MessageBody: aws.String("poison")})
		require.NoError(t, err)
		r, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(src), WaitTimeSeconds: 5})
		require.NoError(t, err)
		require.Len(t, r.Messages, 1)
		_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(src),
			ReceiptHandle: r.Messages[0].ReceiptHandle, VisibilityTimeout: 0})
		require.NoError(t, err)
		// The sweeper moves it (nobody receives the source); a long poll on
		// the DLQ returns as it arrives.
		dead, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlq), WaitTimeSeconds: 20,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		require.NoError(t, err)
		require.Len(t, dead.Messages, 1)
		require.Equal(t, "poison", aws.ToString(dead.Messages[0].Body))
		require.Equal(t, "arn:aws:sqs:us-east-1:000000000000:pay~default", dead.Messages[0].Attributes["DeadLetterQueueSourceArn"])
		require.Equal(t, "MAX_RECEIVE_COUNT_EXCEEDED", dead.Messages[0].Attributes["tagq.DeadLetterReason"])
		ar, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: au.QueueUrl, WaitTimeSeconds: 5})
		require.NoError(t, err)
		require.Len(t, ar.Messages, 1, "the audit tag still reads it")
		_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: au.QueueUrl, ReceiptHandle: ar.Messages[0].ReceiptHandle})
		require.NoError(t, err)
		_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(dlq),
			ReceiptHandle: dead.Messages[0].ReceiptHandle, VisibilityTimeout: 0})
		require.NoError(t, err)

		// Move it back: to the default tag alone, with a fresh count.
		mt, err := c.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(dlqArn), MaxNumberOfMessagesPerSecond: aws.Int32(50)})
		require.NoError(t, err)
		require.NotEmpty(t, aws.ToString(mt.TaskHandle))
		back, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(src), WaitTimeSeconds: 20,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount}})
		require.NoError(t, err)
		require.Len(t, back.Messages, 1)
		require.Equal(t, "poison", aws.ToString(back.Messages[0].Body))
		require.Equal(t, "1", back.Messages[0].Attributes["ApproximateReceiveCount"])
		none, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: au.QueueUrl})
		require.NoError(t, err)
		require.Empty(t, none.Messages, "not re-broadcast to the tag that had processed it")
		require.Eventually(t, func() bool {
			lm, err := c.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(dlqArn), MaxResults: aws.Int32(10)})
			return err == nil && len(lm.Results) == 1 && aws.ToString(lm.Results[0].Status) == "COMPLETED" &&
				lm.Results[0].ApproximateNumberOfMessagesMoved == 1
		}, 20*time.Second, 50*time.Millisecond)
	})
}

// With --auth: SigV4 credentials of a tagq key, and tagq's permissions.
func TestE2E_SQS_Auth(t *testing.T) {
	t.Parallel()
	d := startAuth(t, backend{name: "embedded"})
	creds := func(apiKey string) aws.Credentials { return sigV4Creds(t, d.daemon, apiKey) }
	ctx := context.Background()
	admin := sqsClient(d.proc.SQS, creds(e2eAdminKey))
	_, err := admin.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("secure")})
	require.NoError(t, err)

	_, err = sqsClient(d.proc.SQS, anyCreds).ListQueues(ctx, &sqs.ListQueuesInput{})
	require.Equal(t, "InvalidClientTokenId", apiCode(err))
	wrong := creds(e2eAdminKey)
	wrong.SecretAccessKey += "x"
	_, err = sqsClient(d.proc.SQS, wrong).ListQueues(ctx, &sqs.ListQueuesInput{})
	require.Equal(t, "SignatureDoesNotMatch", apiCode(err))

	uc := sqsClient(d.proc.SQS, creds(d.principal(t, "sqs-user", grant("secure", tagqv1.Permission_PERMISSION_SEND))))
	q := "http://" + d.proc.SQS + "/000000000000/secure"
	_, err = uc.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q), MessageBody: aws.String("x")})
	require.NoError(t, err)
	_, err = uc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q)})
	require.Equal(t, "AccessDenied", apiCode(err), "SEND does not receive")
	_, err = uc.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("secure~mine")})
	require.Equal(t, "AccessDenied", apiCode(err), "nor make tags")
	r, err := admin.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q)})
	require.NoError(t, err)
	require.Len(t, r.Messages, 1)
}

// The SDK's checksum check is live: a proxy that changes the endpoint's
// MD5OfMessageBody makes the send fail on the client.
func TestE2E_SQS_SDKChecksMD5(t *testing.T) {
	t.Parallel()
	d := start(t, backend{name: "embedded"})
	target, err := url.Parse("http://" + d.proc.SQS)
	require.NoError(t, err)
	var mu sync.Mutex
	corrupt := false
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(r *http.Response) error {
		mu.Lock()
		defer mu.Unlock()
		if !corrupt {
			return nil
		}
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		raw = []byte(strings.Replace(string(raw), `"MD5OfMessageBody":"`, `"MD5OfMessageBody":"0`, 1))
		r.Body = io.NopCloser(strings.NewReader(string(raw)))
		r.ContentLength = int64(len(raw))
		r.Header.Set("Content-Length", strconv.Itoa(len(raw)))
		return nil
	}
	ps := httptest.NewServer(proxy)
	t.Cleanup(ps.Close)
	c := sqsClient(strings.TrimPrefix(ps.URL, "http://"), anyCreds)
	ctx := context.Background()
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("md5")})
	require.NoError(t, err)
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("x")})
	require.NoError(t, err)
	mu.Lock()
	corrupt = true
	mu.Unlock()
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("x")})
	require.ErrorContains(t, err, "checksum")
}

// With --auth the endpoint runs only when --sqs-addr is given (it says so
// at start); given, it warns that its signing key is kept in Redis.
func TestE2E_SQS_WithAuthOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	proc, err := tagqdtest.StartExactly(tagqdBin, "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
		"--auth", "--admin-key-file", adminKeyFile(t))
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = proc.Stop() })
	require.Empty(t, proc.SQS, "no SQS listener")
	require.Eventually(t, func() bool { return strings.Contains(proc.Stderr(), "grpc listening") }, 10*time.Second, 10*time.Millisecond)
	require.Contains(t, proc.Stderr(), "SQS endpoint off: with --auth it runs only when --sqs-addr")
	require.NotContains(t, proc.Stderr(), "sqs listening")
	_, err = proc.Stop()
	require.NoError(t, err)

	d := startAuth(t, backend{name: "embedded"}) // the harness gives --sqs-addr
	require.NotEmpty(t, d.proc.SQS)
	require.Eventually(t, func() bool { return strings.Contains(d.proc.Stderr(), "SigV4 signing key is kept in Redis") },
		10*time.Second, 10*time.Millisecond)
	require.Contains(t, d.proc.Stderr(), "--sqs-signing-key-file")
}

// --sqs-addr "" turns the endpoint off.
func TestE2E_SQS_Off(t *testing.T) {
	t.Parallel()
	d := start(t, backend{name: "embedded"}, "--sqs-addr", "")
	require.Empty(t, d.proc.SQS)
	require.NotContains(t, d.proc.Stderr(), "sqs listening")
}

// The FIFO receive attempts a tagqd keeps for retries are bounded by
// bytes: 30 receives of ten 1 MB messages, each with its own
// ReceiveRequestAttemptId (on 30 tags, so each gets all ten), keep at most
// 16 MiB for their principal, not 300 MB (the cache was bounded by count
// only and kept ended entries: tagqd's RSS reached 1 GB). tagqd runs with
// a memory limit of 160 MiB (and GOGC 100), so that its peak RSS follows
// what it keeps rather than its garbage: it stays under 250 MiB, where 240
// answers of 1 MB kept would take it past 300.
func TestE2E_SQS_AttemptCacheBounded(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "160MiB")
	t.Setenv("GOGC", "100")
	d := start(t, backend{name: "embedded"})
	c := sqsClient(d.proc.SQS, anyCreds)
	ctx := context.Background()
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("big.fifo"),
		Attributes: map[string]string{"FifoQueue": "true", "MaximumMessageSize": "1048576",
			// An attempt's answer is kept for its retry only while its messages stay
			// invisible: an hour, so a slow machine cannot see them come back first.
			"VisibilityTimeout": "3600"}})
	require.NoError(t, err)
	const tagCount = 30
	for i := range tagCount {
		_, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("big~t%d.fifo", i))})
		require.NoError(t, err)
	}
	body := strings.Repeat("z", 1_000_000)
	for i := range 10 {
		_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String(body),
			MessageGroupId: aws.String(fmt.Sprint("g", i)), MessageDeduplicationId: aws.String(fmt.Sprint("d", i))})
		require.NoError(t, err)
	}
	base := vmHWM(t, d.proc.PID())
	ids := func(r *sqs.ReceiveMessageOutput) []string {
		var out []string
		for _, m := range r.Messages {
			out = append(out, aws.ToString(m.MessageId))
		}
		return out
	}
	var first []string
	received := 0
	for i := range tagCount {
		u := fmt.Sprintf("http://%s/000000000000/big~t%d.fifo", d.proc.SQS, i)
		r, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(u), MaxNumberOfMessages: 10,
			ReceiveRequestAttemptId: aws.String(fmt.Sprint("a", i))})
		require.NoError(t, err)
		require.NotEmpty(t, r.Messages)
		received += len(r.Messages)
		if i == 0 {
			first = ids(r)
		}
	}
	peak := vmHWM(t, d.proc.PID())
	t.Logf("tagqd peak RSS %d MiB -> %d MiB over 30 receives of 1 MB messages (%d in all) with attempt ids", base>>20, peak>>20, received)
	require.Less(t, peak, int64(250<<20), "%d MB of answers kept would take it past", received)
	// The first receive's answer is still kept for its retry.
	u := fmt.Sprintf("http://%s/000000000000/big~t0.fifo", d.proc.SQS)
	r, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(u), MaxNumberOfMessages: 10,
		ReceiveRequestAttemptId: aws.String("a0")})
	require.NoError(t, err)
	require.Equal(t, first, ids(r), "the retry gets the same messages")
}

// The attributes in which the SQS endpoint keeps data types and trace
// headers (AWS.SQS.) are its own: a sender of tagq's gRPC or REST API may
// not set them, not even claiming to be the endpoint (its metadata key in
// a header), so a type read back through SQS is one SQS sent.
func TestE2E_SQS_HiddenAttributesReserved(t *testing.T) {
	t.Parallel()
	d := start(t, backend{name: "embedded"})
	ctx := context.Background()
	c := sqsClient(d.proc.SQS, anyCreds)
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("typed")})
	require.NoError(t, err)
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("x"),
		MessageAttributes: map[string]types.MessageAttributeValue{"n": {DataType: aws.String("Number.int"), StringValue: aws.String("7")}}})
	require.NoError(t, err, "the endpoint's own sends carry them")
	r, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MessageAttributeNames: []string{"All"}})
	require.NoError(t, err)
	require.Len(t, r.Messages, 1)
	require.Equal(t, "Number.int", aws.ToString(r.Messages[0].MessageAttributes["n"].DataType))

	forged := map[string]*tagqv1.MessageAttribute{"AWS.SQS.DataTypes": {Value: &tagqv1.MessageAttribute_StringValue{StringValue: "n=Binary"}}}
	_, err = d.m.SendMessage(metadata.AppendToOutgoingContext(ctx, "x-tagq-gateway-sqs", "1"),
		&tagqv1.SendMessageRequest{Queue: "typed", Body: []byte("y"), Attributes: forged})
	_, ei := errInfo(t, err)
	require.Equal(t, "RESERVED_ATTRIBUTE", ei.GetReason())
	require.Equal(t, "attributes[AWS.SQS.DataTypes]", ei.GetMetadata()["field"])
	res, err := d.m.SendMessageBatch(ctx, &tagqv1.SendMessageBatchRequest{Queue: "typed", Entries: []*tagqv1.SendMessageBatchEntry{
		{Id: "a", Body: []byte("y"), Attributes: map[string]*tagqv1.MessageAttribute{
			"AWS.SQS.TraceHeader": {Value: &tagqv1.MessageAttribute_StringValue{StringValue: "Root=1-forged"}}}}}})
	require.NoError(t, err)
	require.Len(t, res.GetFailed(), 1)
	require.Equal(t, "RESERVED_ATTRIBUTE", res.GetFailed()[0].GetReason())

	req, err := http.NewRequest("POST", "http://"+d.http+"/v1/queues/typed/messages",
		strings.NewReader(`{"body": "eA==", "attributes": {"AWS.SQS.DataTypes": {"string_value": "n=Binary"}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Grpc-Metadata-X-Tagq-Gateway-Sqs", "1")
	code, body := doJSON(t, http.DefaultClient, req)
	require.Equal(t, 400, code, body)
	reasonOf, _ := reason(body)
	require.Equal(t, "RESERVED_ATTRIBUTE", reasonOf)
}
