package sqs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Both protocols' parsers, fuzzed through the whole endpoint (a real tagq
// server behind it, authentication off, every request well signed so the
// input reaches the parsers and the actions): no input may make it fail
// (a 5xx), panic, or answer what is not well-formed JSON or XML.

// serveSigned signs a request and serves it in process.
func (b *bundle) serveSigned(t *testing.T, req *http.Request, body []byte) *httptest.ResponseRecorder {
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), b.creds, req, hex.EncodeToString(sum[:]), "sqs", "us-east-1", time.Now()); err != nil {
		t.Skip("not signable:", err)
	}
	w := httptest.NewRecorder()
	ctx, cancel := context.WithTimeout(req.Context(), 5*time.Second)
	defer cancel()
	b.h.ServeHTTP(w, req.WithContext(ctx))
	return w
}

// checkAnswer fails on a 5xx or an answer that is not well-formed.
func checkAnswer(t *testing.T, w *httptest.ResponseRecorder) {
	if w.Code >= 500 {
		t.Fatalf("status %d for client input: %s", w.Code, w.Body)
	}
	body := w.Body.Bytes()
	if strings.HasPrefix(w.Header().Get("Content-Type"), jsonContentType) {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("answer is not JSON (%v): %s", err, body)
		}
		return
	}
	d := xml.NewDecoder(bytes.NewReader(body))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("answer is not XML (%v): %s", err, body)
		}
	}
}

var fuzzActions = []string{"CreateQueue", "SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessageBatch",
	"ChangeMessageVisibilityBatch", "GetQueueAttributes", "SetQueueAttributes", "ListQueues", "TagQueue",
	"StartMessageMoveTask", "ListMessageMoveTasks", "CancelMessageMoveTask", "GetQueueUrl"}

func FuzzJSONProtocol(f *testing.F) {
	const q = "http://h/000000000000/fz"
	for _, s := range []struct{ action, body string }{
		{"CreateQueue", `{"QueueName":"fz","Attributes":{"DelaySeconds":"0","RedrivePolicy":"{\"deadLetterTargetArn\":\"arn:aws:sqs:r:000000000000:d\",\"maxReceiveCount\":2}"},"tags":{"a":"b"}}`},
		{"CreateQueue", `{"QueueName":"fz~t.fifo","Attributes":{"FifoQueue":"true","VisibilityTimeout":"1"}}`},
		{"SendMessage", `{"QueueUrl":"` + q + `","MessageBody":"x","MessageAttributes":{"n":{"DataType":"Number","StringValue":"1"},"b":{"DataType":"Binary.x","BinaryValue":"AAE="}},"MessageSystemAttributes":{"AWSTraceHeader":{"DataType":"String","StringValue":"t"}}}`},
		{"SendMessageBatch", `{"QueueUrl":"` + q + `","Entries":[{"Id":"1","MessageBody":"a","DelaySeconds":1},{"Id":"2","MessageBody":"b","MessageGroupId":"g"}]}`},
		{"ReceiveMessage", `{"QueueUrl":"` + q + `","MaxNumberOfMessages":10,"AttributeNames":["All"],"MessageAttributeNames":["a.*"],"ReceiveRequestAttemptId":"x"}`},
		{"DeleteMessageBatch", `{"QueueUrl":"` + q + `","Entries":[{"Id":"1","ReceiptHandle":"h"}]}`},
		{"ChangeMessageVisibilityBatch", `{"QueueUrl":"` + q + `","Entries":[{"Id":"1","ReceiptHandle":"h","VisibilityTimeout":0}]}`},
		{"GetQueueAttributes", `{"QueueUrl":"` + q + `","AttributeNames":["All"]}`},
		{"SetQueueAttributes", `{"QueueUrl":"` + q + `","Attributes":{"RedrivePolicy":""}}`},
		{"ListQueues", `{"QueueNamePrefix":"fz~","MaxResults":2,"NextToken":"x"}`},
		{"StartMessageMoveTask", `{"SourceArn":"arn:aws:sqs:r:000000000000:fz","DestinationArn":"arn:aws:sqs:r:000000000000:a~b"}`},
		{"CancelMessageMoveTask", `{"TaskHandle":"ZnovaWQ"}`},
	} {
		f.Add(s.action, s.body)
	}
	b := setup(f, false)
	f.Fuzz(func(t *testing.T, action, body string) {
		req, err := http.NewRequest("POST", "http://127.0.0.1/", strings.NewReader(body))
		if err != nil {
			t.Skip()
		}
		req.Header.Set("Content-Type", jsonContentType)
		req.Header.Set("X-Amz-Target", targetPrefix+action)
		checkAnswer(t, b.serveSigned(t, req, []byte(body)))
	})
}

func FuzzQueryProtocol(f *testing.F) {
	q := "QueueUrl=http%3A%2F%2Fh%2F000000000000%2Ffz"
	for _, s := range []string{
		"Action=CreateQueue&QueueName=fz&Attribute.1.Name=VisibilityTimeout&Attribute.1.Value=5&Tag.1.Key=a&Tag.1.Value=b",
		"Action=SendMessage&" + q + "&MessageBody=x&MessageAttribute.1.Name=n&MessageAttribute.1.Value.DataType=Number&MessageAttribute.1.Value.StringValue=2",
		"Action=SendMessageBatch&" + q + "&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=b" +
			"&SendMessageBatchRequestEntry.1.MessageAttribute.1.Name=x&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType=Binary" +
			"&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.BinaryValue=AA%3D%3D",
		"Action=ReceiveMessage&" + q + "&AttributeName.1=All&MessageAttributeName.1=All&MaxNumberOfMessages=3&WaitTimeSeconds=0",
		"Action=DeleteMessageBatch&" + q + "&DeleteMessageBatchRequestEntry.1.Id=a&DeleteMessageBatchRequestEntry.1.ReceiptHandle=h",
		"Action=ChangeMessageVisibilityBatch&" + q + "&ChangeMessageVisibilityBatchRequestEntry.1.Id=a" +
			"&ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle=h&ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout=1",
		"Action=GetQueueAttributes&" + q + "&AttributeName.1=QueueArn",
		"Action=TagQueue&" + q + "&Tags.1.Key=k&Tags.1.Value=v",
		"Action=UntagQueue&" + q + "&TagKey.1=k",
		"Action=ListQueues&QueueNamePrefix=f",
		"Action=ListDeadLetterSourceQueues&" + q + "&MaxResults=1&NextToken=MQ",
	} {
		f.Add(s)
	}
	b := setup(f, false)
	f.Fuzz(func(t *testing.T, form string) {
		req, err := http.NewRequest("POST", "http://127.0.0.1/", strings.NewReader(form))
		if err != nil {
			t.Skip()
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		checkAnswer(t, b.serveSigned(t, req, []byte(form)))
	})
}

// FuzzSignature: any Authorization header, date and body: parsed without a
// panic, refused unless well-formed.
func FuzzSignature(f *testing.F) {
	f.Add("AWS4-HMAC-SHA256 Credential=k/20261128/us-east-1/sqs/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature="+
		strings.Repeat("ab", 32), "20261128T120000Z", "{}")
	f.Add("AWS4-HMAC-SHA256 Credential=/x//, SignedHeaders=;, Signature=", "", "")
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, auth, date, body string) {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		r.Header.Set("Authorization", auth)
		r.Header.Set("X-Amz-Date", date)
		s, e := parseSignature(r, now, true)
		if e == nil && s.checkBody(r, []byte(body)) == nil {
			_ = s.verify(r, []byte(body), "secret")
		}
	})
}
