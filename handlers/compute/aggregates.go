package compute

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"corral/handlers"
	js "corral/handlers/jsonschema"
	"corral/models"
	"corral/models/pycompat"
	"corral/models/scheduling"
	"corral/models/store"
)

// os-aggregates: Nova's host aggregates over corral's one aggregate object.
// A Nova "host" is a root provider that is not a sharing provider; the
// aggregate's other members (child or sharing providers, which only the
// Placement side sees) are kept but not listed as hosts.

func aggregateNotFound(id string) error {
	return faultf(http.StatusNotFound, fmt.Sprintf("Aggregate %s could not be found.", id))
}

// novaTime prints a timestamp as Nova's API does: naive ISO 8601, with
// microseconds only when there are any.
func novaTime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05")
	}
	return t.Format("2006-01-02T15:04:05.000000")
}

// FormatAggregate renders an aggregate for microversion v. hosts are the
// names of its host members; withMembers=false gives the create response,
// which Nova sends without hosts and metadata.
func FormatAggregate(v Version, a *models.Aggregate, hosts []string, withMembers bool) any {
	var az any
	if a.AvailabilityZone != nil {
		az = *a.AvailabilityZone
	}
	var updated any
	if !a.UpdatedAt.IsZero() && !a.UpdatedAt.Equal(a.CreatedAt) {
		updated = novaTime(a.UpdatedAt)
	}
	// Key order as nova-api writes them.
	d := doc{{"id", a.ID}}
	if v.AtLeast(2, 41) {
		d = append(d, kv{"uuid", a.UUID})
	}
	d = append(d, kv{"name", a.Name})
	if withMembers {
		if hosts == nil {
			hosts = []string{}
		}
		meta := a.Metadata
		if meta == nil {
			meta = map[string]string{}
		}
		d = append(d, kv{"hosts", hosts}, kv{"metadata", meta})
	}
	d = append(d,
		kv{"created_at", novaTime(a.CreatedAt)},
		kv{"updated_at", updated},
		kv{"deleted_at", nil},
		kv{"deleted", false},
		kv{"availability_zone", az},
	)
	return d
}

// hostNames maps member provider UUIDs to the names of those that are hosts.
func (api *API) hostNames(ctx context.Context, aggs []models.Aggregate) (map[string]*models.Provider, error) {
	byUUID := map[string]*models.Provider{}
	n := 0
	for i := range aggs {
		n += len(aggs[i].Members)
	}
	if n == 0 {
		return byUUID, nil
	}
	if n > 200 {
		// Cheaper to read every root once than to look members up one by one.
		roots, _, err := api.env.Store.ListProviders(ctx, store.ProviderQuery{RootsOnly: true})
		if err != nil {
			return nil, err
		}
		for i := range roots {
			byUUID[roots[i].UUID] = &roots[i]
		}
		return byUUID, nil
	}
	for i := range aggs {
		for _, m := range aggs[i].Members {
			if _, done := byUUID[m]; done {
				continue
			}
			p, err := api.env.Store.GetProvider(ctx, m)
			if err != nil {
				if models.KindOf(err) == models.NotFound {
					continue
				}
				return nil, err
			}
			byUUID[m] = p
		}
	}
	return byUUID, nil
}

// hostsOf lists Nova's hosts of a: a host only Placement has in the
// aggregate is not one of them.
func hostsOf(a *models.Aggregate, provs map[string]*models.Provider) []string {
	hosts := []string{}
	for _, m := range a.NovaMembers() {
		if p := provs[m]; p != nil && p.IsHost() {
			hosts = append(hosts, p.Name)
		}
	}
	sort.Strings(hosts)
	return hosts
}

func (api *API) renderAggregate(c echo.Context, a *models.Aggregate) error {
	provs, err := api.hostNames(c.Request().Context(), []models.Aggregate{*a})
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, doc{{"aggregate", FormatAggregate(version(c), a, hostsOf(a, provs), true)}})
}

