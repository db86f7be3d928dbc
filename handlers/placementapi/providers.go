package placementapi

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"corral/models"
	"corral/models/placement"
	"corral/models/pycompat"
	"corral/models/scheduling"
)

// link is one entry of a provider's links.
type link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

// providerJSON is a provider as Placement serialises it; the tree fields
// exist from 1.14 (parent null for a root), hence the two shapes.
type providerJSON struct {
	UUID       string `json:"uuid"`
	Name       string `json:"name"`
	Generation int64  `json:"generation"`
	Links      []link `json:"links"`
}

type providerJSON114 struct {
	providerJSON
	Parent *string `json:"parent_provider_uuid"`
	Root   string  `json:"root_provider_uuid"`
}

// mount is where the API is served; Placement prefixes its links with its
// own mount point (SCRIPT_NAME) in the same way.
const mount = "/placement"

func providerURL(u string) string { return mount + "/resource_providers/" + u }

func serializeProvider(p *models.Provider, v placement.Version) any {
	self := providerURL(p.UUID)
	rels := []string{"inventories", "usages"}
	if v.AtLeast(1) {
		rels = append(rels, "aggregates")
	}
	if v.AtLeast(6) {
		rels = append(rels, "traits")
	}
	if v.AtLeast(11) {
		rels = append(rels, "allocations")
	}
	links := make([]link, 0, len(rels)+1)
	links = append(links, link{"self", self})
	for _, r := range rels {
		links = append(links, link{r, self + "/" + r})
	}
	base := providerJSON{UUID: p.UUID, Name: p.Name, Generation: p.Generation, Links: links}
	if !v.AtLeast(14) {
		return base
	}
	root := p.RootUUID
	if root == "" {
		root = p.UUID
	}
	return providerJSON114{providerJSON: base, Parent: p.ParentUUID, Root: root}
}

// modified is when a provider last changed (Placement's pick_last_modified).
func modified(p *models.Provider) time.Time {
	if !p.UpdatedAt.IsZero() {
		return p.UpdatedAt
	}
	return p.CreatedAt
}

func setLastModified(c echo.Context, t time.Time) {
	h := c.Response().Header()
	h.Set(echo.HeaderLastModified, t.UTC().Format(http.TimeFormat))
	h.Set(echo.HeaderCacheControl, "no-cache")
}

func (api *API) now() time.Time {
	if api.env.Now != nil {
		return api.env.Now()
	}
	return time.Now()
}

// listProviders is GET /resource_providers. member_of is judged on each
// provider's own aggregates only (the core's Direct mode), exactly as
// upstream's list does; the tree-spanning reading belongs to allocation
// candidates.
func (api *API) listProviders(c echo.Context) error {
	v := version(c)
	raw := c.Request().URL.RawQuery
	slot := &answerSlot{key: answerKey{minor: v.Minor, query: raw}}
	if rev, err := api.env.Store.Revision(c.Request().Context()); err == nil {
		if ans, ok := api.answers.get(rev, slot.key); ok {
			api.writeAnswer(c, v, ans)
			return nil
		}
	}
	f, perr := parseListQuery(raw, v)
	if perr != nil {
		return perr
	}
	snap, rev, err := api.snapshotAt(c)
	if err != nil {
		return err
	}
	slot.rev = rev
	ix := snap.Index()
	if e := checkKnown(api.catalogFor(c, ix), f); e != nil {
		return e
	}
	var res *placement.Result
	var sparse []int32
	sparseOK := false
	if f.memberOf != nil {
		if sparse, sparseOK = directSparse(ix, *f.memberOf); !sparseOK {
			res = ix.Evaluate(*f.memberOf, placement.Direct)
		}
	}
	treeRoot := -1
	if f.inTree != nil {
		i, ok := ix.ProviderByUUID(*f.inTree)
		if !ok {
			// Placement answers an unknown in_tree with an empty list.
			return api.writeSelection(c, v, ix, &selection{}, slot)
		}
		treeRoot = ix.Root(i)
	}
	var keep func(int) bool
	if f.name != nil || f.uuid != nil || treeRoot >= 0 || len(f.requiredAny) > 0 || len(f.forbiddenTraits) > 0 || len(f.resources) > 0 {
		keep = func(i int) bool {
			p := ix.Provider(i)
			switch {
			case f.name != nil && p.Name != *f.name,
				f.uuid != nil && p.UUID != *f.uuid,
				treeRoot >= 0 && ix.Root(i) != treeRoot,
				!f.traitsMatch(p):
				return false
			}
			for _, r := range f.resources {
				if !hasCapacity(p, r.class, r.amount) {
					return false
				}
			}
			return true
		}
	}
	sel := &selection{}
	switch {
	case f.uuid != nil || f.name != nil:
		// Uuids and names are unique: one provider at most, found by
		// lookup instead of looking at every other one.
		i, ok := 0, false
		if f.uuid != nil {
			i, ok = ix.ProviderByUUID(*f.uuid)
		} else {
			i, ok = ix.ProviderByName(*f.name)
		}
		if ok && (res == nil || !res.Excluded(i)) && (!sparseOK || slices.Contains(sparse, int32(i))) && keep(i) {
			sel.add(i)
		}
	case sparseOK:
		for _, i := range sparse {
			if keep == nil || keep(int(i)) {
				sel.add(int(i))
			}
		}
	default:
		var excluded placement.Bitset
		if res != nil {
			excluded = res.ExcludedSet()
		}
		selectAll(sel, ix.Len(), excluded, keep)
	}
	return api.writeSelection(c, v, ix, sel, slot)
}

