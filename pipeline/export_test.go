package pipeline

// CheckRetained exposes checkRetained to the package's external tests.
var CheckRetained = checkRetained

// DeliveryRetry exposes deliveryRetry to the package's external tests.
var DeliveryRetry = deliveryRetry

// Fits reports whether item can be sent in a batch at all: whether its
// size is within MaxRecordBytes and MaxBatchBytes, as Add checks.
func (b *Batch[T]) Fits(item T) bool {
	n := b.size(item)
	return within(n, b.limits.MaxRecordBytes) && within(n, b.limits.MaxBatchBytes)
}

// Len returns the number of items in the batch.
func (b *Batch[T]) Len() int { return len(b.items) }

// Bytes returns the sum of the sizes of the items in the batch.
func (b *Batch[T]) Bytes() int { return b.bytes }

// held returns the slots the account holds, for tests.
func (s *fairShares) held(account string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight[account]
}
