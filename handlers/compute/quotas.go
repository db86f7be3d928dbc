package compute

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	"corral/models"
	"corral/models/pycompat"
	"corral/models/scheduling"
	"corral/models/store"
)

// QuotaResources are the resources Nova reports in a quota set, in the
// order it prints them (sorted by name).
var QuotaResources = []string{
	"cores", "fixed_ips", "floating_ips", "injected_file_content_bytes",
	"injected_file_path_bytes", "injected_files", "instances", "key_pairs",
	"metadata_items", "ram", "security_group_rules", "security_groups",
	models.QuotaServerGroupMembers, models.QuotaServerGroups,
}

// QuotaTracked reports whether corral enforces resource. The others are
// reported as unlimited so clients that read every key keep working.
func QuotaTracked(resource string) bool {
	return resource == models.QuotaServerGroups || resource == models.QuotaServerGroupMembers
}

// quotaHiddenAt: 2.36 dropped the nova-network proxies, 2.57 the
// personality (injected file) quotas.
func quotaHiddenAt(v Version, resource string) bool {
	switch resource {
	case "fixed_ips", "floating_ips", "security_group_rules", "security_groups":
		return v.AtLeast(2, 36)
	case "injected_files", "injected_file_content_bytes", "injected_file_path_bytes":
		return v.AtLeast(2, 57)
	}
	return false
}

// QuotaLimit is a project's effective limit for resource (-1 = unlimited).
func QuotaLimit(u store.ProjectUsage, resource string) int {
	if !QuotaTracked(resource) {
		return -1
	}
	n, _ := u.Limit(resource)
	return n
}

// QuotaDefault is the limit a project has before any is set.
func QuotaDefault(resource string) int {
	if !QuotaTracked(resource) {
		return -1
	}
	return models.DefaultQuota
}

// QuotaInUse is what the project uses of resource. server_group_members
// counts the project's largest group (that is what the quota limits);
// instances counts its servers, which corral knows although it does not
// limit them.
func QuotaInUse(u store.ProjectUsage, resource string) int {
	switch resource {
	case models.QuotaServerGroups, models.QuotaServerGroupMembers:
		return u.Used(resource)
	case "instances":
		return u.Servers
	}
	return 0
}

// FormatQuotaSet renders a quota set as microversion v shows it: "id"
// first when given, then each visible resource with value(resource).
func FormatQuotaSet(v Version, id string, value func(resource string) any) doc {
	d := doc{}
	if id != "" {
		d = append(d, kv{"id", id})
	}
	for _, r := range QuotaResources {
		if !quotaHiddenAt(v, r) {
			d = append(d, kv{r, value(r)})
		}
	}
	return d
}

// Quota-set policy actions (nova/policies/quota_sets.py).
const (
	qsShow          = "show"
	qsDetail        = "detail"
	qsDefaults      = "defaults"
	qsUpdate        = "update"
	qsDelete        = "delete"
	quotaSetsPolicy = "os_compute_api:os-quota-sets:%s"
)

// QuotaSetAllowed applies Nova's defaults: show and detail are
// project_reader_or_admin on the project asked about, defaults is open to
// any authenticated caller, update and delete are admin only.
func QuotaSetAllowed(action string, c Caller, project string) bool {
	if c.IsAdmin() {
		return true
	}
	switch action {
	case qsShow, qsDetail:
		return c.Role.AtLeast(models.RoleReader) && c.ProjectID != "" && c.ProjectID == project
	case qsDefaults:
		return true
	}
	return false
}

func quotaSetPolicy(action string, c Caller, project string) error {
	if QuotaSetAllowed(action, c, project) {
		return nil
	}
	return policyFault(quotaSetsPolicy, action)
}

// QuotaSetUpdate is a validated PUT /os-quota-sets/{id} body.
type QuotaSetUpdate struct {
	// Set holds the new limits of the tracked resources.
	Set map[string]int
	// Force allows limits below current usage.
	Force bool
	// Untracked is the first resource (in body order) given a limit
	// other than -1 that corral does not enforce; see Refusal.
	Untracked string
}

