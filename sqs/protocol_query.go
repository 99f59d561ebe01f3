package sqs

import (
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// The query protocol (older SDKs, Debian's aws CLI and boto3): a form of
// Action=<name>&Version=2012-11-05&<parameters>, in a POST body or a GET's
// query string, to / or to the queue's URL; lists and maps flattened
// (AttributeName.1, Attribute.1.Name / Attribute.1.Value,
// MessageAttribute.1.Value.StringValue, SendMessageBatchRequestEntry.1.Id).
// Answers are XML in SQS's namespace; errors an ErrorResponse.

// xmlNS is SQS's XML namespace.
const xmlNS = "http://queue.amazonaws.com/doc/2012-11-05/"

// qnode is a form parameter's path split at its dots: Attribute.1.Name is
// root → "Attribute" → "1" → "Name". Parameter names never hold a dot of
// their own (map keys and attribute names travel in values).
type qnode struct {
	val  string
	set  bool
	kids map[string]*qnode
}

func (n *qnode) child(k string) *qnode {
	if n == nil {
		return nil
	}
	return n.kids[k]
}

// Bounds on a form, checked before anything is built from it: the
// parameters of one request (a batch of 10 entries with 10 attributes each
// has about 500), and each parameter's name, in bytes and in dot-separated
// parts (SQS's longest,
// SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringListValue.1,
// has 7 parts and 70 bytes). A name of many dots would otherwise build a
// tree level for each.
const (
	maxQueryParams    = 5000
	maxParamNameBytes = 256
	maxParamNameParts = 8
)

// tooManyParams refuses a form of more than maxQueryParams parameters.
func tooManyParams() *Error {
	return errInvalidParameter("a request takes at most %d parameters", maxQueryParams)
}

// checkParamName refuses a parameter name over maxParamNameBytes or of
// more than maxParamNameParts parts.
func checkParamName(k string) *Error {
	if len(k) > maxParamNameBytes || strings.Count(k, ".") >= maxParamNameParts {
		return invalidValue(clip(k), "", fmt.Sprintf("parameter names are at most %d bytes of at most %d parts separated by dots",
			maxParamNameBytes, maxParamNameParts))
	}
	return nil
}

// parseQuery reads a query-protocol form into its action and request.
func parseQuery(form url.Values) (string, *request, error) {
	action := form.Get("Action")
	n := 0
	for k, vs := range form {
		if n += len(vs); n > maxQueryParams {
			return action, nil, tooManyParams()
		}
		if e := checkParamName(k); e != nil {
			return action, nil, e
		}
	}
	root := &qnode{}
	for k, vs := range form {
		cur := root
		for _, seg := range strings.Split(k, ".") {
			if cur.kids == nil {
				cur.kids = map[string]*qnode{}
			}
			next := cur.kids[seg]
			if next == nil {
				next = &qnode{}
				cur.kids[seg] = next
			}
			cur = next
		}
		cur.val, cur.set = vs[0], true
	}
	if action == "" {
		return "", nil, errMissingAction("the request must contain the parameter Action")
	}
	q := &qreader{}
	r := &request{
		QueueURL:               q.str(root, "QueueUrl"),
		QueueName:              q.str(root, "QueueName"),
		QueueNamePrefix:        q.str(root, "QueueNamePrefix"),
		QueueOwnerAWSAccountID: q.str(root, "QueueOwnerAWSAccountId"),
		NextToken:              q.str(root, "NextToken"),
		MaxResults:             q.int(root, "MaxResults"),
		Attributes:             q.strMap(root, "Attribute", "Name", "Value"),
		AttributeNames:         q.list(root, "AttributeName"),
		CreateTags:             q.strMap(root, "Tag", "Key", "Value"),
		TagKeys:                q.list(root, "TagKey"),
		message:                q.message(root, ""),

		MessageSystemAttributeNames: q.list(root, "MessageSystemAttributeName"),
		MessageAttributeNames:       q.list(root, "MessageAttributeName"),
		MaxNumberOfMessages:         q.int(root, "MaxNumberOfMessages"),
		VisibilityTimeout:           q.int(root, "VisibilityTimeout"),
		WaitTimeSeconds:             q.int(root, "WaitTimeSeconds"),
		ReceiveRequestAttemptID:     q.ptr(root, "ReceiveRequestAttemptId"),
		ReceiptHandle:               q.ptr(root, "ReceiptHandle"),

		SourceArn:                    q.str(root, "SourceArn"),
		DestinationArn:               q.str(root, "DestinationArn"),
		MaxNumberOfMessagesPerSecond: q.int(root, "MaxNumberOfMessagesPerSecond"),
		TaskHandle:                   q.str(root, "TaskHandle"),
	}
	// TagQueue's tags are Tags.N.Key/Value in SQS's query model,
	// CreateQueue's Tag.N.Key/Value; either is taken for either.
	if r.Tags = q.strMap(root, "Tags", "Key", "Value"); r.Tags == nil {
		r.Tags = r.CreateTags
	} else if r.CreateTags == nil {
		r.CreateTags = r.Tags
	}
	for _, prefix := range []string{"SendMessageBatchRequestEntry", "DeleteMessageBatchRequestEntry",
		"ChangeMessageVisibilityBatchRequestEntry"} {
		for _, e := range q.items(root.child(prefix), prefix) {
			r.Entries = append(r.Entries, entry{
				ID:                q.str(e.n, "Id"),
				message:           q.message(e.n, e.param+"."),
				ReceiptHandle:     q.ptr(e.n, "ReceiptHandle"),
				VisibilityTimeout: q.intAt(e.n, "VisibilityTimeout", e.param+".VisibilityTimeout"),
			})
		}
	}
	if q.err != nil {
		return action, nil, q.err
	}
	return action, r, nil
}

// qreader reads a form tree, keeping its first error.
type qreader struct{ err error }

func (q *qreader) str(n *qnode, k string) string {
	if c := n.child(k); c != nil {
		return c.val
	}
	return ""
}

func (q *qreader) ptr(n *qnode, k string) *string {
	if c := n.child(k); c != nil && c.set {
		v := c.val
		return &v
	}
	return nil
}

func (q *qreader) int(n *qnode, k string) *int32 { return q.intAt(n, k, k) }

func (q *qreader) intAt(n *qnode, k, param string) *int32 {
	c := n.child(k)
	if c == nil || !c.set {
		return nil
	}
	v, err := strconv.ParseInt(c.val, 10, 32)
	if err != nil {
		q.fail(invalidValue(param, clip(c.val), "must be an integer"))
		return nil
	}
	i := int32(v)
	return &i
}

func (q *qreader) fail(e *Error) {
	if q.err == nil {
		q.err = e
	}
}

// item is one element of a flattened list: its node and its parameter
// name (for errors).
type item struct {
	n     *qnode
	param string
}

// items are a flattened list's elements in index order (Name.1, Name.2,
// ...; indices must be positive integers).
func (q *qreader) items(n *qnode, param string) []item {
	if n == nil {
		return nil
	}
	idx := make([]int, 0, len(n.kids))
	byIdx := map[int]*qnode{}
	for k, c := range n.kids {
		i, err := strconv.Atoi(k)
		if err != nil || i < 1 {
			q.fail(invalidValue(param+"."+clip(k), "", "list parameters are numbered from 1"))
			return nil
		}
		idx = append(idx, i)
		byIdx[i] = c
	}
	sort.Ints(idx)
	out := make([]item, len(idx))
	for j, i := range idx {
		out[j] = item{n: byIdx[i], param: param + "." + strconv.Itoa(i)}
	}
	return out
}

func (q *qreader) list(n *qnode, k string) []string {
	var out []string
	for _, it := range q.items(n.child(k), k) {
		out = append(out, it.n.val)
	}
	return out
}

// strMap reads a flattened map of strings (Attribute.N.Name/Value,
// Tag.N.Key/Value).
func (q *qreader) strMap(n *qnode, k, key, value string) map[string]string {
	its := q.items(n.child(k), k)
	if len(its) == 0 {
		return nil
	}
	out := make(map[string]string, len(its))
	for _, it := range its {
		out[q.str(it.n, key)] = q.str(it.n, value)
	}
	return out
}

// message reads a message's members (SendMessage's, or a batch entry's
// under prefix).
func (q *qreader) message(n *qnode, prefix string) message {
	return message{
		MessageBody:             q.ptr(n, "MessageBody"),
		DelaySeconds:            q.intAt(n, "DelaySeconds", prefix+"DelaySeconds"),
		MessageAttributes:       q.attrMap(n, "MessageAttribute", prefix+"MessageAttribute"),
		MessageSystemAttributes: q.attrMap(n, "MessageSystemAttribute", prefix+"MessageSystemAttribute"),
		MessageDeduplicationID:  q.ptr(n, "MessageDeduplicationId"),
		MessageGroupID:          q.ptr(n, "MessageGroupId"),
	}
}

// attrMap reads MessageAttribute.N.Name and .Value.{DataType,
// StringValue, BinaryValue, StringListValue.M, BinaryListValue.M}.
func (q *qreader) attrMap(n *qnode, k, param string) map[string]attrValue {
	its := q.items(n.child(k), param)
	if len(its) == 0 {
		return nil
	}
	out := make(map[string]attrValue, len(its))
	for _, it := range its {
		v := it.n.child("Value")
		a := attrValue{DataType: q.str(v, "DataType"), StringValue: q.ptr(v, "StringValue")}
		if b := v.child("BinaryValue"); b != nil && b.set {
			a.BinaryValue = q.base64(b.val, it.param+".Value.BinaryValue")
		}
		a.StringListValues = q.list(v, "StringListValue")
		for _, s := range q.list(v, "BinaryListValue") {
			a.BinaryListValues = append(a.BinaryListValues, q.base64(s, it.param+".Value.BinaryListValue"))
		}
		out[q.str(it.n, "Name")] = a
	}
	return out
}

func (q *qreader) base64(s, param string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		q.fail(invalidValue(param, "", "binary values are base64"))
		return []byte{}
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

// writeQueryResult writes a successful answer: <ActionResponse> with
// <ActionResult> (when the action has a result) and the request id.
func writeQueryResult(w io.Writer, action, reqID string, result any) error {
	enc := xml.NewEncoder(w)
	resp := xml.StartElement{Name: xml.Name{Local: action + "Response"}, Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns"}, Value: xmlNS}}}
	if err := enc.EncodeToken(resp); err != nil {
		return err
	}
	if result != nil {
		if err := enc.EncodeElement(result, xml.StartElement{Name: xml.Name{Local: action + "Result"}}); err != nil {
			return err
		}
	}
	if err := enc.EncodeElement(responseMetadata{RequestID: reqID}, xml.StartElement{Name: xml.Name{Local: "ResponseMetadata"}}); err != nil {
		return err
	}
	if err := enc.EncodeToken(resp.End()); err != nil {
		return err
	}
	return enc.Flush()
}

type responseMetadata struct {
	RequestID string `xml:"RequestId"`
}

// queryError is the query protocol's ErrorResponse.
type queryError struct {
	XMLName   xml.Name `xml:"ErrorResponse"`
	NS        string   `xml:"xmlns,attr"`
	Type      string   `xml:"Error>Type"`
	Code      string   `xml:"Error>Code"`
	Message   string   `xml:"Error>Message"`
	Detail    string   `xml:"Error>Detail"`
	RequestID string   `xml:"RequestId"`
}

func writeQueryError(w io.Writer, e *Error, reqID string) error {
	return xml.NewEncoder(w).Encode(queryError{NS: xmlNS, Type: e.fault(), Code: e.Code, Message: e.Message, RequestID: reqID})
}