// aggregateID is utils.validate_integer(id, 'id').
func aggregateID(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, faultf(http.StatusBadRequest, "Invalid input received: id must be an integer")
	}
	return n, nil
}

// loadAggregate finds an aggregate by Nova's integer id only.
func (api *API) loadAggregate(c echo.Context, raw string) (*models.Aggregate, error) {
	id, f := aggregateID(raw)
	if f != nil {
		return nil, f
	}
	ids, err := api.novaIDs(c)
	if err != nil {
		return nil, err
	}
	ref := strconv.FormatInt(id, 10)
	if ids != nil {
		u, ok := uuidOfNovaID(ids, id)
		if !ok {
			return nil, aggregateNotFound(raw)
		}
		ref = u
	}
	a, err := api.env.Store.GetAggregate(c.Request().Context(), ref)
	if err != nil {
		return nil, storeFault(err, func() error { return aggregateNotFound(raw) })
	}
	asNova(ids, a)
	if a.ID != id { // the store also matches names; Nova does not
		return nil, aggregateNotFound(raw)
	}
	return a, nil
}

func aggregateQueryCheck(c echo.Context) error {
	if version(c).AtLeast(2, 102) {
		return validateQuery(emptyQueryStrict, c.QueryParams())
	}
	return nil
}

// GET /os-aggregates
func (api *API) listAggregates(c echo.Context) error {
	if f := aggregateQueryCheck(c); f != nil {
		return f
	}
	if f := aggregatePolicy("index", caller(c)); f != nil {
		return f
	}
	aggs, _, err := api.env.Store.ListAggregates(c.Request().Context(), store.AggregateQuery{})
	if err != nil {
		return err
	}
	ids, err := api.novaIDs(c)
	if err != nil {
		return err
	}
	aggs = slices.DeleteFunc(aggs, func(a models.Aggregate) bool { return !asNova(ids, &a) })
	for i := range aggs {
		asNova(ids, &aggs[i])
	}
	provs, err := api.hostNames(c.Request().Context(), aggs)
	if err != nil {
		return err
	}
	out := make([]any, len(aggs))
	for i := range aggs {
		out[i] = FormatAggregate(version(c), &aggs[i], hostsOf(&aggs[i], provs), true)
	}
	return writeJSON(c, http.StatusOK, doc{{"aggregates", out}})
}

func (api *API) bodyFor(c echo.Context, s js.Schema) (*pycompat.Object, error) {
	if f := checkContentType(c); f != nil {
		return nil, f
	}
	raw, f := readBody(c)
	if f != nil {
		return nil, f
	}
	return validateBody(s, raw)
}

// nameConflict words a taken aggregate name as Nova does: the store's
// conflict, or the applier's refusal of the change that names it.
func nameConflict(err error, name string) error {
	field := models.FieldOf(err)
	if i := strings.Index(field, "]."); strings.HasPrefix(field, "changes[") && i >= 0 {
		field = field[i+2:]
	}
	taken := models.KindOf(err) == models.Conflict && field == "name" ||
		models.KindOf(err) == models.Invalid && (field == "aggregate" || field == "value") && strings.Contains(err.Error(), "already exists")
	if taken {
		return faultf(http.StatusConflict, fmt.Sprintf("Aggregate %s already exists.", name))
	}
	return nil
}

// apply hands changes to the one write path (Env.Writer) as the caller.
func (api *API) apply(c echo.Context, changes ...scheduling.Change) error {
	_, err := api.env.Writer.Apply(c.Request().Context(), handlers.Actor(c), changes)
	return err
}

// written loads the aggregate a change wrote, to answer with it.
// Connected, it carries Nova's id; an aggregate the write created is found
// by name, Nova having chosen its uuid.
func (api *API) written(c echo.Context, uuid string, name ...string) (*models.Aggregate, error) {
	ids, err := api.novaIDs(c)
	if err != nil {
		return nil, err
	}
	a, err := api.env.Store.GetAggregate(c.Request().Context(), uuid)
	if ids != nil && models.KindOf(err) == models.NotFound && len(name) == 1 {
		a, err = api.env.Store.GetAggregate(c.Request().Context(), name[0])
	}
	if err != nil {
		return nil, err
	}
	asNova(ids, a)
	return a, nil
}

