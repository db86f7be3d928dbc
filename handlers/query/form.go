package query

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"corral/models"
	"corral/models/scheduling"
	"corral/views"
)

// previewLimit caps the entries a page's trace lists; the funnel stays
// complete. A person reads the first few hundred rows at most.
const previewLimit = 200

// hostsPerPage is the host matrix's page: a screenful or two. maxHostPage
// bounds the page a URL may ask for (100,000 hosts at most).
const (
	hostsPerPage = 50
	maxHostPage  = 100000 / hostsPerPage
)

// parseForm reads the query form from URL values. Rows are kept as sent
// (blank ones included) so that error slots line up with the inputs.
func parseForm(q url.Values) views.QueryForm {
	f := views.QueryForm{
		Project:       strings.TrimSpace(q.Get("project")),
		User:          strings.TrimSpace(q.Get("user")),
		Flavor:        strings.TrimSpace(q.Get("flavor")),
		ExtraSpecs:    q.Get("extra_specs"),
		AZ:            strings.TrimSpace(q.Get("az")),
		Group:         strings.TrimSpace(q.Get("group")),
		Num:           strings.TrimSpace(q.Get("num")),
		Image:         q.Get("image"),
		BFV:           q.Get("bfv") != "",
		SameHost:      strings.TrimSpace(q.Get("same_host")),
		DifferentHost: strings.TrimSpace(q.Get("different_host")),
		Draft:         strings.TrimSpace(q.Get("draft")),
		More:          q.Get("more") != "",
		Errors:        map[string]string{},
	}
	mf := parseMatrixFilter(q)
	f.HostsFailed, f.HostsStage, f.HostsName, f.HostsPage = mf.Failed, mf.Stage, mf.Name, mf.Page
	for _, v := range q["member_of"] {
		f.MemberOf = append(f.MemberOf, views.QueryTerm{Value: strings.TrimSpace(v)})
	}
	gn, gm := q["gn"], q["gm"]
	for i, v := range gm {
		n := ""
		if i < len(gn) {
			n = strings.TrimSpace(gn[i])
		}
		f.Numbered = append(f.Numbered, views.QueryNumberedTerm{Group: n, Value: strings.TrimSpace(v)})
	}
	return f
}

// matrixFilter is the host matrix's filter as a URL carries it: failed
// hosts only (hfail), one stage (hstage), a name fragment (hname) and the
// page (hpage, 0 for the first).
type matrixFilter struct {
	Failed      bool
	Stage, Name string
	Page        int
}

// maxFilterText bounds the stage and name a URL may filter by (a host
// name is at most 255 bytes).
const maxFilterText = 255

// parseMatrixFilter reads the matrix filter from a URL's values. Anything
// it cannot use is dropped, never an error: a mistyped link still shows
// the matrix.
func parseMatrixFilter(q url.Values) matrixFilter {
	f := matrixFilter{
		Failed: q.Get("hfail") != "",
		Stage:  filterText(q.Get("hstage")),
		Name:   filterText(q.Get("hname")),
	}
	if n, err := strconv.Atoi(strings.TrimSpace(q.Get("hpage"))); err == nil && n > 1 && n <= maxHostPage {
		f.Page = n
	}
	return f
}

// filterText is s without invalid UTF-8 and control characters, cut to
// maxFilterText bytes on a character boundary, without surrounding space.
func filterText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > maxFilterText {
		cut := maxFilterText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = strings.TrimSpace(s[:cut])
	}
	return s
}

// compact drops the blank rows, for the canonical (shareable) URL and for
// the form re-rendered on a full page load.
func compact(f views.QueryForm) views.QueryForm {
	out := f
	out.MemberOf = nil
	for _, t := range f.MemberOf {
		if t.Value != "" {
			out.MemberOf = append(out.MemberOf, t)
		}
	}
	out.Numbered = nil
	for _, t := range f.Numbered {
		if t.Value != "" {
			out.Numbered = append(out.Numbered, t)
		}
	}
	return out
}

// parseExtraSpecs reads "key=value" lines. The first '=' splits, so values
// may hold nova's operators ("<in> a", "s== b", ">= 4").
func parseExtraSpecs(text string) (map[string]string, error) {
	return parseKeyValues(text, "extra_specs")
}

// parseKeyValues reads "key=value" lines for the form field named field.
func parseKeyValues(text, field string) (map[string]string, error) {
	specs := map[string]string{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, models.E(models.Invalid, field, "line %d: %q is not key=value", i+1, line)
		}
		specs[k] = strings.TrimSpace(v)
	}
	return specs, nil
}

