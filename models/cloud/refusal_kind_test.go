package cloud

import (
	"net/http"
	"strings"
	"testing"

	"corral/models"
)

// A call the cloud refused answers at the doors with the cloud's status
// (its kind), whether nothing or something was done before it; a cloud
// that did not answer is Unavailable.
func TestRefusalKeepsTheCloudsStatus(t *testing.T) {
	failed := &Step{Kind: "group_create"}
	for _, tc := range []struct {
		status int
		kind   models.Kind
	}{
		{http.StatusBadRequest, models.Invalid},
		{http.StatusForbidden, models.Forbidden},
		{http.StatusNotFound, models.NotFound},
		{http.StatusConflict, models.Conflict},
		{http.StatusInternalServerError, models.Unavailable},
		{0, models.Unavailable},
	} {
		for _, done := range [][]Step{nil, {{Kind: "create"}}} {
			err := partialFailure(&RolloutReport{Failed: failed, Error: "nova said no", FailedStatus: tc.status, Done: done})
			if models.KindOf(err) != tc.kind || !strings.Contains(err.Error(), "nova said no") {
				t.Errorf("status %d, %d call(s) done: %v (kind %v), want kind %v", tc.status, len(done), err, models.KindOf(err), tc.kind)
			}
		}
	}
}
