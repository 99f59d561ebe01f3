#!/usr/bin/env bash
# Debian's aws CLI (2.9, the query protocol) against tagq's SQS endpoint at
# TAGQ_SQS_ENDPOINT, signing with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY:
# create, send, receive, delete, attributes, purge, a tag's URL, a dead-letter
# queue and a message move task. The CLI predates SQS's move tasks; its
# model gains them with `aws configure add-model` (add_move_tasks.py).
# AWS_CLI names the aws to run (default /usr/bin/aws).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
aws=${AWS_CLI:-/usr/bin/aws}
: "${TAGQ_SQS_ENDPOINT:?TAGQ_SQS_ENDPOINT is required}"
HOME=$(mktemp -d)
export HOME AWS_DEFAULT_REGION=us-east-1 AWS_PAGER=""
trap 'rm -rf "$HOME"' EXIT
/usr/bin/python3 "$here/add_move_tasks.py" "$HOME/sqs-model.json"
"$aws" configure add-model --service-model "file://$HOME/sqs-model.json" --service-name sqs

sqs() { "$aws" --endpoint-url "$TAGQ_SQS_ENDPOINT" sqs "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { # expect <want> <got> <what>
  [ "$1" = "$2" ] || fail "$3: want '$1', got '$2'"
}
run=cli$$
md5() { printf '%s' "$1" | md5sum | cut -d' ' -f1; }

q=$(sqs create-queue --queue-name "$run-orders" --attributes VisibilityTimeout=40 --query QueueUrl --output text)
expect "$TAGQ_SQS_ENDPOINT/000000000000/$run-orders" "$q" "queue URL"
t=$(sqs create-queue --queue-name "$run-orders~billing" --query QueueUrl --output text)
expect "$t" "$(sqs get-queue-url --queue-name "$run-orders~billing" --query QueueUrl --output text)" "tag URL"

out=$(sqs send-message --queue-url "$q" --message-body "hello ✓" --query '[MessageId,MD5OfMessageBody]' --output text)
expect "$(md5 "hello ✓")" "$(cut -f2 <<<"$out")" "MD5OfMessageBody"
sqs send-message-batch --queue-url "$q" --entries 'Id=a,MessageBody=two' 'Id=b,MessageBody=three' >/dev/null

# Each tag receives all three; the other's handles do not work on it.
for url in "$q" "$t"; do
  n=0; handles=()
  while [ "$n" -lt 3 ]; do
    got=$(sqs receive-message --queue-url "$url" --max-number-of-messages 10 --wait-time-seconds 2 \
      --query 'Messages[].[ReceiptHandle,MD5OfBody,Body]' --output text)
    [ -n "$got" ] || fail "received $n of 3 on $url"
    while IFS=$'\t' read -r h sum body; do
      expect "$(md5 "$body")" "$sum" "MD5OfBody of $body"
      handles+=("$h"); n=$((n + 1))
    done <<<"$got"
  done
  expect 3 "$n" "messages on $url"
  sqs delete-message --queue-url "$url" --receipt-handle "${handles[0]}"
  expect 2 "$(sqs delete-message-batch --queue-url "$url" \
    --entries "Id=b,ReceiptHandle=${handles[1]}" "Id=c,ReceiptHandle=${handles[2]}" --query 'length(Successful)' --output text)" "deleted"
done
expect 0 "$(sqs get-queue-attributes --queue-url "$t" --attribute-names ApproximateNumberOfMessagesNotVisible \
  --query 'Attributes.ApproximateNumberOfMessagesNotVisible' --output text)" "billing done"

sqs set-queue-attributes --queue-url "$q" --attributes DelaySeconds=0,ReceiveMessageWaitTimeSeconds=1
expect 1 "$(sqs get-queue-attributes --queue-url "$q" --attribute-names All --query 'Attributes.ReceiveMessageWaitTimeSeconds' --output text)" "set attribute"
sqs send-message --queue-url "$q" --message-body purged >/dev/null
sqs purge-queue --queue-url "$q"
expect 0 "$(sqs get-queue-attributes --queue-url "$q" --attribute-names ApproximateNumberOfMessages \
  --query 'Attributes.ApproximateNumberOfMessages' --output text)" "purged"
if sqs receive-message --queue-url "$q" --max-number-of-messages 11 2>/dev/null; then fail "11 messages asked for"; fi

# A dead-letter queue, a message that dies there, and a move back.
dlq=$(sqs create-queue --queue-name "$run-dlq" --attributes '{"RedriveAllowPolicy":"{\"redrivePermission\":\"allowAll\"}"}' \
  --query QueueUrl --output text)
arn=$(sqs get-queue-attributes --queue-url "$dlq" --attribute-names QueueArn --query Attributes.QueueArn --output text)
src=$(sqs create-queue --queue-name "$run-src" \
  --attributes "{\"RedrivePolicy\":\"{\\\"deadLetterTargetArn\\\":\\\"$arn\\\",\\\"maxReceiveCount\\\":\\\"1\\\"}\"}" --query QueueUrl --output text)
expect "$src" "$(sqs list-dead-letter-source-queues --queue-url "$dlq" --query 'queueUrls[0]' --output text)" "source queues"
sqs send-message --queue-url "$src" --message-body poison >/dev/null
h=$(sqs receive-message --queue-url "$src" --wait-time-seconds 5 --query 'Messages[0].ReceiptHandle' --output text)
sqs change-message-visibility --queue-url "$src" --receipt-handle "$h" --visibility-timeout 0
dead=$(sqs receive-message --queue-url "$dlq" --wait-time-seconds 20 --attribute-names All \
  --query 'Messages[0].[ReceiptHandle,Attributes.DeadLetterQueueSourceArn]' --output text)
expect "${arn%:*}:$run-src~default" "$(cut -f2 <<<"$dead")" "dead letter's source"
sqs change-message-visibility --queue-url "$dlq" --receipt-handle "$(cut -f1 <<<"$dead")" --visibility-timeout 0
task=$(sqs start-message-move-task --source-arn "$arn" --max-number-of-messages-per-second 50 --query TaskHandle --output text)
[ -n "$task" ] || fail "no task handle"
back=$(sqs receive-message --queue-url "$src" --wait-time-seconds 20 --query 'Messages[0].Body' --output text)
expect poison "$back" "moved back"
status=""
for _ in $(seq 100); do
  status=$(sqs list-message-move-tasks --source-arn "$arn" --query 'Results[0].Status' --output text)
  [ "$status" = COMPLETED ] && break
  sleep 0.2
done
expect COMPLETED "$status" "move task"

sqs delete-queue --queue-url "$q"
if sqs get-queue-url --queue-name "$run-orders" 2>/dev/null; then fail "deleted queue still found"; fi
echo "aws CLI: all checks passed"