// POST /os-aggregates
func (api *API) createAggregate(c echo.Context) error {
	body, f := api.bodyFor(c, aggCreate)
	if f != nil {
		return f
	}
	if f := aggregatePolicy("create", caller(c)); f != nil {
		return f
	}
	av, _ := body.Get("aggregate")
	in := av.(*pycompat.Object)
	nv, _ := in.Get("name")
	create := scheduling.Change{Op: scheduling.OpCreateAggregate, Aggregate: pycompat.Strip(nv.(string)), UUID: models.NewUUID()}
	if z, ok := in.Get("availability_zone"); ok {
		if s, _ := z.(string); s != "" {
			s = pycompat.Strip(s)
			create.AvailabilityZone = &s
		}
	}
	if err := api.apply(c, create); err != nil {
		if f := nameConflict(err, create.Aggregate); f != nil {
			return f
		}
		return err
	}
	a, err := api.written(c, create.UUID, create.Aggregate)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, doc{{"aggregate", FormatAggregate(version(c), a, nil, false)}})
}

// GET /os-aggregates/{id}
func (api *API) showAggregate(c echo.Context) error {
	if f := aggregateQueryCheck(c); f != nil {
		return f
	}
	if f := aggregatePolicy("show", caller(c)); f != nil {
		return f
	}
	a, f := api.loadAggregate(c, c.Param("id"))
	if f != nil {
		return f
	}
	return api.renderAggregate(c, a)
}

// zoneCheck refuses an empty zone name, as Nova does; verb is the start
// of Nova's message for the action. Whether the hosts may move to the zone
// is the store's rule, checked inside the write (zoneFault words it).
func (api *API) zoneCheck(a *models.Aggregate, az *string, verb string) error {
	if az == nil || *az == "" {
		return faultf(http.StatusBadRequest, fmt.Sprintf("%s %d. Reason: Aggregate %s does not support empty named availability zone.", verb, a.ID, a.Name))
	}
	return nil
}

// zoneFault words the store's zone rule (a host in at most one zone, Nova's
// is_safe_to_update_az) as Nova does, or returns nil for other errors.
func zoneFault(err error, a *models.Aggregate, verb string, status int) error {
	var zc *models.ZoneConflict
	if !errors.As(err, &zc) {
		return nil
	}
	return faultf(status, fmt.Sprintf("%s %d. Reason: One or more hosts already in availability zone(s) %s.", verb, a.ID, pycompat.Repr(zc.Zones)))
}

// PUT /os-aggregates/{id}
func (api *API) updateAggregate(c echo.Context) error {
	body, f := api.bodyFor(c, aggUpdate)
	if f != nil {
		return f
	}
	if f = aggregatePolicy("update", caller(c)); f != nil {
		return f
	}
	a, f := api.loadAggregate(c, c.Param("id"))
	if f != nil {
		return f
	}
	av, _ := body.Get("aggregate")
	in := av.(*pycompat.Object)
	name := a.Name
	if nv, ok := in.Get("name"); ok {
		name = pycompat.Strip(nv.(string))
	}
	var newAZ *string
	zv, setAZ := in.Get("availability_zone")
	if setAZ {
		if s, ok := zv.(string); ok {
			newAZ = &s
		}
		probe := *a
		probe.Name = name
		if err := api.zoneCheck(&probe, newAZ, "Cannot update aggregate"); err != nil {
			return err
		}
	}
	var changes []scheduling.Change
	if setAZ {
		changes = append(changes, scheduling.Change{Op: scheduling.OpSetZone, Aggregate: a.UUID, AvailabilityZone: newAZ})
	}
	if name != a.Name {
		changes = append(changes, scheduling.Change{Op: scheduling.OpRenameAggregate, Aggregate: a.UUID, Value: name})
	}
	err := api.apply(c, changes...)
	var out *models.Aggregate
	if err == nil {
		out, err = api.written(c, a.UUID)
	}
	if err != nil {
		if f := nameConflict(err, name); f != nil {
			return f
		}
		if zf := zoneFault(err, a, "Cannot update aggregate", http.StatusBadRequest); zf != nil {
			return zf
		}
		return storeFault(err, func() error { return aggregateNotFound(c.Param("id")) })
	}
	return api.renderAggregate(c, out)
}

