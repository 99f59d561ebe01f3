package tags

// Redrive policy rules (S7-S8): the dead-letter queue must exist and be
// flagged dead_letter_queue; a dead-letter queue cannot have a policy (so
// dead letters are never redriven again and no cycle can form); a queue
// cannot be its own dead-letter queue; the dead-letter queue keeps messages
// at least as long as its sources (dead letters are never trimmed sooner
// than the messages they came from); a topic queue's dead-letter queue is
// a topic queue, and only topic queues use one (dead letters keep their
// topic, and their order when moved back: S13); a dead-letter queue
// cannot be deleted while a policy names it, unless forced, which removes
// those policies. CheckQueueConfig and CheckQueueUpdate check a policy's
// shape; the rest needs the dead-letter queue, the storage's to check.

// checkPolicyShape checks policy p (nil: none) given as field.
func checkPolicyShape(field string, p *RedrivePolicy) *Error {
	if p == nil {
		return nil
	}
	if e := CheckName(field+".dead_letter_queue", "queue", p.DeadLetterQueue); e != nil {
		return e
	}
	mrc := p.MaxReceiveCount
	return CheckRange(field+".max_receive_count", &mrc, 1, MaxMaxReceiveCount)
}
