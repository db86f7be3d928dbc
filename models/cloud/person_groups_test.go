package cloud

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"

	"corral/models"
)

// Acting for a person, a server group is created with their token: in
// their token's project (no token of corral's own is made for it), and a
// group of another project is refused before anything is sent, rather
// than landing in the wrong one.
func TestGroupClientsActAsThePerson(t *testing.T) {
	own := &gophercloud.ServiceClient{Endpoint: "http://nova.invalid/v2.1/"}
	c := &Client{Compute: own, scope: func(context.Context, string) (*gophercloud.ServiceClient, error) {
		t.Error("corral's own credentials were scoped for a person's group")
		return own, nil
	}}
	plan := &Plan{Steps: []Step{{Kind: "group_create", Aggregate: "web", Project: "p1"}}}
	scoped, err := c.groupClients(models.WithPersonIn(context.Background(), "tok", "p1"), plan)
	if err != nil || scoped["p1"] != own {
		t.Errorf("a person's group in their project: %v %v", scoped, err)
	}
	_, err = c.groupClients(models.WithPersonIn(context.Background(), "tok", "p2"), plan)
	if models.KindOf(err) != models.Invalid || !strings.Contains(fmt.Sprint(err), "switch to project p1") {
		t.Errorf("a person's group in another project: %v", err)
	}
}
