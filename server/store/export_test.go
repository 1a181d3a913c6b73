package store

// TripCounter is tripCounter, for the package's external tests.
type TripCounter = tripCounter

// FlowState is what s knows of the flow control of a task queue's work
// ("w": turns, "a": attempts): whether a fetch would send the plain
// statement now (plain: known, no flow-controlled work, no rate limit),
// and whether it knows of a rate limit.
func FlowState(s *Store, ns, queue, work string) (plain, limited bool) {
	k := flowKey{ns: ns, queue: queue, work: work}
	plain = s.flow.plain(k)
	s.flow.mu.Lock()
	defer s.flow.mu.Unlock()
	if st := s.flow.m[k]; st != nil {
		limited = st.limited
	}
	return plain, limited
}
