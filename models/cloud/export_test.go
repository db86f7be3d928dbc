package cloud

import "context"

// ReadTraitsInBulkFrom makes a read of n providers or more take their
// traits trait by trait; the returned func restores the threshold.
func ReadTraitsInBulkFrom(n int) func() {
	old := bulkTraitsFrom
	bulkTraitsFrom = n
	return func() { bulkTraitsFrom = old }
}

// SendForTest is the request layer's write call, for tests of whose
// token it sends.
func (c *Client) SendForTest(ctx context.Context, service, method, path string, body, out any, ok ...int) error {
	sc := c.Placement
	if service == "compute" {
		sc = c.Compute
	}
	return c.send(ctx, sc, method, path, body, out, ok...)
}
