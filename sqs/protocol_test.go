package sqs

import (
	"bytes"
	"math/rand/v2"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// The query protocol's flattened lists and maps, as botocore writes them.
func TestParseQuery_Flattened(t *testing.T) {
	t.Parallel()
	form, err := url.ParseQuery("Action=SendMessageBatch&Version=2012-11-05&QueueUrl=http%3A%2F%2Fh%2F000000000000%2Fq" +
		"&SendMessageBatchRequestEntry.2.Id=b&SendMessageBatchRequestEntry.2.MessageBody=two" +
		"&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=one" +
		"&SendMessageBatchRequestEntry.1.DelaySeconds=5" +
		"&SendMessageBatchRequestEntry.1.MessageAttribute.1.Name=n&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType=Number" +
		"&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue=42" +
		"&SendMessageBatchRequestEntry.1.MessageAttribute.2.Name=b&SendMessageBatchRequestEntry.1.MessageAttribute.2.Value.DataType=Binary" +
		"&SendMessageBatchRequestEntry.1.MessageAttribute.2.Value.BinaryValue=AAEC" +
		"&SendMessageBatchRequestEntry.2.MessageGroupId=g&SendMessageBatchRequestEntry.2.MessageDeduplicationId=d")
	require.NoError(t, err)
	action, r, err := parseQuery(form)
	require.NoError(t, err)
	require.Equal(t, "SendMessageBatch", action)
	require.Equal(t, "http://h/000000000000/q", r.QueueURL)
	require.Len(t, r.Entries, 2)
	a, b := r.Entries[0], r.Entries[1]
	require.Equal(t, "a", a.ID, "in index order")
	require.Equal(t, "one", *a.MessageBody)
	require.EqualValues(t, 5, *a.DelaySeconds)
	require.Equal(t, attrValue{DataType: "Number", StringValue: str("42"), StringListValues: nil}, a.MessageAttributes["n"])
	require.Equal(t, []byte{0, 1, 2}, a.MessageAttributes["b"].BinaryValue)
	require.Equal(t, "g", *b.MessageGroupID)
	require.Equal(t, "d", *b.MessageDeduplicationID)

	form, _ = url.ParseQuery("Action=CreateQueue&QueueName=q&Attribute.1.Name=DelaySeconds&Attribute.1.Value=3&Tag.1.Key=team&Tag.1.Value=x")
	_, r, err = parseQuery(form)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"DelaySeconds": "3"}, r.Attributes)
	require.Equal(t, map[string]string{"team": "x"}, r.CreateTags)

	form, _ = url.ParseQuery("Action=ReceiveMessage&AttributeName.1=All&MessageAttributeName.2=b&MessageAttributeName.1=a&MaxNumberOfMessages=10")
	_, r, err = parseQuery(form)
	require.NoError(t, err)
	require.Equal(t, []string{"All"}, r.AttributeNames)
	require.Equal(t, []string{"a", "b"}, r.MessageAttributeNames)
	require.EqualValues(t, 10, *r.MaxNumberOfMessages)
}

func TestParseQuery_Refusals(t *testing.T) {
	t.Parallel()
	for q, code := range map[string]string{
		"QueueUrl=x": "MissingAction",
		"Action=ReceiveMessage&MaxNumberOfMessages=ten":                                        "InvalidParameterValue",
		"Action=ReceiveMessage&AttributeName.x=All":                                            "InvalidParameterValue",
		"Action=ReceiveMessage&AttributeName.0=All":                                            "InvalidParameterValue",
		"Action=SendMessage&MessageAttribute.1.Name=b&MessageAttribute.1.Value.BinaryValue=!!": "InvalidParameterValue",
	} {
		form, err := url.ParseQuery(q)
		require.NoError(t, err)
		_, _, err = parseQuery(form)
		require.Error(t, err, q)
		require.Equal(t, code, fromStatus(err).Code, q)
	}
}

