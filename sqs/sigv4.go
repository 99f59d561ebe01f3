package sqs

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// AWS Signature Version 4 (header form), as SQS verifies it.
//
// Every request must carry a well-formed signature: an Authorization
// header of algorithm AWS4-HMAC-SHA256 with a credential scoped to the
// service sqs (any region), signing at least host, the date header it
// is dated by (X-Amz-Date, else Date) and, in the JSON protocol,
// X-Amz-Target; dated within MaxClockSkew of the server's clock; over a
// body whose SHA-256 is the one it declares (X-Amz-Content-Sha256, when
// sent). That holds with authentication off as well: a browser cannot
// send an Authorization header to another origin without a CORS
// preflight, which tagqd never grants, so no web page can drive the
// endpoint (cross-site request forgery), a form post included. With
// authentication on, the signature is also checked: the access key id
// names a tagq API key, and the secret is DeriveSecret's for it.

// MaxClockSkew is how far a request's date may be from the server's
// clock, either way (SQS's window).
const MaxClockSkew = 5 * time.Minute

const (
	sigAlgorithm = "AWS4-HMAC-SHA256"
	amzDateForm  = "20060102T150405Z"
	scopeEnd     = "aws4_request"
	serviceName  = "sqs"
)

// signature is a request's parsed Signature V4.
type signature struct {
	accessKey     string
	date          string // yyyymmdd of the credential scope
	region        string
	signedHeaders []string
	sig           []byte
	amzDate       string // the request's date as signed
}

// parseSignature reads and checks the form of a request's signature: all
// that can be checked on its headers, before its body is read, without
// the secret (the body's hash is checkBody's).
func parseSignature(r *http.Request, now time.Time, jsonProtocol bool) (*signature, *Error) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		if q := r.URL.Query(); q.Get("X-Amz-Signature") != "" || q.Get("X-Amz-Credential") != "" {
			return nil, errMissingAuth("query-string (presigned) signatures are not supported here: sign the Authorization header")
		}
		return nil, errMissingAuth("Request is missing Authentication Token: sign every request with AWS Signature Version 4 " +
			"(with tagqd's --auth, with a key's SigV4 credentials; without it, with any credentials)")
	}
	alg, rest, _ := strings.Cut(auth, " ")
	if alg != sigAlgorithm {
		return nil, errIncompleteSig("the Authorization header must be an %s signature (AWS Signature Version 4), not %q", sigAlgorithm, clip(alg))
	}
	var s signature
	var credential, signed, sigHex string
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			credential = v
		case "SignedHeaders":
			signed = v
		case "Signature":
			sigHex = v
		}
	}
	if credential == "" || signed == "" || sigHex == "" {
		return nil, errIncompleteSig("Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters")
	}
	scope := strings.Split(credential, "/")
	if len(scope) != 5 || scope[0] == "" || scope[4] != scopeEnd {
		return nil, errIncompleteSig("Credential must be <access key id>/<yyyymmdd>/<region>/sqs/aws4_request, got %q", clip(credential))
	}
	if scope[3] != serviceName {
		return nil, errSignatureMismatch("Credential should be scoped to correct service: 'sqs', not %q", clip(scope[3]))
	}
	s.accessKey, s.date, s.region = scope[0], scope[1], scope[2]
	var err error
	if s.sig, err = hex.DecodeString(sigHex); err != nil || len(s.sig) != sha256.Size {
		return nil, errIncompleteSig("Signature must be 64 hexadecimal digits")
	}
	s.signedHeaders = strings.Split(signed, ";")
	if !sort.StringsAreSorted(s.signedHeaders) {
		return nil, errIncompleteSig("SignedHeaders must be lowercase header names in order, separated by ';'")
	}
	dateHeader := "x-amz-date"
	s.amzDate = r.Header.Get("X-Amz-Date")
	var t time.Time
	if s.amzDate != "" {
		t, err = time.Parse(amzDateForm, s.amzDate)
	} else if d := r.Header.Get("Date"); d != "" {
		dateHeader = "date"
		t, err = http.ParseTime(d)
		s.amzDate = t.UTC().Format(amzDateForm)
	} else {
		return nil, errIncompleteSig("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header")
	}
	if err != nil {
		return nil, errIncompleteSig("the request's date %q is not an ISO 8601 basic date-time (yyyymmddThhmmssZ)", clip(s.amzDate))
	}
	need := []string{"host", dateHeader}
	if jsonProtocol {
		need = append(need, "x-amz-target")
	}
	for _, h := range need {
		if !signs(s.signedHeaders, h) {
			return nil, errIncompleteSig("'%s' must be a 'SignedHeader' in the AWS Authorization", h)
		}
	}
	if t.Before(now.Add(-MaxClockSkew)) {
		return nil, errSignatureMismatch("Signature expired: %s is now earlier than %s (%s - 5 min.)",
			s.amzDate, now.UTC().Add(-MaxClockSkew).Format(amzDateForm), now.UTC().Format(amzDateForm))
	}
	if t.After(now.Add(MaxClockSkew)) {
		return nil, errSignatureMismatch("Signature not yet current: %s is still later than %s (%s + 5 min.)",
			s.amzDate, now.UTC().Add(MaxClockSkew).Format(amzDateForm), now.UTC().Format(amzDateForm))
	}
	if s.date != s.amzDate[:8] {
		return nil, errSignatureMismatch("Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: %q != %q",
			clip(s.date), s.amzDate[:8])
	}
	return &s, nil
}