// DELETE /os-aggregates/{id}
func (api *API) deleteAggregate(c echo.Context) error {
	if f := aggregatePolicy("delete", caller(c)); f != nil {
		return f
	}
	a, f := api.loadAggregate(c, c.Param("id"))
	if f != nil {
		return f
	}
	notEmpty := faultf(http.StatusBadRequest, fmt.Sprintf("Cannot remove host from aggregate %d. Reason: Host aggregate is not empty.", a.ID))
	provs, err := api.hostNames(c.Request().Context(), []models.Aggregate{*a})
	if err != nil {
		return err
	}
	if len(hostsOf(a, provs)) > 0 {
		return notEmpty
	}
	if err := api.apply(c, scheduling.Change{Op: scheduling.OpDeleteAggregate, Aggregate: a.UUID}); err != nil {
		if models.KindOf(err) == models.Conflict && models.FieldOf(err) == "members" {
			return notEmpty // a host was added meanwhile
		}
		return storeFault(err, func() error { return aggregateNotFound(c.Param("id")) })
	}
	// Nova answers 200 with an empty body here, for backwards compatibility.
	c.Response().Header().Set("Content-Type", "application/json")
	return c.NoContent(http.StatusOK)
}

// POST /os-aggregates/{id}/action
func (api *API) aggregateAction(c echo.Context) error {
	if f := checkContentType(c); f != nil {
		return f
	}
	raw, f := readBody(c)
	if f != nil {
		return f
	}
	// Nova picks the action from the body's only key before validating.
	v, err := pycompat.DecodeJSON(raw)
	o, isObj := v.(*pycompat.Object)
	if err != nil || !isObj || len(o.Keys) != 1 {
		return faultf(http.StatusBadRequest, "Malformed request body")
	}
	switch o.Keys[0] {
	case "add_host":
		return api.addHost(c, raw)
	case "remove_host":
		return api.removeHost(c, raw)
	case "set_metadata":
		return api.setMetadata(c, raw)
	}
	return faultf(http.StatusBadRequest, "There is no such action: "+o.Keys[0])
}

// findHost is Nova's compute service lookup: a host provider by exact name.
func (api *API) findHost(ctx context.Context, name string) (*models.Provider, error) {
	ps, _, err := api.env.Store.ListProviders(ctx, store.ProviderQuery{Name: name, RootsOnly: true})
	if err != nil {
		return nil, err
	}
	for i := range ps {
		if ps[i].Name == name && ps[i].IsHost() {
			return &ps[i], nil
		}
	}
	return nil, nil
}

func hostOf(body *pycompat.Object, action string) string {
	av, _ := body.Get(action)
	h, _ := av.(*pycompat.Object).Get("host")
	return h.(string)
}

func (api *API) addHost(c echo.Context, raw []byte) error {
	body, f := validateBody(aggAddHost, raw)
	if f != nil {
		return f
	}
	if f = aggregatePolicy("add_host", caller(c)); f != nil {
		return f
	}
	rawID := c.Param("id")
	if _, f = aggregateID(rawID); f != nil {
		return f
	}
	ctx := c.Request().Context()
	host := hostOf(body, "add_host")
	p, err := api.findHost(ctx, host)
	if err != nil {
		return err
	}
	if p == nil {
		return faultf(http.StatusNotFound, fmt.Sprintf("Compute host %s could not be found.", host))
	}
	a, f := api.loadAggregate(c, rawID)
	if f != nil {
		return f
	}
	if a.InNova(p.UUID) {
		return faultf(http.StatusConflict, fmt.Sprintf("Aggregate %d already has host %s.", a.ID, host))
	}
	err = api.apply(c, scheduling.Change{Op: scheduling.OpAddMember, Aggregate: a.UUID, Provider: p.UUID})
	var out *models.Aggregate
	if err == nil {
		out, err = api.written(c, a.UUID)
	}
	if err != nil {
		if zf := zoneFault(err, a, "Cannot add host to aggregate", http.StatusConflict); zf != nil {
			return zf
		}
		return storeFault(err, func() error { return aggregateNotFound(rawID) })
	}
	return api.renderAggregate(c, out)
}