// A parameter name of many dots (2 MiB of them) is refused before a tree
// level is built for each: with InvalidParameterValue naming it (clipped),
// at a cost of the form itself; so are names over 256 bytes or 8 parts,
// and forms of more than 5,000 parameters, counted before they are parsed.
func TestParseQuery_NamesAndCountsBounded(t *testing.T) {
	dots := strings.Repeat(".", 2<<20)
	form := url.Values{"Action": {"ListQueues"}, dots: {"x"}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := parseQuery(form)
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	e := fromStatus(err)
	require.Equal(t, "InvalidParameterValue", e.Code)
	require.Contains(t, e.Message, "parameter names are at most 256 bytes")
	require.Less(t, len(e.Message), 1000, "the name is clipped")
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "nothing built from the name")

	for _, name := range []string{strings.Repeat("a", 257), "A.1.B.1.C.1.D.1.E"} {
		_, _, err := parseQuery(url.Values{"Action": {"ListQueues"}, name: {"x"}})
		require.Equal(t, "InvalidParameterValue", fromStatus(err).Code, name)
	}
	deepest := url.Values{"Action": {"SendMessageBatch"},
		"SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringListValue.1": {"x"}}
	_, _, err = parseQuery(deepest)
	require.NoError(t, err, "SQS's longest names are taken")

	r := httptest.NewRequest("POST", "/", nil)
	_, err = queryForm(r, []byte("Action=ListQueues"+strings.Repeat("&a", maxQueryParams)))
	require.Equal(t, "InvalidParameterValue", fromStatus(err).Code)
	require.Contains(t, fromStatus(err).Message, "at most 5000 parameters")
}

// A JSON request's lists and maps are bounded before it is decoded: 8 MiB
// of empty Entries (1.2 GB once decoded) is TooManyEntriesInBatchRequest
// at no cost; any other list or map over 100 items is
// InvalidParameterValue naming it. Ten entries, and 100 items, are taken.
func TestParseJSON_ListsBounded(t *testing.T) {
	body := []byte(`{"QueueUrl":"q","Entries":[` + strings.Repeat(`{},`, 4<<20) + `{}]}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := parseJSON(body)
	runtime.ReadMemStats(&after)
	require.Equal(t, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", fromStatus(err).Code)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20))

	items := func(n int, item string) string { return strings.TrimSuffix(strings.Repeat(item+",", n), ",") }
	keys := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"k` + strconv.Itoa(i) + `":{}`)
		}
		return b.String()
	}
	for doc, param := range map[string]string{
		`{"AttributeNames":[` + items(101, `"All"`) + `]}`:                            "AttributeNames",
		`{"Entries":[{},{"MessageAttributes":{` + keys(101) + `}}]}`:                  "Entries[1].MessageAttributes",
		`{"MessageAttributes":{"a":{"StringListValues":[` + items(101, `""`) + `]}}}`: "MessageAttributes",
		`{"entries":[` + items(101, `{}`) + `]}`:                                      "the request", // matched case-insensitively by encoding/json
	} {
		_, err := parseJSON([]byte(doc))
		e := fromStatus(err)
		require.Equal(t, "InvalidParameterValue", e.Code, doc[:40])
		require.Contains(t, e.Message, "parameter "+param+" ", doc[:40])
	}
	r, err := parseJSON([]byte(`{"Entries":[` + items(10, `{"Id":"a"}`) + `],"AttributeNames":[` + items(100, `"All"`) + `]}`))
	require.NoError(t, err)
	require.Len(t, r.Entries, 10)
	require.Len(t, r.AttributeNames, 100)
}

