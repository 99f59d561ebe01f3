package sqs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"
)

var sigNow = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// signed is a request signed by aws-sdk-go-v2's own signer (the reference
// this endpoint must agree with), as the server receives it.
func signed(t testing.TB, method, target, body, secret string, at time.Time, mutate func(*http.Request)) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, "http://127.0.0.1:9324"+target, strings.NewReader(body))
	require.NoError(t, err)
	if strings.HasPrefix(body, "{") {
		req.Header.Set("Content-Type", jsonContentType)
		req.Header.Set("X-Amz-Target", "AmazonSQS.ListQueues")
	} else {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	}
	if mutate != nil {
		mutate(req)
	}
	sum := sha256.Sum256([]byte(body))
	creds := aws.Credentials{AccessKeyID: "0123456789abcdef", SecretAccessKey: secret}
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "sqs", "eu-west-3", at))
	// As the server sees it.
	srv := httptest.NewRequest(method, target, strings.NewReader(body))
	srv.Header = req.Header.Clone()
	srv.Host = req.Host
	srv.ContentLength = req.ContentLength
	return srv
}

func TestSignature_AgreesWithAWSSigner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ method, target, body string }{
		{"POST", "/", `{"QueueNamePrefix":"a"}`},
		{"POST", "/000000000000/orders~billing", "Action=ReceiveMessage&Version=2012-11-05&MaxNumberOfMessages=10"},
		{"GET", "/?Action=ListQueues&QueueNamePrefix=a%20b&Version=2012-11-05&Empty=", ""},
	} {
		r := signed(t, tc.method, tc.target, tc.body, "s3cret", sigNow, nil)
		s, e := parseSignature(r, sigNow.Add(time.Minute), strings.HasPrefix(tc.body, "{"))
		if e == nil {
			e = s.checkBody(r, []byte(tc.body))
		}
		require.Nil(t, e, "%v", e)
		require.Equal(t, "0123456789abcdef", s.accessKey)
		require.Equal(t, "eu-west-3", s.region)
		require.Nil(t, s.verify(r, []byte(tc.body), "s3cret"), tc.target)
		require.NotNil(t, s.verify(r, []byte(tc.body), "other"), "another secret")
		require.NotNil(t, s.verify(r, []byte(tc.body+" "), "s3cret"), "another body")
	}
}

func TestSignature_Refusals(t *testing.T) {
	t.Parallel()
	body := `{}`
	check := func(r *http.Request, b string, now time.Time, code string) {
		t.Helper()
		s, e := parseSignature(r, now, true)
		if e == nil {
			e = s.checkBody(r, []byte(b))
		}
		require.NotNil(t, e)
		require.Equal(t, code, e.Code, e.Message)
	}
	r := signed(t, "POST", "/", body, "k", sigNow, nil)
	r.Header.Del("Authorization")
	check(r, body, sigNow, "MissingAuthenticationToken")

	r = signed(t, "POST", "/", body, "k", sigNow, nil)
	r.Header.Set("Authorization", "Bearer tagq_x")
	check(r, body, sigNow, "IncompleteSignature")

	r = signed(t, "POST", "/", body, "k", sigNow, nil)
	r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/sqs/", "/s3/", 1))
	check(r, body, sigNow, "SignatureDoesNotMatch")

	r = signed(t, "POST", "/", body, "k", sigNow, nil)
	r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "Signature=", "Signature=zz", 1))
	check(r, body, sigNow, "IncompleteSignature")

	// Dated more than 5 minutes away, either way.
	r = signed(t, "POST", "/", body, "k", sigNow, nil)
	check(r, body, sigNow.Add(MaxClockSkew+time.Second), "SignatureDoesNotMatch")
	check(r, body, sigNow.Add(-MaxClockSkew-time.Second), "SignatureDoesNotMatch")
	_, e := parseSignature(r, sigNow.Add(MaxClockSkew-time.Second), true)
	require.Nil(t, e, "within the window")

	// The body's declared hash must be the body's.
	r = signed(t, "POST", "/", body, "k", sigNow, func(r *http.Request) {
		r.Header.Set("X-Amz-Content-Sha256", strings.Repeat("0", 64))
	})
	check(r, body, sigNow, "SignatureDoesNotMatch")

	// X-Amz-Target must be signed (a replay cannot change the action).
	r = signed(t, "POST", "/", body, "k", sigNow, nil)
	auth := r.Header.Get("Authorization")
	r.Header.Set("Authorization", strings.Replace(auth, ";x-amz-target", "", 1))
	check(r, body, sigNow, "IncompleteSignature")

	// No date at all.
	r = signed(t, "POST", "/", body, "k", sigNow, nil)
	r.Header.Del("X-Amz-Date")
	check(r, body, sigNow, "IncompleteSignature")

	// Presigned query strings are not taken.
	r = httptest.NewRequest("GET", "/?Action=ListQueues&X-Amz-Signature=ab&X-Amz-Credential=x", nil)
	check(r, "", sigNow, "MissingAuthenticationToken")
}

// The SigV4 secret is bound to the key's id, its hash and the signing key.
func TestDeriveSecret(t *testing.T) {
	t.Parallel()
	master := []byte("0123456789abcdef0123456789abcdef")
	a := DeriveSecret(master, "k1", []byte{1, 2, 3})
	require.Len(t, a, 43)
	require.Equal(t, a, DeriveSecret(master, "k1", []byte{1, 2, 3}))
	require.NotEqual(t, a, DeriveSecret(master, "k2", []byte{1, 2, 3}))
	require.NotEqual(t, a, DeriveSecret(master, "k1", []byte{1, 2, 4}))
	require.NotEqual(t, a, DeriveSecret([]byte("another master key 0123456789"), "k1", []byte{1, 2, 3}))
}
