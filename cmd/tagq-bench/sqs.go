package main

// The SQS API rows of W1 (DESIGN.md §7: tagq's SQS endpoint ≥ 0.8× its
// own unary gRPC API and ≥ goaws): 4 producers sending batches
// (SendMessageBatch, or SendMessage at batch 1) and 4 consumers receiving
// up to a batch with a 1 s long poll (ReceiveMessage) and deleting what
// they got (DeleteMessageBatch, or DeleteMessage), over HTTP/1.1 to the
// endpoint:
//
//   - tagq-sqs: unmodified aws-sdk-go-v2 (the AWS JSON 1.0 protocol, MD5
//     checks on) against tagqd's SQS endpoint, on the same queue and
//     Redis as the tagq rows;
//   - tagq-sqs-query and goaws: the query protocol (form posts, XML
//     answers, signed with aws-sdk-go-v2's SigV4 signer) through this
//     file's small client, against tagqd and against the peer goaws
//     (github.com/Admiral-Piett/goaws, an in-memory SQS emulator, when it
//     answers at --goaws-url). goaws 0.4.5, the newest the Go module proxy
//     serves, speaks only the query protocol, which current aws-sdk-go-v2
//     no longer does: the like-for-like comparison is between these two
//     rows, same client code, same protocol.
//
// Bodies are --size bytes of 'x' (SQS bodies are text). goaws's CPU is that
// of the processes named goaws; its Redis CPU is 0.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// sqsAPI is the part of the SQS API W1 uses.
type sqsAPI interface {
	send(ctx context.Context, queueURL string, bodies []string) error
	// receive long polls up to wait for up to max messages and returns
	// their receipt handles.
	receive(ctx context.Context, queueURL string, max int, wait time.Duration) ([]string, error)
	remove(ctx context.Context, queueURL string, handles []string) error
}

// benchCreds sign every request: tagqd runs without --auth, goaws checks
// nothing.
var benchCreds = aws.Credentials{AccessKeyID: "tagqbench", SecretAccessKey: "tagqbench-secret"}

// sqsHTTP is an HTTP client for the SQS rows: keep-alive connections
// enough for 8 workers.
func sqsHTTP() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext}, Timeout: 30 * time.Second}
}

// sdkSQS is aws-sdk-go-v2's client (the JSON protocol).
type sdkSQS struct{ c *sqs.Client }

func newSDKSQS(endpoint string) *sdkSQS {
	return &sdkSQS{c: sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), HTTPClient: sqsHTTP(),
		RetryMaxAttempts: 1,
		Credentials:      aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return benchCreds, nil })})}
}

func (s *sdkSQS) send(ctx context.Context, q string, bodies []string) error {
	if len(bodies) == 1 {
		_, err := s.c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q), MessageBody: aws.String(bodies[0])})
		return err
	}
	entries := make([]types.SendMessageBatchRequestEntry, len(bodies))
	for i, b := range bodies {
		entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(b)}
	}
	out, err := s.c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q), Entries: entries})
	if err == nil && len(out.Failed) > 0 {
		err = fmt.Errorf("send batch: %d entries failed, first: %s", len(out.Failed), aws.ToString(out.Failed[0].Message))
	}
	return err
}

func (s *sdkSQS) receive(ctx context.Context, q string, max int, wait time.Duration) ([]string, error) {
	out, err := s.c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q), MaxNumberOfMessages: int32(max),
		WaitTimeSeconds: int32(wait / time.Second)})
	if err != nil {
		return nil, err
	}
	hs := make([]string, len(out.Messages))
	for i, m := range out.Messages {
		hs[i] = aws.ToString(m.ReceiptHandle)
	}
	return hs, nil
}

func (s *sdkSQS) remove(ctx context.Context, q string, handles []string) error {
	if len(handles) == 1 {
		_, err := s.c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q), ReceiptHandle: aws.String(handles[0])})
		return err
	}
	entries := make([]types.DeleteMessageBatchRequestEntry, len(handles))
	for i, h := range handles {
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(h)}
	}
	out, err := s.c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q), Entries: entries})
	if err == nil && len(out.Failed) > 0 {
		err = fmt.Errorf("delete batch: %d entries failed", len(out.Failed))
	}
	return err
}

