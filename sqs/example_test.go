package sqs_test

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	tagqsqs "github.com/tagq/tagq/sqs"
)

// The README's aws-sdk-go-v2 snippet (TestReadmeGoSnippet keeps the two
// the same), against an endpoint in front of a whole tagq server.
func Example_awsSDKGoV2() {
	endpoint, stop := tagqsqs.SQSEndpoint()
	defer stop()
	ctx := context.Background()
	if err := exampleSnippet(ctx, endpoint); err != nil {
		fmt.Println(err)
	}
	// Output: refund 3
}

func exampleSnippet(ctx context.Context, endpoint string) error {
	c := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("any", "any", "")})
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("refunds")})
	if err != nil {
		return err
	}
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("refund 3")}); err != nil {
		return err
	}
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, WaitTimeSeconds: 5})
	if err != nil {
		return err
	}
	for _, m := range out.Messages {
		fmt.Println(aws.ToString(m.Body))
		_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: m.ReceiptHandle})
	}
	return err
}