// Refusal is the 400 for a limit on a resource corral does not enforce:
// those are always unlimited, so only -1 (no change) is accepted for them.
// It is separate from parsing because Nova checks the policy in between.
func (u QuotaSetUpdate) Refusal() error {
	if u.Untracked == "" {
		return nil
	}
	return faultf(http.StatusBadRequest, fmt.Sprintf(
		"Quota %s cannot be set: corral enforces only %s and %s, and reports %s as unlimited (-1).",
		u.Untracked, models.QuotaServerGroups, models.QuotaServerGroupMembers, u.Untracked))
}

// ParseQuotaSetUpdate validates a PUT body for microversion v with Nova's
// schema and collects the limits of the tracked resources.
func ParseQuotaSetUpdate(v Version, raw []byte) (QuotaSetUpdate, error) {
	root, f := validateBody(quotaUpdateSchemaFor(v), raw)
	if f != nil {
		return QuotaSetUpdate{}, f
	}
	qv, _ := root.Get("quota_set")
	qs := qv.(*pycompat.Object)
	u := QuotaSetUpdate{Set: map[string]int{}}
	if fv, ok := qs.Get("force"); ok {
		u.Force = truthy(fv)
	}
	// Nova works through the body in its own order; so does this.
	for _, k := range qs.Keys {
		if k == "force" {
			continue
		}
		n, err := quotaInt(qs.Vals[k])
		if err != nil {
			return QuotaSetUpdate{}, faultf(http.StatusBadRequest, fmt.Sprintf(
				"Invalid input for field/attribute %s. Value: %s. not an integer", k, pycompat.Str(qs.Vals[k])))
		}
		if !QuotaTracked(k) {
			if n != -1 && u.Untracked == "" {
				u.Untracked = k
			}
			continue
		}
		u.Set[k] = n
	}
	return u, nil
}

// quotaInt reads a schema-checked limit (an integer or a digit string
// within -1 … MAX_INT).
func quotaInt(x any) (int, error) {
	switch t := x.(type) {
	case pycompat.Int:
		return strconv.Atoi(pycompat.CanonicalInt(t.Lit))
	case string:
		// The pattern lets one final newline through, which Python's
		// int() ignores.
		return strconv.Atoi(strings.TrimSuffix(t, "\n"))
	}
	return 0, fmt.Errorf("not an integer: %v", x)
}

// truthy is oslo's bool_from_string on a schema-checked boolean.
func truthy(x any) bool {
	switch t := x.(type) {
	case bool:
		return t
	case string:
		switch t {
		case "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes":
			return true
		}
	}
	return false
}

// projectUsage reads a project's limits and usage. A caller without a
// project (possible for /limits) gets the defaults and nothing in use.
func (api *API) projectUsage(ctx context.Context, project string) (store.ProjectUsage, error) {
	if project == "" {
		return store.ProjectUsage{Limits: map[string]int{}}, nil
	}
	return api.env.Store.GetProjectUsage(ctx, project)
}

// quotaRequest runs the checks every quota-set read shares: the query
// schema, then the policy on the project in the URL.
func quotaRequest(c echo.Context, action string) (Version, string, error) {
	v, who, id := version(c), caller(c), c.Param("id")
	if f := validateQuery(quotaQuerySchema(v), c.QueryParams()); f != nil {
		return v, id, f
	}
	if f := quotaSetPolicy(action, who, id); f != nil {
		return v, id, f
	}
	return v, id, nil
}

// GET /os-quota-sets/{id}. A user_id asks for that user's quotas; corral
// keeps none per user, and a user without its own quotas has its
// project's, so the answer is the project's either way.
func (api *API) showQuotaSet(c echo.Context) error {
	v, id, f := quotaRequest(c, qsShow)
	if f != nil {
		return f
	}
	u, err := api.projectUsage(c.Request().Context(), id)
	if err != nil {
		return err
	}
	body := FormatQuotaSet(v, id, func(r string) any { return QuotaLimit(u, r) })
	return writeJSON(c, http.StatusOK, doc{{"quota_set", body}})
}

