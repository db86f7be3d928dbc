package compute

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"corral/models"
)

// Version is a compute API microversion, "X.Y".
type Version struct{ Major, Minor int }

// The range corral advertises. The maximum follows the Nova release the
// reference notes were taken from, so clients that ask for "latest" get
// every behaviour implemented here.
var (
	MinVersion = Version{2, 1}
	MaxVersion = Version{2, 104}
)

// Header names, as Nova spells them on the wire.
const (
	HeaderAPIVersion       = "OpenStack-API-Version"
	HeaderLegacyAPIVersion = "X-OpenStack-Nova-API-Version"
	serviceType            = "compute"
)

func (v Version) String() string { return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) }

// Less reports whether v is older than w.
func (v Version) Less(w Version) bool {
	return v.Major < w.Major || v.Major == w.Major && v.Minor < w.Minor
}

// AtLeast reports whether v is major.minor or newer.
func (v Version) AtLeast(major, minor int) bool { return !v.Less(Version{major, minor}) }

// Same regular expression as nova's APIVersionRequest: no leading zeros.
var versionRE = regexp.MustCompile(`^([1-9]\d*)\.([1-9]\d*|0)$`)

// ParseVersion parses "X.Y" strictly (no "latest").
func ParseVersion(s string) (Version, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Version{}, models.E(models.Invalid, HeaderAPIVersion,
			"API Version String %s is of invalid format. Must be of format MajorNum.MinorNum.", s)
	}
	major, err1 := strconv.Atoi(m[1])
	minor, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		// Only reachable with absurdly long digit strings; Nova would accept
		// them as big integers and then refuse them as out of range.
		return Version{}, models.E(models.NotAcceptable, HeaderAPIVersion,
			"Version %s is not supported by the API. Minimum is %s and maximum is %s.", s, MinVersion, MaxVersion)
	}
	return Version{major, minor}, nil
}

// RequestedVersion extracts the version string a request asks for, the way
// microversion-parse does: the standard header first (comma-folded, the last
// entry naming "compute" wins, service name case-insensitive), else the last
// value of the legacy header. ok is false when neither names a version.
func RequestedVersion(h http.Header) (value string, ok bool) {
	if vals := h.Values(HeaderAPIVersion); len(vals) > 0 {
		parts := strings.Split(strings.Join(vals, ","), ",")
		for i := len(parts) - 1; i >= 0; i-- {
			f := strings.Fields(parts[i])
			if len(f) < 2 || !strings.EqualFold(f[0], serviceType) {
				continue
			}
			// split(None, 1) keeps inner whitespace of the rest.
			rest := strings.TrimSpace(parts[i])
			rest = strings.TrimSpace(rest[len(f[0]):])
			return rest, true
		}
	}
	if vals := h.Values(HeaderLegacyAPIVersion); len(vals) > 0 {
		parts := strings.Split(strings.Join(vals, ","), ",")
		return strings.TrimSpace(parts[len(parts)-1]), true
	}
	return "", false
}

// Negotiate decides the version of a request. On a malformed version it
// returns an Invalid error and a zero Version (Nova echoes no version then);
// on a well-formed version outside the supported range it returns a
// NotAcceptable error together with the parsed version, which the fault
// still echoes in the response headers.
func Negotiate(h http.Header) (Version, error) {
	s, ok := RequestedVersion(h)
	if !ok {
		return MinVersion, nil
	}
	if s == "latest" {
		return MaxVersion, nil
	}
	v, err := ParseVersion(s)
	if err != nil {
		return Version{}, err
	}
	if v.Less(MinVersion) || MaxVersion.Less(v) {
		return v, models.E(models.NotAcceptable, HeaderAPIVersion,
			"Version %s is not supported by the API. Minimum is %s and maximum is %s.", v, MinVersion, MaxVersion)
	}
	return v, nil
}

// SetVersionHeaders writes the negotiated version (both forms) and the Vary
// entries. A zero version writes only Vary.
func SetVersionHeaders(h http.Header, v Version) {
	if v != (Version{}) {
		h.Set(HeaderAPIVersion, serviceType+" "+v.String())
		h.Set(HeaderLegacyAPIVersion, v.String())
	}
	addVary(h, HeaderAPIVersion)
	addVary(h, HeaderLegacyAPIVersion)
}

func addVary(h http.Header, name string) {
	for _, v := range h.Values("Vary") {
		for _, p := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), name) {
				return
			}
		}
	}
	h.Add("Vary", name)
}
