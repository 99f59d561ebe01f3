"""boto3 (Debian's python3-boto3: botocore 1.29, the query protocol)
against tagq's SQS endpoint at TAGQ_SQS_ENDPOINT, signing with
AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (any, with authentication off; a
tagq key's SigV4 credentials with it).

botocore does not check SQS's checksums itself, so this test does: the MD5
of each body, and MD5OfMessageAttributes by SQS's documented algorithm.
"""
import hashlib
import os
import struct
import unittest

import boto3
import botocore

ENDPOINT = os.environ["TAGQ_SQS_ENDPOINT"]
RUN = "py%d" % os.getpid()


def md5_of_attributes(attrs):
    """SQS's MD5OfMessageAttributes: names in order, each as length-prefixed
    name and type, a transport byte (1 string/number, 2 binary) and the
    length-prefixed value."""
    h = hashlib.md5()

    def put(b):
        h.update(struct.pack(">I", len(b)))
        h.update(b)

    for name in sorted(attrs):
        a = attrs[name]
        put(name.encode())
        put(a["DataType"].encode())
        if a["DataType"].startswith("Binary"):
            h.update(b"\x02")
            put(a["BinaryValue"])
        else:
            h.update(b"\x01")
            put(a["StringValue"].encode())
    return h.hexdigest()


class Boto3(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sqs = boto3.client("sqs", endpoint_url=ENDPOINT, region_name="us-east-1",
                               config=botocore.config.Config(retries={"max_attempts": 1}))

    def receive_all(self, url, n, **kw):
        got = []
        while len(got) < n:
            r = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2, **kw)
            self.assertTrue(r.get("Messages"), "received %d of %d" % (len(got), n))
            for m in r["Messages"]:
                self.assertEqual(m["MD5OfBody"], hashlib.md5(m["Body"].encode()).hexdigest())
                if "MessageAttributes" in m:
                    self.assertEqual(m["MD5OfMessageAttributes"], md5_of_attributes(m["MessageAttributes"]))
            got.extend(r["Messages"])
        return got

    def test_tags_as_queue_urls(self):
        q = self.sqs.create_queue(QueueName=RUN + "-orders", Attributes={"VisibilityTimeout": "40"},
                                  tags={"team": "shop"})["QueueUrl"]
        self.assertEqual(q, ENDPOINT + "/000000000000/" + RUN + "-orders")
        billing = self.sqs.create_queue(QueueName=RUN + "-orders~billing")["QueueUrl"]
        self.assertEqual(self.sqs.get_queue_url(QueueName=RUN + "-orders~billing")["QueueUrl"], billing)
        self.assertEqual(self.sqs.list_queue_tags(QueueUrl=q)["Tags"], {"team": "shop"})
        self.sqs.tag_queue(QueueUrl=q, Tags={"env": "test"})
        self.sqs.untag_queue(QueueUrl=q, TagKeys=["team"])
        self.assertEqual(self.sqs.list_queue_tags(QueueUrl=q)["Tags"], {"env": "test"})

        attrs = {"kind": {"DataType": "String", "StringValue": "päid"},
                 "cents": {"DataType": "Number", "StringValue": "1250"},
                 "sig": {"DataType": "Binary.sha", "BinaryValue": b"\x00\x01\xff"}}
        r = self.sqs.send_message(QueueUrl=billing, MessageBody="first ✓", MessageAttributes=attrs)
        self.assertEqual(r["MD5OfMessageBody"], hashlib.md5("first ✓".encode()).hexdigest())
        self.assertEqual(r["MD5OfMessageAttributes"], md5_of_attributes(attrs))
        r = self.sqs.send_message_batch(QueueUrl=q, Entries=[
            {"Id": "a", "MessageBody": "second", "DelaySeconds": 0},
            {"Id": "b", "MessageBody": "third", "MessageAttributes": {"n": {"DataType": "Number", "StringValue": "7"}}},
            {"Id": "bad", "MessageBody": "x", "MessageAttributes": {"n": {"DataType": "Number", "StringValue": "seven"}}},
        ])
        self.assertEqual(sorted(s["Id"] for s in r["Successful"]), ["a", "b"])
        self.assertEqual([(f["Id"], f["Code"], f["SenderFault"]) for f in r["Failed"]],
                         [("bad", "InvalidParameterValue", True)])

        for url in (q, billing):
            got = self.receive_all(url, 3, MessageAttributeNames=["All"], AttributeNames=["All"])
            self.assertEqual(sorted(m["Body"] for m in got), ["first ✓", "second", "third"])
            self.assertEqual(len({m["MessageId"] for m in got}), 3, "each message once per tag")
            first = [m for m in got if m["Body"] == "first ✓"][0]
            self.assertEqual(first["MessageAttributes"]["sig"], {"DataType": "Binary.sha", "BinaryValue": b"\x00\x01\xff"})
            self.assertEqual(first["Attributes"]["ApproximateReceiveCount"], "1")
            self.sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"], VisibilityTimeout=0)
            again = self.receive_all(url, 1, AttributeNames=["ApproximateReceiveCount"])
            self.assertEqual(again[0]["Attributes"]["ApproximateReceiveCount"], "2")
            got[0] = again[0]
            r = self.sqs.delete_message_batch(QueueUrl=url, Entries=[
                {"Id": "m%d" % i, "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)])
            self.assertEqual(len(r["Successful"]), 3)

        a = self.sqs.get_queue_attributes(QueueUrl=billing, AttributeNames=["All"])["Attributes"]
        self.assertEqual(a["VisibilityTimeout"], "40")
        self.assertEqual(a["ApproximateNumberOfMessages"], "0")
        self.assertEqual(a["QueueArn"], "arn:aws:sqs:us-east-1:000000000000:" + RUN + "-orders~billing")
        self.sqs.delete_queue(QueueUrl=q)
        with self.assertRaises(self.sqs.exceptions.QueueDoesNotExist):
            self.sqs.get_queue_url(QueueName=RUN + "-orders")

    def test_errors(self):
        q = self.sqs.create_queue(QueueName=RUN + "-errs")["QueueUrl"]
        with self.assertRaises(botocore.exceptions.ClientError) as e:
            self.sqs.receive_message(QueueUrl=q, MaxNumberOfMessages=11)
        self.assertEqual(e.exception.response["Error"]["Code"], "InvalidParameterValue")
        with self.assertRaises(self.sqs.exceptions.BatchEntryIdsNotDistinct):
            self.sqs.delete_message_batch(QueueUrl=q, Entries=[{"Id": "a", "ReceiptHandle": "x"}, {"Id": "a", "ReceiptHandle": "y"}])
        with self.assertRaises(self.sqs.exceptions.ReceiptHandleIsInvalid):
            self.sqs.delete_message(QueueUrl=q, ReceiptHandle="not a handle")
        with self.assertRaises(botocore.exceptions.ClientError) as e:
            self.sqs.add_permission(QueueUrl=q, Label="l", AWSAccountIds=["1"], Actions=["SendMessage"])
        self.assertEqual(e.exception.response["Error"]["Code"], "AWS.SimpleQueueService.UnsupportedOperation")
        self.sqs.delete_queue(QueueUrl=q)


if __name__ == "__main__":
    unittest.main()
