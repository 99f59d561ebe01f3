package sqs

// actions are the SQS actions by name. Those tagq has no counterpart of
// answer UnsupportedOperation, never a silent success.
var actions map[string]func(*Handler, *call, *request) (any, error)

func init() {
	actions = map[string]func(*Handler, *call, *request) (any, error){
		"CreateQueue":                  (*Handler).createQueue,
		"DeleteQueue":                  (*Handler).deleteQueue,
		"GetQueueUrl":                  (*Handler).getQueueURL,
		"ListQueues":                   (*Handler).listQueues,
		"GetQueueAttributes":           (*Handler).getQueueAttributes,
		"SetQueueAttributes":           (*Handler).setQueueAttributes,
		"PurgeQueue":                   (*Handler).purgeQueue,
		"TagQueue":                     (*Handler).tagQueue,
		"UntagQueue":                   (*Handler).untagQueue,
		"ListQueueTags":                (*Handler).listQueueTags,
		"ListDeadLetterSourceQueues":   (*Handler).listDeadLetterSourceQueues,
		"SendMessage":                  (*Handler).sendMessage,
		"SendMessageBatch":             (*Handler).sendMessageBatch,
		"ReceiveMessage":               (*Handler).receiveMessage,
		"DeleteMessage":                (*Handler).deleteMessage,
		"DeleteMessageBatch":           (*Handler).deleteMessageBatch,
		"ChangeMessageVisibility":      (*Handler).changeMessageVisibility,
		"ChangeMessageVisibilityBatch": (*Handler).changeMessageVisibilityBatch,
		"StartMessageMoveTask":         (*Handler).startMessageMoveTask,
		"ListMessageMoveTasks":         (*Handler).listMessageMoveTasks,
		"CancelMessageMoveTask":        (*Handler).cancelMessageMoveTask,
		"AddPermission": unsupported("AddPermission is not supported: tagq's own permissions apply " +
			"(tagq access permissions set <principal> <queue> <level>)"),
		"RemovePermission": unsupported("RemovePermission is not supported: tagq's own permissions apply " +
			"(tagq access permissions revoke <principal> <queue>)"),
	}
}
