package forms

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"corral/models"
	"corral/models/scheduling"
)

// Policies are the server-group policies the create form offers.
var Policies = []string{models.PolicyAntiAffinity, models.PolicyAffinity, models.PolicySoftAntiAffinity, models.PolicySoftAffinity}

// GroupCreate reads the new-server-group form: name, policy, the
// anti-affinity rule and, for an admin, the owning project (others create
// groups for their own).
func GroupCreate(form url.Values, who Who) Read {
	name := strings.TrimSpace(form.Get("name"))
	policy := form.Get("policy")
	maxPerHost := strings.TrimSpace(form.Get("max_server_per_host"))
	project := who.Project
	if who.Admin {
		project = strings.TrimSpace(form.Get("project"))
	}
	r := Read{Title: "New server group " + name}
	if name == "" {
		r.refuse("name", "A server group needs a name.")
	} else if len(name) > 255 {
		r.refuse("name", "Use at most 255 characters.")
	}
	if !slices.Contains(Policies, policy) {
		r.refuse("policy", "Choose one of the four policies.")
	}
	var rules map[string]int
	if maxPerHost != "" {
		n, err := strconv.Atoi(maxPerHost)
		if err != nil {
			n = 0
		}
		rules = map[string]int{models.RuleMaxServerPerHost: n}
		if e := models.CheckGroupRules(policy, rules); e != nil {
			if policy != models.PolicyAntiAffinity {
				r.refuse("max_server_per_host", "Only anti-affinity policy supports rules; leave this empty for "+policy+".")
			} else {
				r.refuse("max_server_per_host", "A whole number of at least 1.")
			}
		}
	}
	if project == "" {
		if who.Admin {
			r.refuse("project", "Name the project that owns the group.")
		} else {
			r.refuse("", "You belong to no project, so you cannot own a server group.")
		}
	}
	// A fresh UUID names the group, so that its name may repeat in the
	// project, as Nova allows.
	r.add(scheduling.Change{Op: scheduling.OpCreateServerGroup, ServerGroup: name, Project: project, Policy: policy, User: who.User, Rules: rules,
		UUID: models.NewUUID()})
	return r
}

// groupServer finds a server by uuid, or by name within project, as the
// group page names them.
func groupServer(w *models.World, ref, project string) (*models.Server, string) {
	if _, err := uuid.Parse(ref); err == nil {
		for i := range w.Servers {
			if w.Servers[i].UUID == ref {
				return &w.Servers[i], ""
			}
		}
	}
	var hits []*models.Server
	for i := range w.Servers {
		if s := &w.Servers[i]; s.Name == ref && s.ProjectID == project {
			hits = append(hits, s)
		}
	}
	switch len(hits) {
	case 0:
		return nil, fmt.Sprintf("No server %q in project %s", ref, project)
	case 1:
		return hits[0], ""
	}
	return nil, fmt.Sprintf("%d servers are named %q; use the uuid", len(hits), ref)
}

// GroupMembersAdd reads the group page's add box: servers of the group's
// project by name or uuid, added in one step or not at all.
func GroupMembersAdd(form url.Values, g *models.ServerGroup, w *models.World) Read {
	r := Read{Title: "Members of server group " + g.Name}
	refs := SplitList(form.Get("servers"))
	if len(refs) == 0 {
		r.refuse("", "Name at least one server.")
		return r
	}
	for _, ref := range refs {
		s, msg := groupServer(w, ref, g.ProjectID)
		switch {
		case msg != "":
			msg += ". Nothing was added."
		case s.ProjectID != g.ProjectID:
			msg = fmt.Sprintf("Server %s belongs to project %s, not %s. Nothing was added.", s.Name, s.ProjectID, g.ProjectID)
		case slices.Contains(g.Members, s.UUID) || slices.ContainsFunc(r.Changes, func(c scheduling.Change) bool { return c.Server == s.UUID }):
			msg = fmt.Sprintf("Server %s is already a member. Nothing was added.", s.Name)
		}
		if msg != "" {
			r.refuse("", msg)
			r.Changes = nil
			return r
		}
		r.add(scheduling.Change{Op: scheduling.OpAddGroupMember, ServerGroup: g.UUID, Server: s.UUID})
	}
	return r.stamped(form)
}

// GroupMembersRemove reads the ticked members of g to remove; ticked
// servers that are no longer members are Skipped.
func GroupMembersRemove(form url.Values, g *models.ServerGroup) Read {
	r := Read{Title: "Members of server group " + g.Name}
	sel := Dedupe(form["server"])
	if len(sel) == 0 {
		r.refuse("", "Nothing removed: tick the servers to remove.")
		return r
	}
	for _, u := range sel {
		if slices.Contains(g.Members, u) {
			r.add(scheduling.Change{Op: scheduling.OpRemoveGroupMember, ServerGroup: g.UUID, Server: u})
		} else {
			r.Skipped = append(r.Skipped, u)
		}
	}
	return r.stamped(form)
}

// GroupDelete reads the delete confirmation of g; its servers stay.
func GroupDelete(g *models.ServerGroup) Read {
	return Read{Title: "Delete server group " + g.Name,
		Changes: []scheduling.Change{{Op: scheduling.OpDeleteServerGroup, ServerGroup: g.UUID}}}
}
