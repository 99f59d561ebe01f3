"""Writes SQS's query-protocol service model as Debian's aws CLI (2.9)
ships it, with the message move task actions it predates
(StartMessageMoveTask, ListMessageMoveTasks, CancelMessageMoveTask; their
shapes as SQS's current model has them, in the query protocol's form), for
`aws configure add-model`. The CLI's own protocol code does the rest.

Usage: add_move_tasks.py <model out.json>
"""
import json
import sys

SRC = "/usr/lib/python3/dist-packages/awscli/botocore/data/sqs/2012-11-05/service-2.json"

model = json.load(open(SRC))
shapes, ops = model["shapes"], model["operations"]
if "StartMessageMoveTask" not in ops:
    def op(name, out):
        ops[name] = {"name": name, "http": {"method": "POST", "requestUri": "/"},
                     "input": {"shape": name + "Request"},
                     "output": {"shape": name + "Result", "resultWrapper": name + "Result"},
                     "errors": [{"shape": "ResourceNotFoundException"}]}
    op("StartMessageMoveTask", True)
    op("ListMessageMoveTasks", True)
    op("CancelMessageMoveTask", True)
    s = {"shape": "String"}
    shapes.update({
        "Long": {"type": "long"},
        "NullableInteger": {"type": "integer"},
        "NullableLong": {"type": "long"},
        "ResourceNotFoundException": {"type": "structure", "members": {},
                                      "error": {"code": "ResourceNotFoundException", "httpStatusCode": 404, "senderFault": True},
                                      "exception": True},
        "StartMessageMoveTaskRequest": {"type": "structure", "required": ["SourceArn"], "members": {
            "SourceArn": s, "DestinationArn": s, "MaxNumberOfMessagesPerSecond": {"shape": "NullableInteger"}}},
        "StartMessageMoveTaskResult": {"type": "structure", "members": {"TaskHandle": s}},
        "ListMessageMoveTasksRequest": {"type": "structure", "required": ["SourceArn"], "members": {
            "SourceArn": s, "MaxResults": {"shape": "NullableInteger"}}},
        "ListMessageMoveTasksResult": {"type": "structure", "members": {
            "Results": {"shape": "ListMessageMoveTasksResultEntryList", "locationName": "ListMessageMoveTasksResultEntry"}}},
        "ListMessageMoveTasksResultEntryList": {"type": "list", "member": {
            "shape": "ListMessageMoveTasksResultEntry", "locationName": "ListMessageMoveTasksResultEntry"}, "flattened": True},
        "ListMessageMoveTasksResultEntry": {"type": "structure", "members": {
            "TaskHandle": s, "Status": s, "SourceArn": s, "DestinationArn": s,
            "MaxNumberOfMessagesPerSecond": {"shape": "NullableInteger"},
            "ApproximateNumberOfMessagesMoved": {"shape": "Long"},
            "ApproximateNumberOfMessagesToMove": {"shape": "NullableLong"},
            "FailureReason": s, "StartedTimestamp": {"shape": "Long"}}},
        "CancelMessageMoveTaskRequest": {"type": "structure", "required": ["TaskHandle"], "members": {"TaskHandle": s}},
        "CancelMessageMoveTaskResult": {"type": "structure", "members": {
            "ApproximateNumberOfMessagesMoved": {"shape": "Long"}}},
    })
json.dump(model, open(sys.argv[1], "w"))