// lookups are what buildRequest resolves against the world: a flavor by
// name (to lay ad-hoc extra specs over its own), a server by name or uuid
// (for the scheduler hints).
type lookups struct {
	flavor  func(string) (*models.Flavor, bool)
	servers func([]string) ([]string, error)
}

// buildRequest turns the form into a request. Field errors (a bad number,
// a malformed extra-spec line, a bad group number) are recorded on f next
// to the field or term, and the first one is returned.
func buildRequest(f *views.QueryForm, look lookups, limit int) (*scheduling.RequestSpec, error) {
	flavorOf := look.flavor
	r := &scheduling.RequestSpec{
		ProjectID:        f.Project,
		UserID:           f.User,
		AvailabilityZone: f.AZ,
		ServerGroup:      f.Group,
		NumInstances:     1,
		IsBFV:            f.BFV,
		Limit:            limit,
	}
	var firstErr error
	fail := func(err error) {
		f.Errors[models.FieldOf(err)] = message(err)
		if firstErr == nil {
			firstErr = err
		}
	}
	if f.Num != "" {
		n, err := strconv.Atoi(f.Num)
		if err != nil || n < 1 {
			fail(models.E(models.Invalid, "num", "the number of instances must be a whole number of at least 1, not %q", f.Num))
		} else {
			r.NumInstances = n
		}
	}
	specs, err := parseExtraSpecs(f.ExtraSpecs)
	if err != nil {
		fail(err)
	}
	props, err := parseKeyValues(f.Image, "image")
	if err != nil {
		fail(err)
	} else if len(props) > 0 {
		r.Image = &scheduling.ImageSpec{Properties: props}
	}
	same, err := hintServers(f.SameHost, "same_host", look.servers)
	if err != nil {
		fail(err)
	}
	different, err := hintServers(f.DifferentHost, "different_host", look.servers)
	if err != nil {
		fail(err)
	}
	if same != nil || different != nil {
		r.SchedulerHints = &scheduling.SchedulerHints{SameHost: same, DifferentHost: different}
	}
	switch {
	case len(specs) == 0:
		r.Flavor.Name = f.Flavor
	case f.Flavor == "":
		r.Flavor.Inline = &models.Flavor{ExtraSpecs: specs}
	default:
		fl, ok := flavorOf(f.Flavor)
		if !ok {
			fail(models.E(models.Invalid, "flavor", "no flavor named %q", f.Flavor))
			break
		}
		merged := maps.Clone(fl.ExtraSpecs)
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, specs)
		r.Flavor.Inline = &models.Flavor{Name: fl.Name, VCPUs: fl.VCPUs, RAMMB: fl.RAMMB, DiskGB: fl.DiskGB, ExtraSpecs: merged}
	}
	for _, t := range f.MemberOf {
		if t.Value != "" {
			r.Placement.MemberOf = append(r.Placement.MemberOf, t.Value)
		}
	}
	for i := range f.Numbered {
		t := &f.Numbered[i]
		if t.Value == "" {
			continue
		}
		n, err := strconv.Atoi(t.Group)
		if err != nil || n < 1 {
			t.Error = fmt.Sprintf("the group number must be a whole number of at least 1, not %q", t.Group)
			if firstErr == nil {
				firstErr = models.E(models.Invalid, "placement.groups", "%s", t.Error)
			}
			continue
		}
		if r.Placement.Groups == nil {
			r.Placement.Groups = map[string]scheduling.GroupSpec{}
		}
		key := strconv.Itoa(n)
		g := r.Placement.Groups[key]
		g.MemberOf = append(g.MemberOf, t.Value)
		r.Placement.Groups[key] = g
	}
	return r, firstErr
}

// maxHintRefs bounds the servers one hint field names.
const maxHintRefs = 100

// hintServers reads a hint field: servers by name or uuid, separated by
// commas or spaces, each resolved to its uuid.
func hintServers(text, field string, servers func([]string) ([]string, error)) ([]string, error) {
	refs := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if len(refs) == 0 {
		return nil, nil
	}
	if len(refs) > maxHintRefs {
		return nil, models.E(models.Invalid, field, "at most %d servers, got %d", maxHintRefs, len(refs))
	}
	out, err := servers(refs)
	if err != nil {
		return nil, models.E(models.Invalid, field, "%s", message(err))
	}
	return out, nil
}

// message is an error's text without the field prefix: the page shows it
// next to the field.
func message(err error) string {
	var ce *models.Error
	if errors.As(err, &ce) && ce.Msg != "" {
		return ce.Msg
	}
	return err.Error()
}