// GET /os-quota-sets/{id}/detail
func (api *API) detailQuotaSet(c echo.Context) error {
	v, id, f := quotaRequest(c, qsDetail)
	if f != nil {
		return f
	}
	u, err := api.projectUsage(c.Request().Context(), id)
	if err != nil {
		return err
	}
	body := FormatQuotaSet(v, id, func(r string) any {
		// Reservations no longer exist in Nova either; it always says 0.
		return doc{{"limit", QuotaLimit(u, r)}, {"in_use", QuotaInUse(u, r)}, {"reserved", 0}}
	})
	return writeJSON(c, http.StatusOK, doc{{"quota_set", body}})
}

// GET /os-quota-sets/{id}/defaults takes any query (Nova checks none).
func (api *API) defaultQuotaSet(c echo.Context) error {
	v, who, id := version(c), caller(c), c.Param("id")
	if f := quotaSetPolicy(qsDefaults, who, id); f != nil {
		return f
	}
	body := FormatQuotaSet(v, id, func(r string) any { return QuotaDefault(r) })
	return writeJSON(c, http.StatusOK, doc{{"quota_set", body}})
}

// PUT /os-quota-sets/{id}
func (api *API) updateQuotaSet(c echo.Context) error {
	v, who, id := version(c), caller(c), c.Param("id")
	if f := checkContentType(c); f != nil {
		return f
	}
	raw, f := readBody(c)
	if f != nil {
		return f
	}
	upd, f := ParseQuotaSetUpdate(v, raw)
	if f != nil {
		return f
	}
	if f := validateQuery(quotaQuerySchema(v), c.QueryParams()); f != nil {
		return f
	}
	if f := quotaSetPolicy(qsUpdate, who, id); f != nil {
		return f
	}
	if _, ok := c.QueryParams()["user_id"]; ok {
		return faultf(http.StatusBadRequest,
			"Invalid input for query parameters user_id: corral keeps no per-user quotas; leave user_id out to set the project's.")
	}
	if f := upd.Refusal(); f != nil {
		return f
	}
	ctx := c.Request().Context()
	if len(upd.Set) > 0 {
		// The store checks the limits against usage in the same
		// transaction as the write, with Nova's wording.
		_, err := api.env.Writer.Apply(ctx, handlers.Actor(c), []scheduling.Change{{Op: scheduling.OpSetQuotas, Project: id,
			QuotaFields: scheduling.QuotaFields{Quotas: upd.Set, Force: upd.Force}}})
		if err != nil {
			return err
		}
	}
	u, err := api.projectUsage(ctx, id)
	if err != nil {
		return err
	}
	// Nova's update answer has no "id".
	body := FormatQuotaSet(v, "", func(r string) any { return QuotaLimit(u, r) })
	return writeJSON(c, http.StatusOK, doc{{"quota_set", body}})
}

// DELETE /os-quota-sets/{id} puts the project's limits back to the
// defaults; 202 with no body, as Nova answers. With user_id it would drop
// that user's own quotas, of which corral has none.
func (api *API) deleteQuotaSet(c echo.Context) error {
	_, id, f := quotaRequest(c, qsDelete)
	if f != nil {
		return f
	}
	if _, ok := c.QueryParams()["user_id"]; !ok {
		reset := scheduling.Change{Op: scheduling.OpSetQuotas, Project: id,
			QuotaFields: scheduling.QuotaFields{Reset: []string{models.QuotaServerGroups, models.QuotaServerGroupMembers}}}
		if _, err := api.env.Writer.Apply(c.Request().Context(), handlers.Actor(c), []scheduling.Change{reset}); err != nil {
			return err
		}
	}
	c.Response().Header().Set("Content-Type", "application/json")
	return c.NoContent(http.StatusAccepted)
}