// checkBody checks the body received (after the size cap) against the
// SHA-256 the request declares (X-Amz-Content-Sha256, when sent).
func (s *signature) checkBody(r *http.Request, body []byte) *Error {
	if declared := r.Header.Get("X-Amz-Content-Sha256"); declared != "" {
		sum := sha256.Sum256(body)
		if declared != hex.EncodeToString(sum[:]) {
			return errSignatureMismatch("The provided 'x-amz-content-sha256' header does not match what was computed")
		}
	}
	return nil
}

func signs(signed []string, h string) bool {
	i := sort.SearchStrings(signed, h)
	return i < len(signed) && signed[i] == h
}

// verify checks the signature against the secret.
func (s *signature) verify(r *http.Request, body []byte, secret string) *Error {
	want := s.compute(r, body, secret)
	if subtle.ConstantTimeCompare(want, s.sig) != 1 {
		return errSignatureMismatch("The request signature we calculated does not match the signature you provided. " +
			"Check your AWS Secret Access Key and signing method.")
	}
	return nil
}

// compute is the signature of r by secret with s's scope, date and
// signed headers.
func (s *signature) compute(r *http.Request, body []byte, secret string) []byte {
	sum := sha256.Sum256([]byte(s.canonicalRequest(r, body)))
	toSign := sigAlgorithm + "\n" + s.amzDate + "\n" + s.date + "/" + s.region + "/" + serviceName + "/" + scopeEnd + "\n" +
		hex.EncodeToString(sum[:])
	k := hmacSHA256([]byte("AWS4"+secret), s.date)
	k = hmacSHA256(k, s.region)
	k = hmacSHA256(k, serviceName)
	k = hmacSHA256(k, scopeEnd)
	return hmacSHA256(k, toSign)
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// canonicalRequest is SigV4's canonical form of r.
func (s *signature) canonicalRequest(r *http.Request, body []byte) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	path := r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	// Services other than S3 sign the path URI-encoded twice: the path
	// as sent (already encoded) is encoded once more.
	b.WriteString(uriEncode(path, false))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(r.URL.RawQuery))
	b.WriteByte('\n')
	for _, h := range s.signedHeaders {
		b.WriteString(h)
		b.WriteByte(':')
		b.WriteString(headerValue(r, h))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(s.signedHeaders, ";"))
	b.WriteByte('\n')
	sum := sha256.Sum256(body)
	b.WriteString(hex.EncodeToString(sum[:]))
	return b.String()
}

// headerValue is a signed header's canonical value: its values trimmed,
// inner runs of spaces made one, joined by commas.
func headerValue(r *http.Request, h string) string {
	var vals []string
	switch h {
	case "host":
		vals = []string{r.Host}
	case "content-length":
		if vals = r.Header.Values("Content-Length"); len(vals) == 0 {
			vals = []string{strconv.FormatInt(r.ContentLength, 10)}
		}
	default:
		vals = r.Header.Values(h)
	}
	for i, v := range vals {
		vals[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(vals, ",")
}

// canonicalQuery is the query string's parameters, each name and value
// URI-encoded, sorted by name and then value.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	var pairs []string
	for _, kv := range strings.Split(raw, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		k, _ = url.QueryUnescape(k)
		v, _ = url.QueryUnescape(v)
		pairs = append(pairs, uriEncode(k, true)+"="+uriEncode(v, true))
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "&")
}

// uriEncode is SigV4's URI encoding: every byte but A-Z a-z 0-9 - . _ ~
// (and / unless slash) as %XX with upper-case hex digits.
func uriEncode(s string, slash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' ||
			c == '/' && !slash {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// DeriveSecret is the SigV4 secret access key of a tagq API key: an HMAC,
// under the endpoint's signing key (master), of the key's id and the hash
// tagq keeps of its secret. tagq never stores an API key's secret, only
// its hash, so the verifier derives SigV4 secrets from what it holds; the
// master key (LoadSigningKey) keeps that derivation out of reach of
// whoever reads only the hashes. The result is 43 characters of
// base64url.
func DeriveSecret(master []byte, keyID string, keyHash []byte) string {
	m := hmac.New(sha256.New, master)
	m.Write([]byte("tagq sqs sigv4 secret v1\x00"))
	m.Write([]byte(keyID))
	m.Write([]byte{0})
	m.Write(keyHash)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
