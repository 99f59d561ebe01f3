package redisstore

// HandleTarget returns the queue and tag a receipt handle names, when it
// is a handle this store signed (ok false otherwise). The server's access
// checks use it: a handle carries no authority of its own (S18), so its
// holder needs a permission on that queue and tag.
func (s *Store) HandleTarget(raw string) (queue, tag string, ok bool) {
	h, err := s.handles.Decode(raw)
	if err != nil {
		return "", "", false
	}
	return queueOf(h.Queue), h.Tag, true // a partition's handle: its queue's
}
