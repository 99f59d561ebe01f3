package sqs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// BenchmarkW1 is tagq-bench's W1 row through the endpoint (batch 10,
// 1 KiB bodies), without the network: each op is a SendMessageBatch of
// 10, a ReceiveMessage of up to 10 and a DeleteMessageBatch of what it
// got, as aws-sdk-go-v2 writes them, served by Handler.ServeHTTP in this
// process. cpu-µs/msg is this process's CPU (user and system) per
// message: the endpoint, the server behind it and the engine's Redis
// client (not Redis itself, nor the HTTP transport and the SDK). On the
// real Redis of TAGQ_TEST_REDIS_URL (a key prefix of its own, deleted
// after), else on miniredis, whose work counts in this process's CPU.
//
//	TAGQ_TEST_REDIS_URL=redis://127.0.0.1:6379/0 go test -run '^$' -bench W1 -benchmem ./sqs/
func BenchmarkW1(b *testing.B) {
	bd := benchBundle(b)
	q := "http://" + benchHost + "/" + DefaultAccountID + "/w1"
	bd.ok("CreateQueue", obj{"QueueName": "w1"})
	sendBody, receiveBody := w1Body("SendMessageBatch", q, nil), w1Body("ReceiveMessage", q, nil)
	var handles []string
	start := cpuTime()
	b.ResetTimer()
	for range b.N {
		benchServe(b, bd.h, "SendMessageBatch", sendBody)
		var got struct {
			Messages []struct{ ReceiptHandle string }
		}
		benchDecode(b, benchServe(b, bd.h, "ReceiveMessage", receiveBody), &got)
		require.NotEmpty(b, got.Messages)
		handles = handles[:0]
		for _, m := range got.Messages {
			handles = append(handles, m.ReceiptHandle)
		}
		var res struct{ Failed []any }
		benchDecode(b, benchServe(b, bd.h, "DeleteMessageBatch", w1Body("DeleteMessageBatch", q, handles)), &res)
		require.Empty(b, res.Failed)
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Microsecond)/float64(b.N*10), "cpu-µs/msg")
}

// benchHost is the Host of the benchmark's requests (queue URLs name it).
const benchHost = "sqs.bench"

// benchBundle is the endpoint on TAGQ_TEST_REDIS_URL's Redis, under a
// prefix of its own, or on miniredis.
func benchBundle(b *testing.B) *bundle {
	url := os.Getenv("TAGQ_TEST_REDIS_URL")
	if url == "" {
		return setup(b, false)
	}
	opt, err := redis.ParseURL(url)
	require.NoError(b, err)
	rdb := redis.NewClient(opt)
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	prefix := "tagq-sqsbench-" + hex.EncodeToString(rnd[:])
	b.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Unlink(ctx, iter.Val())
		}
		_ = rdb.Close()
	})
	return setupOn(b, false, rdb, prefix)
}

// benchServe serves one JSON request of action with a well-formed
// signature (authentication is off: not checked), failing b unless it
// is answered 200. The request and the answer's writer are as cheap as
// can be, so that the benchmark measures the endpoint.
func benchServe(b *testing.B, h http.Handler, action, body string) []byte {
	req, err := http.NewRequest(http.MethodPost, "http://"+benchHost+"/", strings.NewReader(body))
	require.NoError(b, err)
	req.Header.Set("Content-Type", jsonContentType)
	req.Header.Set("X-Amz-Target", targetPrefix+action)
	now := time.Now().UTC()
	req.Header.Set("X-Amz-Date", now.Format(amzDateForm))
	req.Header.Set("Authorization", sigAlgorithm+" Credential=bench/"+now.Format("20060102")+
		"/us-east-1/sqs/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature="+strings.Repeat("0", 64))
	w := &benchWriter{header: http.Header{}, code: http.StatusOK}
	h.ServeHTTP(w, req)
	if w.code != http.StatusOK {
		b.Fatalf("%s: %d %s", action, w.code, w.body)
	}
	return w.body
}

// benchWriter is an http.ResponseWriter that keeps the answer.
type benchWriter struct {
	header http.Header
	code   int
	body   []byte
}

func (w *benchWriter) Header() http.Header         { return w.header }
func (w *benchWriter) WriteHeader(code int)        { w.code = code }
func (w *benchWriter) Write(p []byte) (int, error) { w.body = append(w.body, p...); return len(p), nil }

func benchDecode(b *testing.B, raw []byte, v any) {
	if err := json.Unmarshal(raw, v); err != nil {
		b.Fatalf("%s: %v", raw, err)
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkParseJSON decodes the request bodies of BenchmarkW1's three
// actions.
func BenchmarkParseJSON(b *testing.B) {
	for _, action := range []string{"SendMessageBatch", "ReceiveMessage", "DeleteMessageBatch"} {
		body := []byte(w1Body(action, "http://"+benchHost+"/"+DefaultAccountID+"/w1", []string{
			strings.Repeat("h", 120), strings.Repeat("i", 120), strings.Repeat("j", 120), strings.Repeat("k", 120), strings.Repeat("l", 120),
			strings.Repeat("m", 120), strings.Repeat("n", 120), strings.Repeat("o", 120), strings.Repeat("p", 120), strings.Repeat("q", 120)}))
		b.Run(action, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for range b.N {
				if _, err := parseJSON(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// w1Body is the JSON body aws-sdk-go-v2 sends for BenchmarkW1's action on
// the queue at q: 10 bodies of 1 KiB, or a delete of handles.
func w1Body(action, q string, handles []string) string {
	var s strings.Builder
	switch action {
	case "SendMessageBatch":
		body := strings.Repeat("x", 1024)
		s.WriteString(`{"Entries":[`)
		for i := range 10 {
			if i > 0 {
				s.WriteByte(',')
			}
			s.WriteString(`{"Id":"` + strconv.Itoa(i) + `","MessageBody":"` + body + `"}`)
		}
		s.WriteString(`],"QueueUrl":"` + q + `"}`)
	case "ReceiveMessage":
		s.WriteString(`{"MaxNumberOfMessages":10,"QueueUrl":"` + q + `","WaitTimeSeconds":1}`)
	case "DeleteMessageBatch":
		s.WriteString(`{"Entries":[`)
		for i, h := range handles {
			if i > 0 {
				s.WriteByte(',')
			}
			s.WriteString(`{"Id":"` + strconv.Itoa(i) + `","ReceiptHandle":"` + h + `"}`)
		}
		s.WriteString(`],"QueueUrl":"` + q + `"}`)
	}
	return s.String()
}

// BenchmarkValidText checks a 1 KiB body of printable ASCII, as
// BenchmarkW1's are.
func BenchmarkValidText(b *testing.B) {
	s := strings.Repeat("x", 1024)
	b.SetBytes(int64(len(s)))
	for range b.N {
		if !validText(s) {
			b.Fatal("not valid")
		}
	}
}