func TestParseJSON(t *testing.T) {
	t.Parallel()
	r, err := parseJSON([]byte(`{"QueueName":"q","tags":{"a":"1"},"Attributes":{"DelaySeconds":"1"},` +
		`"Entries":[{"Id":"1","MessageBody":"x","MessageAttributes":{"b":{"DataType":"Binary","BinaryValue":"AAE="}}}]}`))
	require.NoError(t, err)
	require.Equal(t, "q", r.QueueName)
	require.Equal(t, map[string]string{"a": "1"}, r.CreateTags)
	require.Nil(t, r.Tags)
	require.Equal(t, []byte{0, 1}, r.Entries[0].MessageAttributes["b"].BinaryValue)

	r, err = parseJSON(nil)
	require.NoError(t, err)
	require.Equal(t, &request{}, r)

	for _, bad := range []string{`{"MaxNumberOfMessages":"10"}`, `{"MaxNumberOfMessages":1e12}`, `[1]`, `{"QueueUrl":`, `{} {}`} {
		_, err := parseJSON([]byte(bad))
		require.Error(t, err, bad)
		require.Equal(t, "SerializationException", fromStatus(err).Code, bad)
	}

	// As encoding/json reads it: names case folded (an exact match first),
	// the last of duplicates, invalid UTF-8 as U+FFFD, unknown members
	// ignored; a value of the wrong type names its member.
	r, err = parseJSON([]byte(`{"queueurl":"a","QUEUEURL":"b","Tags":{"t":"1"},"tags":{"c":"2"},"Unknown":[1]}`))
	require.NoError(t, err)
	require.Equal(t, "b", r.QueueURL)
	require.Equal(t, map[string]string{"t": "1"}, r.Tags)
	require.Equal(t, map[string]string{"c": "2"}, r.CreateTags)
	r, err = parseJSON([]byte("{\"QueueName\":\"x\xffy\"}"))
	require.NoError(t, err)
	require.Equal(t, "x\uFFFDy", r.QueueName)
	_, err = parseJSON([]byte(`{"Entries":[{"Id":"1","DelaySeconds":1.5}]}`))
	require.ErrorContains(t, err, "the value of Entries.0.DelaySeconds is not of the member's type (int32 expected, got a JSON number 1.5)")
	_, err = parseJSON([]byte(`{"MessageAttributes":{"a/b":{"DataType":"Binary","BinaryValue":"!!"}}}`))
	require.ErrorContains(t, err, "the value of MessageAttributes.a/b.BinaryValue is not of the member's type (base64 bytes expected, got a JSON string)")
	_, err = parseJSON([]byte(`{"Entries":{}}`))
	require.ErrorContains(t, err, "the value of Entries is not of the member's type (array expected, got a JSON object)")
}

// validText's eight-bytes-at-a-time path agrees with the rune-by-rune
// rule: every byte value at every offset of a word, in printable text,
// and random bytes.
func TestValidText_AsRuneByRune(t *testing.T) {
	t.Parallel()
	ref := func(s string) bool {
		for i, r := range s {
			if r == utf8.RuneError {
				if _, n := utf8.DecodeRuneInString(s[i:]); n <= 1 {
					return false
				}
			}
			if !allowedRune(r) {
				return false
			}
		}
		return true
	}
	base := strings.Repeat("printable ASCII~", 3)
	for pos := range 24 {
		for c := range 256 {
			s := base[:pos] + string([]byte{byte(c)}) + base[pos+1:]
			require.Equal(t, ref(s), validText(s), "byte %#x at %d", c, pos)
		}
		for _, r := range []string{"é", "😀", "\uFFFE", "\uFFFD", "\u007f", "\t", "\r\n"} {
			s := base[:pos] + r + base[pos:]
			require.Equal(t, ref(s), validText(s), "%q at %d", r, pos)
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, rnd.IntN(40))
		for i := range b {
			b[i] = byte(0x20 + rnd.IntN(0x60))
			if rnd.IntN(8) == 0 {
				b[i] = byte(rnd.IntN(256))
			}
		}
		require.Equal(t, ref(string(b)), validText(string(b)), "%q", b)
	}
}

// Message bodies SQS cannot carry are refused on send, and delivered with
// what SQS cannot carry replaced (with their MD5 of what is delivered).
func TestBodies(t *testing.T) {
	t.Parallel()
	require.True(t, validText("tab\tnewline\n é 😀"))
	for _, bad := range []string{"\x00", "a\x1fb", "\xff", "\uFFFE"} {
		require.False(t, validText(bad), "%q", bad)
		require.True(t, validText(deliverable(bad)), "%q", bad)
	}
	require.Equal(t, "a\uFFFDb", deliverable("a\x00b"))
	require.Equal(t, "plain", deliverable("plain"))
	require.NotNil(t, checkBody("MessageBody", str("")))
	require.Equal(t, "InvalidMessageContents", checkBody("MessageBody", str("\x01")).Code)
	require.Nil(t, checkBody("MessageBody", str(string(bytes.Repeat([]byte("é"), 10)))))
}