// querySQS is a small query-protocol client: form posts to the endpoint,
// signed with aws-sdk-go-v2's signer, XML answers.
type querySQS struct {
	endpoint string
	http     *http.Client
	signer   *v4.Signer
}

func newQuerySQS(endpoint string) *querySQS {
	return &querySQS{endpoint: endpoint, http: sqsHTTP(), signer: v4.NewSigner()}
}

// do posts an action's form and decodes its XML answer into out (nil:
// none wanted). An error answer is an error.
func (s *querySQS) do(ctx context.Context, form url.Values, out any) error {
	form.Set("Version", "2012-11-05")
	body := form.Encode()
	req, err := http.NewRequestWithContext(ctx, "POST", s.endpoint+"/", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	sum := sha256.Sum256([]byte(body))
	if err := s.signer.SignHTTP(ctx, benchCreds, req, hex.EncodeToString(sum[:]), "sqs", "us-east-1", time.Now()); err != nil {
		return err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d: %s", form.Get("Action"), resp.StatusCode, bytes.TrimSpace(raw[:min(len(raw), 300)]))
	}
	if out == nil {
		return nil
	}
	return xml.Unmarshal(raw, out)
}

type queryBatchResult struct {
	Failed []struct {
		ID      string `xml:"Id"`
		Message string `xml:"Message"`
	} `xml:"SendMessageBatchResult>BatchResultErrorEntry"`
	DeleteFailed []struct {
		ID string `xml:"Id"`
	} `xml:"DeleteMessageBatchResult>BatchResultErrorEntry"`
}

func (s *querySQS) send(ctx context.Context, q string, bodies []string) error {
	form := url.Values{"QueueUrl": {q}}
	if len(bodies) == 1 {
		form.Set("Action", "SendMessage")
		form.Set("MessageBody", bodies[0])
		return s.do(ctx, form, nil)
	}
	batchForm(form, "SendMessageBatch", "MessageBody", bodies)
	var out queryBatchResult
	if err := s.do(ctx, form, &out); err != nil {
		return err
	}
	if len(out.Failed) > 0 {
		return fmt.Errorf("send batch: %d entries failed, first: %s", len(out.Failed), out.Failed[0].Message)
	}
	return nil
}

func (s *querySQS) receive(ctx context.Context, q string, max int, wait time.Duration) ([]string, error) {
	var out struct {
		Handles []string `xml:"ReceiveMessageResult>Message>ReceiptHandle"`
	}
	err := s.do(ctx, url.Values{"Action": {"ReceiveMessage"}, "QueueUrl": {q}, "MaxNumberOfMessages": {strconv.Itoa(max)},
		"WaitTimeSeconds": {strconv.Itoa(int(wait / time.Second))}}, &out)
	return out.Handles, err
}

func (s *querySQS) remove(ctx context.Context, q string, handles []string) error {
	form := url.Values{"QueueUrl": {q}}
	if len(handles) == 1 {
		form.Set("Action", "DeleteMessage")
		form.Set("ReceiptHandle", handles[0])
		return s.do(ctx, form, nil)
	}
	batchForm(form, "DeleteMessageBatch", "ReceiptHandle", handles)
	var out queryBatchResult
	if err := s.do(ctx, form, &out); err != nil {
		return err
	}
	if len(out.DeleteFailed) > 0 {
		return fmt.Errorf("delete batch: %d entries failed", len(out.DeleteFailed))
	}
	return nil
}

// batchForm fills form with a batch action's entries: each an Id and
// field set to one of values.
func batchForm(form url.Values, action, field string, values []string) {
	form.Set("Action", action)
	for i, v := range values {
		p := action + "RequestEntry." + strconv.Itoa(i+1) + "."
		form.Set(p+"Id", strconv.Itoa(i))
		form.Set(p+field, v)
	}
}

// createQueue makes a queue through the query protocol and returns its URL.
func (s *querySQS) createQueue(ctx context.Context, name string) (string, error) {
	var out struct {
		URL string `xml:"CreateQueueResult>QueueUrl"`
	}
	err := s.do(ctx, url.Values{"Action": {"CreateQueue"}, "QueueName": {name}}, &out)
	return out.URL, err
}

func (s *querySQS) deleteQueue(ctx context.Context, queueURL string) error {
	return s.do(ctx, url.Values{"Action": {"DeleteQueue"}, "QueueUrl": {queueURL}}, nil)
}

// sqsW1 is W1 through the SQS API: tagqd's endpoint with aws-sdk-go-v2 and
// with the query client, and goaws (when it answers). unary is the tagq
// row of the same batch size, for the ratio the bar is about.
func (e *env) sqsW1(name string, batch int, unary *result) []result {
	body := strings.Repeat("x", len(e.body))
	bodies := make([]string, batch)
	for i := range bodies {
		bodies[i] = body
	}
	var out []result
	if e.sqsAddr != "" {
		q := "http://" + e.sqsAddr + "/000000000000/w1"
		for _, c := range []struct {
			api    sqsAPI
			system string
		}{{newSDKSQS("http://" + e.sqsAddr), "tagq-sqs"}, {newQuerySQS("http://" + e.sqsAddr), "tagq-sqs-query"}} {
			e.tagqQueue("w1", 1, e.partitioned())
			r := e.runSQS(c.api, name, c.system, q, bodies, startMeter(e.ctx, e.nodes, e.pid))
			r.partitions = e.partitions
			out = append(out, r)
		}
	}
	if e.goawsURL != "" {
		g := newQuerySQS(strings.TrimSuffix(e.goawsURL, "/"))
		if q, err := g.createQueue(e.ctx, peerName("w1")); err != nil {
			out = append(out, result{workload: name, system: "goaws", note: "error: " + err.Error()})
		} else {
			mt := startMeterPIDs(e.ctx, e.nodes, localPIDs(e.goawsURL, "goaws"))
			r := e.runSQS(g, name, "goaws", q, bodies, mt)
			r.cpuRedis, r.scripts = 0, scriptStats{}
			out = append(out, r)
			_ = g.deleteQueue(e.ctx, q)
		}
	}
	byName := map[string]result{}
	for _, r := range out {
		byName[r.system] = r
	}
	for i, r := range out {
		var notes []string
		if unary != nil && unary.rate() > 0 && r.system != "goaws" {
			notes = append(notes, fmt.Sprintf("%.2f x tagq unary", r.rate()/unary.rate()))
		}
		if g, ok := byName["goaws"]; ok && g.rate() > 0 && r.system != "goaws" {
			notes = append(notes, fmt.Sprintf("%.2f x goaws", r.rate()/g.rate()))
		}
		if r.note != "" {
			notes = append(notes, r.note)
		}
		out[i].note = strings.Join(notes, "; ")
	}
	return out
}

// runSQS runs W1 through an SQS API on the queue at q: 4 producers, 4
// consumers, producers held at most maxAhead messages ahead.
func (e *env) runSQS(api sqsAPI, name, system, q string, bodies []string, mt *meter) result {
	var delivered atomic.Int64
	l, el := e.run(4, 4, func(l *loop) error {
		if err := api.send(e.ctx, q, bodies); err != nil {
			return err
		}
		l.produced.Add(int64(len(bodies)))
		return nil
	}, func(l *loop, _ int) error {
		hs, err := api.receive(e.ctx, q, len(bodies), time.Second)
		if err != nil || len(hs) == 0 {
			return err
		}
		if err := api.remove(e.ctx, q, hs); err != nil {
			return err
		}
		delivered.Add(int64(len(hs)))
		l.consumed.Add(int64(len(hs)))
		return nil
	})
	r := result{workload: name, system: system, msgs: delivered.Load(), sent: l.produced.Load()}
	mt.stop(&r)
	r.elapsed = el
	return check(r, l)
}
