package cloud

import (
	"context"

	"github.com/gophercloud/gophercloud/v2"

	"corral/models"
)

// asCaller is sc as the person the request acts for, when ctx carries a
// person's token (models.WithPersonIn): the same endpoint, microversion
// and transport, with that token instead of corral's own identity and
// without re-authenticating as corral when it is refused. Without such a
// token (sync, people signed in with corral's own users) it is sc.
func asCaller(ctx context.Context, sc *gophercloud.ServiceClient) *gophercloud.ServiceClient {
	tok := models.PersonToken(ctx)
	if tok == "" {
		return sc
	}
	pc := &gophercloud.ProviderClient{HTTPClient: sc.ProviderClient.HTTPClient, UserAgent: sc.ProviderClient.UserAgent}
	pc.SetToken(tok)
	as := *sc
	as.ProviderClient = pc
	return &as
}

// redactedError is err with credentials taken out of its message; errors.As
// and errors.Is still see err.
type redactedError struct{ err error }

func (e *redactedError) Error() string { return RedactText(e.err.Error()) }
func (e *redactedError) Unwrap() error { return e.err }

func redactError(err error) error {
	if err == nil {
		return nil
	}
	return &redactedError{err}
}
