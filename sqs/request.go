package sqs

// request is any action's input, as either protocol carries it: the
// members of SQS's request shapes by their names in the JSON protocol
// (the query protocol's flattened names are read into the same fields,
// protocol_query.go). An action reads the members it has and ignores the
// rest, as SQS does.
type request struct {
	QueueURL               string `json:"QueueUrl"`
	QueueName              string `json:"QueueName"`
	QueueNamePrefix        string `json:"QueueNamePrefix"`
	QueueOwnerAWSAccountID string `json:"QueueOwnerAWSAccountId"`
	NextToken              string `json:"NextToken"`
	MaxResults             *int32 `json:"MaxResults"`

	Attributes     map[string]string `json:"Attributes"`
	AttributeNames []string          `json:"AttributeNames"`
	// CreateTags are CreateQueue's tags (lowercase in SQS's model); Tags
	// are TagQueue's. Both are SQS's queue tags: labels.
	CreateTags map[string]string `json:"tags"`
	Tags       map[string]string `json:"Tags"`
	TagKeys    []string          `json:"TagKeys"`

	message
	MessageSystemAttributeNames []string `json:"MessageSystemAttributeNames"`
	MessageAttributeNames       []string `json:"MessageAttributeNames"`
	MaxNumberOfMessages         *int32   `json:"MaxNumberOfMessages"`
	VisibilityTimeout           *int32   `json:"VisibilityTimeout"`
	WaitTimeSeconds             *int32   `json:"WaitTimeSeconds"`
	ReceiveRequestAttemptID     *string  `json:"ReceiveRequestAttemptId"`
	ReceiptHandle               *string  `json:"ReceiptHandle"`

	Entries []entry `json:"Entries"`

	SourceArn                    string `json:"SourceArn"`
	DestinationArn               string `json:"DestinationArn"`
	MaxNumberOfMessagesPerSecond *int32 `json:"MaxNumberOfMessagesPerSecond"`
	TaskHandle                   string `json:"TaskHandle"`
}

// message is what SendMessage and each SendMessageBatch entry send.
type message struct {
	MessageBody             *string              `json:"MessageBody"`
	DelaySeconds            *int32               `json:"DelaySeconds"`
	MessageAttributes       map[string]attrValue `json:"MessageAttributes"`
	MessageSystemAttributes map[string]attrValue `json:"MessageSystemAttributes"`
	MessageDeduplicationID  *string              `json:"MessageDeduplicationId"`
	MessageGroupID          *string              `json:"MessageGroupId"`
}

// entry is a batch entry of SendMessageBatch, DeleteMessageBatch or
// ChangeMessageVisibilityBatch.
type entry struct {
	ID string `json:"Id"`
	message
	ReceiptHandle     *string `json:"ReceiptHandle"`
	VisibilityTimeout *int32  `json:"VisibilityTimeout"`
}

// attrValue is a message attribute (MessageAttributeValue).
type attrValue struct {
	DataType         string   `json:"DataType"`
	StringValue      *string  `json:"StringValue,omitempty"`
	BinaryValue      []byte   `json:"BinaryValue,omitempty"`
	StringListValues []string `json:"StringListValues,omitempty"`
	BinaryListValues [][]byte `json:"BinaryListValues,omitempty"`
}