// checkKnown refuses resource classes and traits Placement would not know:
// neither standard, nor created through the API, nor used by a provider.
func checkKnown(cat *catalog, f *providerFilter) *Error {
	if len(f.resources) == 0 && len(f.requiredAny) == 0 && len(f.forbiddenTraits) == 0 {
		return nil
	}
	for _, r := range f.resources {
		if !cat.HasClass(r.class) {
			return badRequest("Invalid resource class in resources parameter: No such resource class " + r.class + ".")
		}
	}
	var missing []string
	seen := map[string]bool{}
	check := func(t string) {
		if !cat.HasTrait(t) && !seen[t] {
			seen[t] = true
			missing = append(missing, t)
		}
	}
	for _, group := range f.requiredAny {
		for _, t := range group {
			check(t)
		}
	}
	for _, t := range f.forbiddenTraits {
		check(t)
	}
	if cat.err != nil {
		return &Error{Status: http.StatusInternalServerError, Msg: "Internal error: something went wrong on our side."}
	}
	if len(missing) > 0 {
		return badRequest(`Invalid trait(s) in "required" parameter: No such trait(s): ` + strings.Join(missing, ", ") + ".")
	}
	return nil
}

func (f *providerFilter) traitsMatch(p *models.Provider) bool {
	for _, group := range f.requiredAny {
		ok := false
		for _, t := range group {
			if p.HasTrait(t) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, t := range f.forbiddenTraits {
		if p.HasTrait(t) {
			return false
		}
	}
	return true
}

// provider finds a provider in the current snapshot by exact uuid.
func (api *API) provider(c echo.Context, u string) (*models.Provider, *placement.Index, error) {
	snap, err := api.snapshot(c)
	if err != nil {
		return nil, nil, err
	}
	ix := snap.Index()
	i, ok := ix.ProviderByUUID(u)
	if !ok {
		return nil, ix, notFound("No resource provider with uuid " + u + " found")
	}
	return ix.Provider(i), ix, nil
}

// showProvider is GET /resource_providers/{uuid}.
func (api *API) showProvider(c echo.Context) error {
	v := version(c)
	p, _, err := api.provider(c, c.Param("uuid"))
	if err != nil {
		return err
	}
	if v.AtLeast(15) {
		setLastModified(c, modified(p))
	}
	return c.JSON(http.StatusOK, serializeProvider(p, v))
}

// createProvider is POST /resource_providers: 201 without a body below
// 1.20, 200 with the provider from 1.20; Location either way.
func (api *API) createProvider(c echo.Context) error {
	v := version(c)
	body, perr := readJSON(c)
	if perr != nil {
		return perr
	}
	obj, perr := validateObject(body, providerSchema(v, true))
	if perr != nil {
		return perr
	}
	p := &models.Provider{Name: obj.Vals["name"].(string)}
	if s, ok := obj.Vals["uuid"].(string); ok && s != "" {
		// Placement normalises a uuid sent without dashes into the dashed form.
		id, err := uuid.Parse(s)
		if err != nil {
			return invalid("%s is not a 'uuid'", pycompat.Repr(s))
		}
		p.UUID = id.String()
	} else {
		p.UUID = uuid.NewString()
	}
	if s, ok := obj.Vals["parent_provider_uuid"].(string); ok {
		p.ParentUUID = &s
	}
	err := api.apply(c, scheduling.Change{Op: scheduling.OpCreateProvider, Provider: p.Name, UUID: p.UUID,
		PlacementFields: scheduling.PlacementFields{Parent: p.ParentUUID}})
	if err != nil {
		var ce *models.Error
		switch {
		case errors.As(err, &ce) && ce.Kind == models.Conflict && ce.Field == "uuid":
			return &Error{Status: http.StatusConflict, Code: CodeDuplicateName,
				Msg: "Conflicting resource provider uuid: " + p.UUID + " already exists."}
		case errors.As(err, &ce) && ce.Kind == models.Conflict:
			return &Error{Status: http.StatusConflict, Code: CodeDuplicateName,
				Msg: "Conflicting resource provider name: " + p.Name + " already exists."}
		case errors.As(err, &ce) && ce.Kind == models.NotFound && ce.Field == "parent_provider_uuid":
			return badRequest(`Unable to create resource provider "` + p.Name + `", ` + p.UUID +
				": Object action create failed because: parent provider UUID does not exist.")
		case errors.As(err, &ce) && ce.Kind == models.Invalid:
			return badRequest(`Unable to create resource provider "` + p.Name + `", ` + p.UUID + ": " + ce.Msg)
		}
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, c.Scheme()+"://"+c.Request().Host+providerURL(p.UUID))
	if !v.AtLeast(20) {
		return c.NoContent(http.StatusCreated)
	}
	if p, err = api.written(c, p.UUID); err != nil {
		return err
	}
	setLastModified(c, modified(p))
	return c.JSON(http.StatusOK, serializeProvider(p, v))
}

// updateProvider is PUT /resource_providers/{uuid}: rename, and from 1.14
// set a parent. Moving a provider that has a parent (or un-parenting it)
// needs 1.37; a parent inside its own subtree is refused at any version.
func (api *API) updateProvider(c echo.Context) error {
	v := version(c)
	id := c.Param("uuid")
	cur, _, err := api.provider(c, id)
	if err != nil {
		return err
	}
	body, perr := readJSON(c)
	if perr != nil {
		return perr
	}
	obj, perr := validateObject(body, providerSchema(v, false))
	if perr != nil {
		return perr
	}
	name := obj.Vals["name"].(string)
	parentVal, setParent := obj.Vals["parent_provider_uuid"]
	var newParent *string
	if s, ok := parentVal.(string); ok {
		newParent = &s
	}
	saveErr := func(reason string) *Error {
		return badRequest("Unable to save resource provider " + id + ": " + reason)
	}
	switch {
	case setParent && newParent == nil && cur.ParentUUID != nil && !v.AtLeast(37):
		return saveErr("Object action update failed because: un-parenting a provider is not currently allowed.")
	case setParent && newParent != nil && cur.ParentUUID != nil && *cur.ParentUUID != *newParent && !v.AtLeast(37):
		return saveErr("Object action update failed because: re-parenting a provider is not currently allowed.")
	}
	// Placement saves a rename or a move without bumping the generation;
	// it saves the provider even when nothing changes.
	changes := []scheduling.Change{{Op: scheduling.OpRenameProvider, Provider: id, PlacementFields: scheduling.PlacementFields{NewName: name}}}
	if setParent && ptrOr(newParent) != ptrOr(cur.ParentUUID) {
		parent := ptrOr(newParent)
		changes = append(changes, scheduling.Change{Op: scheduling.OpSetProviderParent, Provider: id, PlacementFields: scheduling.PlacementFields{Parent: &parent}})
	}
	err = api.apply(c, changes...)
	if err != nil {
		var ce *models.Error
		switch {
		case errors.As(err, &ce) && ce.Kind == models.NotFound && ce.Field == "parent_provider_uuid":
			return saveErr("Object action create failed because: parent provider UUID does not exist.")
		case errors.As(err, &ce) && ce.Kind == models.Invalid && ce.Field == "parent_provider_uuid":
			return saveErr("Object action update failed because: creating loop in the provider tree is not allowed.")
		case errors.As(err, &ce) && ce.Kind == models.NotFound:
			return notFound("No resource provider with uuid " + id + " found")
		case errors.As(err, &ce) && ce.Kind == models.Conflict && ce.Field == "name":
			return &Error{Status: http.StatusConflict, Code: CodeDuplicateName,
				Msg: "Conflicting resource provider " + name + " already exists."}
		case errors.As(err, &ce) && ce.Kind == models.Invalid:
			return saveErr(ce.Msg)
		}
		return err
	}
	p, err := api.written(c, id)
	if err != nil {
		return err
	}
	if v.AtLeast(15) {
		setLastModified(c, modified(p))
	}
	return c.JSON(http.StatusOK, serializeProvider(p, v))
}

// deleteProvider is DELETE /resource_providers/{uuid}: 204, or 409 while
// the provider has children (or, in corral, a host still has servers).
func (api *API) deleteProvider(c echo.Context) error {
	id := c.Param("uuid")
	p, ix, err := api.provider(c, id)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) && pe.Status == http.StatusNotFound {
			return notFound("No resource provider with uuid " + id + " found for delete")
		}
		return err
	}
	cannotDeleteParent := &Error{Status: http.StatusConflict, Code: CodeCannotDeleteParent,
		Msg: "Unable to delete parent resource provider " + id + ": It has child resource providers."}
	if i, _ := ix.ProviderByUUID(p.UUID); hasChildren(ix, i) {
		return cannotDeleteParent
	}
	err = api.apply(c, scheduling.Change{Op: scheduling.OpDeleteProvider, Provider: id})
	if err != nil {
		var ce *models.Error
		switch {
		case errors.As(err, &ce) && ce.Kind == models.NotFound:
			return notFound("No resource provider with uuid " + id + " found for delete")
		case errors.As(err, &ce) && ce.Kind == models.Conflict && strings.Contains(ce.Msg, "has children"):
			return cannotDeleteParent
		case errors.As(err, &ce) && ce.Kind == models.Conflict:
			return &Error{Status: http.StatusConflict, Code: CodeProviderInUse,
				Msg: "Unable to delete resource provider " + id + ": " + ce.Msg}
		}
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// hasChildren reports whether provider i is some provider's parent.
func hasChildren(ix *placement.Index, i int) bool {
	root := ix.Root(i)
	for _, d := range ix.Descendants(root) {
		if ix.Parent(int(d)) == i {
			return true
		}
	}
	return false
}

func ptrOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
