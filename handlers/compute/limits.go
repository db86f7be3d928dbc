package compute

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"corral/models/store"
)

// absoluteLimit is one entry of "absolute" in GET /limits: a limit
// (Resource's quota) or a usage (Used set), in the order Nova prints them.
type absoluteLimit struct {
	Name     string
	Resource string
	Used     bool
	// Hidden reports whether microversion v leaves the entry out.
	Hidden func(v Version) bool
}

func since(major, minor int) func(Version) bool {
	return func(v Version) bool { return v.AtLeast(major, minor) }
}

// Nova's views/limits.py names; 2.36 drops the network proxies, 2.39
// maxImageMeta, 2.57 the personality limits.
var absoluteLimits = []absoluteLimit{
	{Name: "maxTotalInstances", Resource: "instances"},
	{Name: "maxTotalCores", Resource: "cores"},
	{Name: "maxTotalRAMSize", Resource: "ram"},
	{Name: "maxServerMeta", Resource: "metadata_items"},
	{Name: "maxImageMeta", Resource: "metadata_items", Hidden: since(2, 39)},
	{Name: "maxPersonality", Resource: "injected_files", Hidden: since(2, 57)},
	{Name: "maxPersonalitySize", Resource: "injected_file_content_bytes", Hidden: since(2, 57)},
	{Name: "maxTotalKeypairs", Resource: "key_pairs"},
	{Name: "maxServerGroups", Resource: "server_groups"},
	{Name: "maxServerGroupMembers", Resource: "server_group_members"},
	{Name: "maxTotalFloatingIps", Resource: "floating_ips", Hidden: since(2, 36)},
	{Name: "maxSecurityGroups", Resource: "security_groups", Hidden: since(2, 36)},
	{Name: "maxSecurityGroupRules", Resource: "security_group_rules", Hidden: since(2, 36)},
	{Name: "totalRAMUsed", Resource: "ram", Used: true},
	{Name: "totalCoresUsed", Resource: "cores", Used: true},
	{Name: "totalInstancesUsed", Resource: "instances", Used: true},
	{Name: "totalFloatingIpsUsed", Resource: "floating_ips", Used: true, Hidden: since(2, 36)},
	{Name: "totalSecurityGroupsUsed", Resource: "security_groups", Used: true, Hidden: since(2, 36)},
	{Name: "totalServerGroupsUsed", Resource: "server_groups", Used: true},
}

// FormatLimits renders the body of GET /limits for microversion v.
func FormatLimits(v Version, u store.ProjectUsage) doc {
	abs := doc{}
	for _, l := range absoluteLimits {
		if l.Hidden != nil && l.Hidden(v) {
			continue
		}
		n := QuotaLimit(u, l.Resource)
		if l.Used {
			n = QuotaInUse(u, l.Resource)
		}
		abs = append(abs, kv{l.Name, n})
	}
	// corral has no rate limits; Nova has had none since Newton either.
	return doc{{"limits", doc{{"rate", []any{}}, {"absolute", abs}}}}
}

// limitsOtherProjectPolicy guards tenant_id (nova/policies/limits.py);
// os_compute_api:limits itself allows any caller.
const limitsOtherProjectPolicy = "os_compute_api:limits:other_project"

// LimitsAllowed: anyone may read their own project's limits; naming a
// project with tenant_id (even one's own) needs the admin role.
func LimitsAllowed(c Caller, tenantGiven bool) bool {
	return !tenantGiven || c.IsAdmin()
}

// GET /limits[?tenant_id=P]
func (api *API) showLimits(c echo.Context) error {
	v, who := version(c), caller(c)
	q := c.QueryParams()
	if f := validateQuery(limitsQuerySchema(v), q); f != nil {
		return f
	}
	project := who.ProjectID
	vals, tenantGiven := q["tenant_id"]
	if !LimitsAllowed(who, tenantGiven) {
		return faultf(http.StatusForbidden, "Policy doesn't allow "+limitsOtherProjectPolicy+" to be performed.")
	}
	if tenantGiven {
		project = vals[len(vals)-1] // the last value wins, as in webob
	}
	u, err := api.projectUsage(c.Request().Context(), project)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, FormatLimits(v, u))
}