// Message attributes keep their data types through tagq and back.
func TestAttributes_RoundTrip(t *testing.T) {
	t.Parallel()
	in := map[string]attrValue{
		"s":   {DataType: "String", StringValue: str("x")},
		"n":   {DataType: "Number", StringValue: str("-1.5e3")},
		"c":   {DataType: "String.custom", StringValue: str("y")},
		"b":   {DataType: "Binary", BinaryValue: []byte{0, 1}},
		"b.x": {DataType: "Binary.png", BinaryValue: []byte{2}},
	}
	tq, e := toTagqAttributes("", in, map[string]attrValue{"AWSTraceHeader": {DataType: "String", StringValue: str("Root=1")}})
	require.Nil(t, e)
	require.Len(t, tq, 7, "five, their types and the trace header")
	out, trace := toSQSAttributes(tq)
	require.Equal(t, in, out)
	require.Equal(t, "Root=1", trace)
	require.Equal(t, md5OfAttributes(in), md5OfAttributes(out))

	require.Equal(t, map[string]attrValue{"b.x": in["b.x"]}, selectAttributes(out, []string{"b.*"}))
	require.Equal(t, out, selectAttributes(out, []string{".*"}))
	require.Nil(t, selectAttributes(out, nil), "none unless asked")

	for name, a := range map[string]attrValue{
		"AWS.x":   {DataType: "String", StringValue: str("v")},
		"a..b":    {DataType: "String", StringValue: str("v")},
		"ok":      {DataType: "Strin", StringValue: str("v")},
		"num":     {DataType: "Number", StringValue: str("1x")},
		"empty":   {DataType: "String", StringValue: str("")},
		"bin":     {DataType: "Binary", StringValue: str("v")},
		"lists":   {DataType: "String", StringValue: str("v"), StringListValues: []string{"a"}},
		"notype":  {StringValue: str("v")},
		"badtext": {DataType: "String", StringValue: str("\x00")},
	} {
		_, e := toTagqAttributes("", map[string]attrValue{name: a}, nil)
		require.NotNil(t, e, name)
	}
	many := map[string]attrValue{}
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"} {
		many[n] = attrValue{DataType: "String", StringValue: str("v")}
	}
	_, e = toTagqAttributes("", many, nil)
	require.NotNil(t, e, "at most 10")
}

func TestNames(t *testing.T) {
	t.Parallel()
	h := &Handler{account: DefaultAccountID}
	for name, want := range map[string]target{
		"orders":              {queue: "orders"},
		"orders.fifo":         {queue: "orders", fifo: true},
		"orders~billing":      {queue: "orders", tag: "billing"},
		"orders~billing.fifo": {queue: "orders", tag: "billing", fifo: true},
	} {
		got, err := parseName("QueueName", name)
		require.NoError(t, err)
		require.Equal(t, want, got)
		require.Equal(t, name, got.sqsName())
		u, err := h.parseURL("QueueUrl", h.queueURL("http://h:1", got))
		require.NoError(t, err)
		require.Equal(t, want, u)
		a, err := h.parseARN("Arn", h.arn("us-east-1", got))
		require.NoError(t, err)
		require.Equal(t, want, a)
	}
	for _, bad := range []string{"", "a.b", "a~", "~b", "a~b~c", "a b", "x.fifo.fifo"} {
		_, err := parseName("QueueName", bad)
		require.Error(t, err, bad)
	}
	_, err := h.parseURL("QueueUrl", "http://h/111111111111/q")
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", fromStatus(err).Code, "another account's queue")
	_, err = h.parseURL("QueueUrl", "q")
	require.Equal(t, "InvalidAddress", fromStatus(err).Code)
	require.Equal(t, "17958278612130000000003", sequenceNumber("1795827861213-3"))
	require.Less(t, sequenceNumber("1795827861213-3"), sequenceNumber("1795827861213-10"))
}