func (api *API) removeHost(c echo.Context, raw []byte) error {
	body, f := validateBody(aggRemoveHost, raw)
	if f != nil {
		return f
	}
	if f = aggregatePolicy("remove_host", caller(c)); f != nil {
		return f
	}
	rawID := c.Param("id")
	if _, f = aggregateID(rawID); f != nil {
		return f
	}
	ctx := c.Request().Context()
	host := hostOf(body, "remove_host")
	cannot := faultf(http.StatusNotFound, fmt.Sprintf("Cannot remove host %s in aggregate %s", host, rawID))
	p, err := api.findHost(ctx, host)
	if err != nil {
		return err
	}
	if p == nil {
		return cannot
	}
	a, f := api.loadAggregate(c, rawID)
	if f != nil {
		return cannot
	}
	if !a.InNova(p.UUID) {
		return cannot
	}
	err = api.apply(c, scheduling.Change{Op: scheduling.OpRemoveMember, Aggregate: a.UUID, Provider: p.UUID})
	var out *models.Aggregate
	if err == nil {
		out, err = api.written(c, a.UUID)
	}
	if err != nil {
		if models.KindOf(err) == models.Invalid && strings.HasSuffix(models.FieldOf(err), ".provider") {
			return cannot // removed meanwhile
		}
		return storeFault(err, func() error { return cannot })
	}
	return api.renderAggregate(c, out)
}

func (api *API) setMetadata(c echo.Context, raw []byte) error {
	body, f := validateBody(aggSetMetadata, raw)
	if f != nil {
		return f
	}
	if f = aggregatePolicy("set_metadata", caller(c)); f != nil {
		return f
	}
	rawID := c.Param("id")
	a, f := api.loadAggregate(c, rawID)
	if f != nil {
		return f
	}
	sv, _ := body.Get("set_metadata")
	mv, _ := sv.(*pycompat.Object).Get("metadata")
	meta := mv.(*pycompat.Object)
	if zv, ok := meta.Get("availability_zone"); ok {
		var az *string
		if s, ok := zv.(string); ok {
			az = &s
		}
		if err := api.zoneCheck(a, az, "Cannot update metadata of aggregate"); err != nil {
			return err
		}
	}
	// Nova merges: a null value deletes the key (if it is there), others
	// are set.
	md := maps.Clone(a.Metadata)
	if md == nil {
		md = map[string]string{}
	}
	var changes []scheduling.Change
	for _, k := range meta.Keys {
		if s, ok := meta.Vals[k].(string); ok {
			md[k] = s
			changes = append(changes, scheduling.Change{Op: scheduling.OpSetMetadata, Aggregate: a.UUID, Key: k, Value: s})
		} else if _, had := md[k]; had {
			delete(md, k)
			changes = append(changes, scheduling.Change{Op: scheduling.OpUnsetMetadata, Aggregate: a.UUID, Key: k})
		}
	}
	err := api.apply(c, changes...)
	var out *models.Aggregate
	if err == nil {
		out, err = api.written(c, a.UUID)
	}
	if err != nil {
		if zf := zoneFault(err, a, "Cannot update metadata of aggregate", http.StatusBadRequest); zf != nil {
			return zf
		}
		return storeFault(err, func() error { return aggregateNotFound(rawID) })
	}
	return api.renderAggregate(c, out)
}
