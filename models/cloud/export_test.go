package cloud

// ReadTraitsInBulkFrom makes a read of n providers or more take their
// traits trait by trait; the returned func restores the threshold.
func ReadTraitsInBulkFrom(n int) func() {
	old := bulkTraitsFrom
	bulkTraitsFrom = n
	return func() { bulkTraitsFrom = old }
}
