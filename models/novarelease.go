package models

import (
	"strconv"
	"strings"
)

// NovaRelease is one Nova release the core can preview: the scheduler's
// behaviour differs between releases (nova_release setting), and a sync
// tells them apart by the compute API's maximum microversion
// (nova/api/openstack/api_version_request.py _MAX_API_VERSION at the
// release's tag).
type NovaRelease struct {
	Name   string // the code name, lower case: the setting's value
	Series string // 2023.1, …
	Major  int    // nova's major version (26 is Zed)
	// MaxMicroversion is the compute API's highest microversion. Two
	// releases in a row often share it: a sync cannot tell them apart.
	MaxMicroversion string
}

// NovaReleases are the releases corral models, oldest first; the last is
// the latest Nova release whose code is public.
var NovaReleases = []NovaRelease{
	{"zed", "2022.2", 26, "2.93"},
	{"antelope", "2023.1", 27, "2.95"},
	{"bobcat", "2023.2", 28, "2.95"},
	{"caracal", "2024.1", 29, "2.96"},
	{"dalmatian", "2024.2", 30, "2.96"},
	{"epoxy", "2025.1", 31, "2.100"},
	{"flamingo", "2025.2", 32, "2.100"},
	{"gazpacho", "2026.1", 33, "2.103"},
}

// Releases whose behaviour the core tells apart.
const (
	NovaZed       = "zed"
	NovaDalmatian = "dalmatian"
	// NovaLatest is the newest release modelled: the default.
	NovaLatest = "gazpacho"
)

// LookupNovaRelease reads a release by code name ("Zed"), series
// ("2022.2") or major version ("26"); empty means the latest.
func LookupNovaRelease(text string) (NovaRelease, bool) {
	t := strings.ToLower(strings.TrimSpace(text))
	if t == "" || t == "latest" {
		return NovaReleases[len(NovaReleases)-1], true
	}
	for _, r := range NovaReleases {
		if t == r.Name || t == r.Series || t == strconv.Itoa(r.Major) {
			return r, true
		}
	}
	return NovaRelease{}, false
}

// Label names the release for a person: "2022.2 Zed (nova 26)".
func (r NovaRelease) Label() string {
	if r.Name == "" {
		return ""
	}
	return r.Series + " " + strings.ToUpper(r.Name[:1]) + r.Name[1:] + " (nova " + strconv.Itoa(r.Major) + ")"
}

// NovaReleaseAtLeast reports whether the release named (a Settings value;
// empty or unknown is the latest) is name or newer.
func NovaReleaseAtLeast(release, name string) bool {
	r, ok := LookupNovaRelease(release)
	if !ok {
		r = NovaReleases[len(NovaReleases)-1]
	}
	min, _ := LookupNovaRelease(name)
	return r.Major >= min.Major
}

// NovaReleasesAt are the releases whose compute API tops out at the
// microversion mv (oldest first). A microversion above the latest release's
// is a development version: the latest release is the closest modelled.
// None when mv is below Zed's.
func NovaReleasesAt(mv string) []NovaRelease {
	var out []NovaRelease
	for _, r := range NovaReleases {
		if r.MaxMicroversion == mv {
			out = append(out, r)
		}
	}
	latest := NovaReleases[len(NovaReleases)-1]
	if len(out) == 0 && microversionLess(latest.MaxMicroversion, mv) {
		out = append(out, latest)
	}
	return out
}

// microversionLess compares "2.93" and "2.100" as microversions.
func microversionLess(a, b string) bool {
	am, an, _ := strings.Cut(a, ".")
	bm, bn, _ := strings.Cut(b, ".")
	x, _ := strconv.Atoi(am)
	y, _ := strconv.Atoi(bm)
	if x != y {
		return x < y
	}
	p, _ := strconv.Atoi(an)
	q, _ := strconv.Atoi(bn)
	return p < q
}

// checkNovaRelease is the nova_release setting's check: a release named
// as LookupNovaRelease reads it, kept as its code name.
func checkNovaRelease(text string) (string, error) {
	r, ok := LookupNovaRelease(text)
	if !ok {
		names := make([]string, len(NovaReleases))
		for i, r := range NovaReleases {
			names[i] = r.Name
		}
		return "", E(Invalid, "nova_release", "unknown Nova release %q (known: %s, or their series such as 2022.2)", text, strings.Join(names, ", "))
	}
	return r.Name, nil
}
