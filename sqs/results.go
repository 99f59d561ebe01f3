package sqs

import (
	"encoding/base64"
	"encoding/xml"
	"maps"
	"slices"
)

// Results: each action's answer, with the member names of SQS's model for
// JSON and the query protocol's element names for XML (flattened lists
// and maps: a repeated element per item).

type queueURLResult struct {
	QueueURL string `json:"QueueUrl" xml:"QueueUrl"`
}

type listQueuesResult struct {
	QueueURLs []string `json:"QueueUrls,omitempty" xml:"QueueUrl"`
	NextToken string   `json:"NextToken,omitempty" xml:"NextToken,omitempty"`
}

type sourceQueuesResult struct {
	QueueURLs []string `json:"queueUrls" xml:"QueueUrl"`
	NextToken string   `json:"NextToken,omitempty" xml:"NextToken,omitempty"`
}

type attributesResult struct {
	Attributes attrMap `json:"Attributes,omitempty" xml:"Attribute"`
}

type tagsResult struct {
	Tags tagMap `json:"Tags,omitempty" xml:"Tag"`
}

type sendResult struct {
	MD5OfMessageBody             string `json:"MD5OfMessageBody" xml:"MD5OfMessageBody"`
	MD5OfMessageAttributes       string `json:"MD5OfMessageAttributes,omitempty" xml:"MD5OfMessageAttributes,omitempty"`
	MD5OfMessageSystemAttributes string `json:"MD5OfMessageSystemAttributes,omitempty" xml:"MD5OfMessageSystemAttributes,omitempty"`
	MessageID                    string `json:"MessageId" xml:"MessageId"`
	SequenceNumber               string `json:"SequenceNumber,omitempty" xml:"SequenceNumber,omitempty"`
}

type sendEntryResult struct {
	ID string `json:"Id" xml:"Id"`
	sendResult
}

type sendBatchResult struct {
	Successful []sendEntryResult `json:"Successful" xml:"SendMessageBatchResultEntry"`
	Failed     []entryError      `json:"Failed" xml:"BatchResultErrorEntry"`
}

type idEntry struct {
	ID string `json:"Id" xml:"Id"`
}

type deleteBatchResult struct {
	Successful []idEntry    `json:"Successful" xml:"DeleteMessageBatchResultEntry"`
	Failed     []entryError `json:"Failed" xml:"BatchResultErrorEntry"`
}

type visibilityBatchResult struct {
	Successful []idEntry    `json:"Successful" xml:"ChangeMessageVisibilityBatchResultEntry"`
	Failed     []entryError `json:"Failed" xml:"BatchResultErrorEntry"`
}

type receiveResult struct {
	Messages []sqsMessage `json:"Messages,omitempty" xml:"Message"`
}

type sqsMessage struct {
	MessageID              string     `json:"MessageId" xml:"MessageId"`
	ReceiptHandle          string     `json:"ReceiptHandle" xml:"ReceiptHandle"`
	MD5OfBody              string     `json:"MD5OfBody" xml:"MD5OfBody"`
	Body                   string     `json:"Body" xml:"Body"`
	Attributes             attrMap    `json:"Attributes,omitempty" xml:"Attribute"`
	MD5OfMessageAttributes string     `json:"MD5OfMessageAttributes,omitempty" xml:"MD5OfMessageAttributes,omitempty"`
	MessageAttributes      msgAttrMap `json:"MessageAttributes,omitempty" xml:"MessageAttribute"`
}

type startMoveResult struct {
	TaskHandle string `json:"TaskHandle" xml:"TaskHandle"`
}

type cancelMoveResult struct {
	ApproximateNumberOfMessagesMoved int64 `json:"ApproximateNumberOfMessagesMoved" xml:"ApproximateNumberOfMessagesMoved"`
}

type listMovesResult struct {
	Results []moveEntry `json:"Results" xml:"ListMessageMoveTasksResultEntry"`
}

type moveEntry struct {
	TaskHandle                        string `json:"TaskHandle,omitempty" xml:"TaskHandle,omitempty"`
	Status                            string `json:"Status" xml:"Status"`
	SourceArn                         string `json:"SourceArn" xml:"SourceArn"`
	DestinationArn                    string `json:"DestinationArn,omitempty" xml:"DestinationArn,omitempty"`
	MaxNumberOfMessagesPerSecond      *int32 `json:"MaxNumberOfMessagesPerSecond,omitempty" xml:"MaxNumberOfMessagesPerSecond,omitempty"`
	ApproximateNumberOfMessagesMoved  int64  `json:"ApproximateNumberOfMessagesMoved" xml:"ApproximateNumberOfMessagesMoved"`
	ApproximateNumberOfMessagesToMove int64  `json:"ApproximateNumberOfMessagesToMove" xml:"ApproximateNumberOfMessagesToMove"`
	FailureReason                     string `json:"FailureReason,omitempty" xml:"FailureReason,omitempty"`
	StartedTimestamp                  int64  `json:"StartedTimestamp" xml:"StartedTimestamp"`
}

// attrMap is a map of strings (queue attributes, message system
// attributes): a JSON object, in XML one <Attribute><Name/><Value/> each.
type attrMap map[string]string

func (m attrMap) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	return encodePairs(e, start, "Name", "Value", m)
}

// tagMap is SQS's queue tags: a JSON object, in XML <Tag><Key/><Value/>.
type tagMap map[string]string

func (m tagMap) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	return encodePairs(e, start, "Key", "Value", m)
}

func encodePairs(e *xml.Encoder, start xml.StartElement, key, value string, m map[string]string) error {
	for _, k := range sortedKeys(m) {
		if err := e.EncodeToken(start); err != nil {
			return err
		}
		if err := e.EncodeElement(k, xml.StartElement{Name: xml.Name{Local: key}}); err != nil {
			return err
		}
		if err := e.EncodeElement(m[k], xml.StartElement{Name: xml.Name{Local: value}}); err != nil {
			return err
		}
		if err := e.EncodeToken(start.End()); err != nil {
			return err
		}
	}
	return nil
}

// msgAttrMap is a message's attributes: a JSON object of
// MessageAttributeValue, in XML <MessageAttribute><Name/><Value>
// <StringValue/> or <BinaryValue/> (base64) and <DataType/></Value>.
type msgAttrMap map[string]attrValue

func (m msgAttrMap) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	el := func(name, v string) error { return e.EncodeElement(v, xml.StartElement{Name: xml.Name{Local: name}}) }
	value := xml.StartElement{Name: xml.Name{Local: "Value"}}
	for _, k := range sortedKeys(m) {
		a := m[k]
		if err := e.EncodeToken(start); err != nil {
			return err
		}
		if err := el("Name", k); err != nil {
			return err
		}
		if err := e.EncodeToken(value); err != nil {
			return err
		}
		var err error
		if a.StringValue != nil {
			err = el("StringValue", *a.StringValue)
		} else {
			err = el("BinaryValue", base64.StdEncoding.EncodeToString(a.BinaryValue))
		}
		if err != nil {
			return err
		}
		if err := el("DataType", a.DataType); err != nil {
			return err
		}
		if err := e.EncodeToken(value.End()); err != nil {
			return err
		}
		if err := e.EncodeToken(start.End()); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
