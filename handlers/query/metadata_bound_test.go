package query_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"corral/models"
)

// TestDraftsRefuseAnAggregatePastTheMetadataBound: a draft whose change
// gives an aggregate more than models.MaxAggregateMetadataKeys keys is a
// 400 naming the change's field, whether the keys come with the new
// aggregate or one set_metadata at a time.
func TestDraftsRefuseAnAggregatePastTheMetadataBound(t *testing.T) {
	c := newClient(t)
	md := map[string]string{}
	for i := range models.MaxAggregateMetadataKeys {
		md[fmt.Sprintf("k%d", i)] = "v"
	}
	create := map[string]any{"op": "create_aggregate", "aggregate": "wide", "metadata": md}
	draft := func(changes ...any) string {
		b, _ := json.Marshal(map[string]any{"name": "wide", "changes": changes})
		return string(b)
	}
	var d apiDraft
	if st := c.api("POST", "/api/drafts", draft(create), &d); st != http.StatusCreated {
		t.Fatalf("at the bound: %d", st)
	}
	var e apiError
	st := c.api("POST", "/api/drafts", draft(create, map[string]any{"op": "set_metadata", "aggregate": "wide", "key": "one-more", "value": "v"}), &e)
	if st != http.StatusBadRequest || e.Error.Field != "changes[1].key" || !strings.Contains(e.Error.Message, "at most 1000") {
		t.Errorf("one set_metadata past the bound: %d %+v", st, e)
	}
	md["one-more"] = "v"
	e = apiError{}
	st = c.api("POST", "/api/drafts", draft(create), &e)
	if st != http.StatusBadRequest || e.Error.Field != "changes[0].metadata" {
		t.Errorf("a new aggregate past the bound: %d %+v", st, e)
	}
}
