package compute

import (
	"fmt"
	"net/http"

	"corral/models"
)

// Caller is who an API request acts for, taken from its token.
type Caller struct {
	UserID    string // reported as user_id on the groups it creates
	ProjectID string
	Role      models.Role
}

// IsAdmin is Nova's context.is_admin: the admin role, in any project.
func (c Caller) IsAdmin() bool { return c.Role == models.RoleAdmin }

// Server-group policy actions (nova/policies/server_groups.py).
const (
	sgCreate             = "create"
	sgDelete             = "delete"
	sgIndex              = "index"
	sgIndexAllProjects   = "index:all_projects"
	sgShow               = "show"
	serverGroupPolicyFmt = "os_compute_api:os-server-groups:%s"
	aggregatePolicyFmt   = "os_compute_api:os-aggregates:%s"
)

// ServerGroupAllowed applies Nova's default rules: create/delete need
// project_member_or_admin, index/show project_reader_or_admin, and
// index:all_projects context_is_admin. target is the project the action
// is about: the caller's own for create/index, the group's for show/delete.
func ServerGroupAllowed(action string, c Caller, target string) bool {
	if c.IsAdmin() {
		return true
	}
	switch action {
	case sgCreate, sgDelete:
		return c.Role.AtLeast(models.RoleMember) && c.ProjectID != "" && c.ProjectID == target
	case sgIndex, sgShow:
		return c.Role.AtLeast(models.RoleReader) && c.ProjectID != "" && c.ProjectID == target
	}
	return false
}

func serverGroupPolicy(action string, c Caller, target string) error {
	if ServerGroupAllowed(action, c, target) {
		return nil
	}
	return policyFault(serverGroupPolicyFmt, action)
}

// AggregateAllowed: every os-aggregates rule defaults to admin only.
func AggregateAllowed(c Caller) bool { return c.IsAdmin() }

func aggregatePolicy(action string, c Caller) error {
	if AggregateAllowed(c) {
		return nil
	}
	return policyFault(aggregatePolicyFmt, action)
}

func policyFault(format, action string) error {
	return faultf(http.StatusForbidden, fmt.Sprintf("Policy doesn't allow %s to be performed.", fmt.Sprintf(format, action)))
}
