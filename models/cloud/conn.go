// Package cloud connects corral to a real OpenStack cloud: it reads Nova and
// Placement into corral's live state (sync) and pushes an applied draft's
// changes back (rollout). It is an adapter like models/store, not part of
// the pure core.
package cloud

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/config"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"

	"corral/models"
)

// Options say how to reach the cloud: a clouds.yaml cloud (with the OS_*
// environment on top, as the openstack CLI reads them), or two endpoints
// and a token for a cloud reached without Keystone.
type Options struct {
	Cloud string // --os-cloud
	// EnvCloud is OS_CLOUD from the environment: the cloud when no flag
	// names a connection (flags win over the environment).
	EnvCloud     string
	ComputeURL   string // --compute-url, including /v2.1
	PlacementURL string // --placement-url
	Token        string // --token; sent as X-Auth-Token to both
	// TokenFile holds the token instead (--token-file), so that it is not
	// on the command line; with URL flags and neither, OS_TOKEN is read,
	// as the openstack CLI's token auth does.
	TokenFile string
	// Region overrides the cloud's region_name (--os-region).
	Region string
	// Getenv reads the OS_* environment; nil means os.Getenv.
	Getenv func(string) string
	// HTTPClient overrides the transport (tests); nil means a default one.
	HTTPClient *http.Client
}

// Configured reports whether any connection flag (or OS_CLOUD) was given.
func (o Options) Configured() bool {
	o = o.resolved()
	return o.Cloud != "" || o.ComputeURL != "" || o.PlacementURL != "" || o.Token != ""
}

// resolved is o with EnvCloud as the cloud when no flag names a connection.
func (o Options) resolved() Options {
	if o.Cloud == "" && o.ComputeURL == "" && o.PlacementURL == "" && o.Token == "" && o.TokenFile == "" {
		o.Cloud = o.EnvCloud
	}
	if o.Token == "" && (o.ComputeURL != "" || o.PlacementURL != "") {
		if o.TokenFile != "" {
			b, _ := os.ReadFile(o.TokenFile)
			o.Token = strings.TrimSpace(string(b))
		} else {
			o.Token = o.getenv()("OS_TOKEN")
		}
	}
	return o
}

func (o Options) getenv() func(string) string {
	if o.Getenv != nil {
		return o.Getenv
	}
	return os.Getenv
}

// parseOptions are the clouds.yaml options of the cloud, with the OS_*
// environment and --os-region on top.
func (o Options) parseOptions() []clouds.ParseOption {
	opts := cloudOptions(o.Cloud, o.getenv())
	if o.Region != "" {
		opts = append(opts, clouds.WithRegion(o.Region))
	}
	return opts
}

// Validate checks the flags form one of the two connection shapes.
func (o Options) Validate() error {
	if o.TokenFile != "" {
		b, err := os.ReadFile(o.TokenFile)
		if err != nil {
			return models.E(models.Invalid, "token-file", "--token-file: %v", err)
		}
		if strings.TrimSpace(string(b)) == "" {
			return models.E(models.Invalid, "token-file", "--token-file %s is empty", o.TokenFile)
		}
	}
	o = o.resolved()
	switch {
	case o.Cloud != "" && (o.ComputeURL != "" || o.PlacementURL != "" || o.Token != ""):
		return models.E(models.Invalid, "os-cloud", "give --os-cloud or --compute-url/--placement-url/--token, not both")
	case o.Cloud != "":
		return nil
	case o.ComputeURL == "" && o.PlacementURL == "" && o.Token == "":
		return models.E(models.Invalid, "os-cloud", "no connection: give --os-cloud NAME or --compute-url URL --placement-url URL --token T")
	case o.ComputeURL == "":
		return models.E(models.Invalid, "compute-url", "--compute-url is required with --placement-url and --token")
	case o.PlacementURL == "":
		return models.E(models.Invalid, "placement-url", "--placement-url is required with --compute-url and --token")
	case o.Token == "":
		return models.E(models.Invalid, "token", "a token is required with --compute-url and --placement-url: --token-file FILE, $OS_TOKEN or --token")
	}
	for name, u := range map[string]string{"compute-url": o.ComputeURL, "placement-url": o.PlacementURL} {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return models.E(models.Invalid, name, "%q is not an http(s) URL", RedactURL(u))
		}
	}
	return nil
}

// Describe is the connection without its secrets, for pages and logs.
func (o Options) Describe() string {
	o = o.resolved()
	if o.Cloud != "" {
		if o.Region != "" {
			return "cloud " + o.Cloud + " (clouds.yaml), region " + o.Region
		}
		return "cloud " + o.Cloud + " (clouds.yaml)"
	}
	return "compute " + RedactURL(o.ComputeURL) + ", placement " + RedactURL(o.PlacementURL) + " (token)"
}

// Microversions corral understands. It asks each service for the highest
// one both sides know and refuses a service below the minimum.
const (
	computeMin   = "2.64" // server groups with policy and rules
	computeMax   = "2.93"
	placementMin = "1.19" // aggregates with generations
	placementMax = "1.39"
)

// Client talks to one cloud's compute and Placement APIs.
type Client struct {
	Compute, Placement *gophercloud.ServiceClient
	// ComputeMaxVersion is the compute API's own maximum microversion
	// (before corral's cap): it tells the Nova release.
	ComputeMaxVersion string
	requests          atomic.Int64
	http              *http.Client
	// scope makes a compute client acting in another project (Keystone
	// credentials only): Nova creates a server group in the token's.
	scope func(ctx context.Context, project string) (*gophercloud.ServiceClient, error)
}

// Close lets go of the client's connections. A read cancelled midway can
// leave a freshly dialled connection idle: a server that serves one
// connection at a time (Placement's development server) waits on it until
// the transport's idle timeout, and a console would keep a few for every
// sync. Connections that become idle after Close are closed too.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Requests is the number of HTTP requests made so far.
func (c *Client) Requests() int64 { return c.requests.Load() }

// Connect authenticates (for --os-cloud) and negotiates the microversions.
// The caller closes the client when done with it.
func Connect(ctx context.Context, o Options) (*Client, error) {
	c, err := connect(ctx, o)
	if err != nil {
		if c != nil {
			c.Close()
		}
		return nil, redactError(err)
	}
	return c, nil
}

// connect returns the client it made so far with an error, to be closed.
func connect(ctx context.Context, o Options) (*Client, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.resolved()
	// Parallel reads keep their connections: the default transport keeps
	// two idle per host and would open a new one for most requests.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	hc := http.Client{Timeout: 60 * time.Second, Transport: tr}
	if o.HTTPClient != nil {
		hc = *o.HTTPClient
	}
	c := &Client{http: &hc}
	if o.Cloud != "" {
		ao, eo, tlsConf, err := clouds.Parse(o.parseOptions()...)
		if err != nil {
			return c, models.E(models.Invalid, "os-cloud", "clouds.yaml: %v", err)
		}
		if tlsConf != nil && o.HTTPClient == nil {
			tr.TLSClientConfig = tlsConf
		}
		hc.Transport = &countingTransport{next: hc.Transport, n: &c.requests}
		ao.AllowReauth = ao.Password != "" || ao.ApplicationCredentialSecret != ""
		pc, err := config.NewProviderClient(ctx, ao, config.WithHTTPClient(hc))
		if err != nil {
			if why := tlsProblem(err); why != "" {
				return c, fmt.Errorf("keystone %s of cloud %s: %s", ao.IdentityEndpoint, o.Cloud, why)
			}
			var transport *url.Error
			if errors.As(err, &transport) {
				// No answer at all: nothing was refused.
				return c, fmt.Errorf("keystone %s of cloud %s (region %q) did not answer: %s", ao.IdentityEndpoint, o.Cloud, eo.Region, clip(err.Error()))
			}
			return c, fmt.Errorf("keystone %s refused the credentials of cloud %s: %s", ao.IdentityEndpoint, o.Cloud, answerOf(err))
		}
		if c.Compute, err = openstack.NewComputeV2(pc, eo); err != nil {
			return c, fmt.Errorf("keystone %s catalog of cloud %s: no compute endpoint in region %q (%s interface): %v", ao.IdentityEndpoint, o.Cloud, eo.Region, eo.Availability, err)
		}
		if c.Placement, err = openstack.NewPlacementV1(pc, eo); err != nil {
			return c, fmt.Errorf("keystone %s catalog of cloud %s: no placement endpoint in region %q (%s interface): %v", ao.IdentityEndpoint, o.Cloud, eo.Region, eo.Availability, err)
		}
		c.scope = func(ctx context.Context, project string) (*gophercloud.ServiceClient, error) {
			return scopedCompute(ctx, ao, eo, hc, project, c.Compute.Microversion)
		}
	} else {
		hc.Transport = &countingTransport{next: hc.Transport, n: &c.requests}
		pc := &gophercloud.ProviderClient{HTTPClient: hc}
		pc.SetToken(o.Token)
		c.Compute = &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: withSlash(o.ComputeURL), Type: "compute"}
		c.Placement = &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: withSlash(o.PlacementURL), Type: "placement"}
	}
	return c, c.negotiate(ctx)
}

// cloudOptions are the OS_* variables the openstack CLI lets override a
// clouds.yaml entry (clouds.Parse itself reads OS_CLOUD, OS_REGION_NAME,
// OS_INTERFACE and OS_CLIENT_CONFIG_FILE).
func cloudOptions(name string, getenv func(string) string) []clouds.ParseOption {
	opts := []clouds.ParseOption{clouds.WithCloudName(name)}
	str := map[string]func(string) clouds.ParseOption{
		"OS_AUTH_URL":                      clouds.WithIdentityEndpoint,
		"OS_USERNAME":                      clouds.WithUsername,
		"OS_USER_ID":                       clouds.WithUserID,
		"OS_PASSWORD":                      clouds.WithPassword,
		"OS_PROJECT_NAME":                  clouds.WithProjectName,
		"OS_PROJECT_ID":                    clouds.WithProjectID,
		"OS_REGION_NAME":                   clouds.WithRegion,
		"OS_INTERFACE":                     clouds.WithEndpointType,
		"OS_CACERT":                        clouds.WithCACertPath,
		"OS_CERT":                          clouds.WithClientCertPath,
		"OS_KEY":                           clouds.WithClientKeyPath,
		"OS_TOKEN":                         clouds.WithToken,
		"OS_APPLICATION_CREDENTIAL_ID":     clouds.WithApplicationCredentialID,
		"OS_APPLICATION_CREDENTIAL_NAME":   clouds.WithApplicationCredentialName,
		"OS_APPLICATION_CREDENTIAL_SECRET": clouds.WithApplicationCredentialSecret,
	}
	for _, k := range slices.Sorted(maps.Keys(str)) {
		if v := getenv(k); v != "" {
			opts = append(opts, str[k](v))
		}
	}
	if v := getenv("OS_CLIENT_CONFIG_FILE"); v != "" {
		opts = append(opts, clouds.WithLocations(v))
	}
	if v := getenv("OS_INSECURE"); v != "" {
		b, _ := strconv.ParseBool(v)
		opts = append(opts, clouds.WithInsecure(b))
	} else if cloudsYAMLInsecure(name, getenv) {
		opts = append(opts, clouds.WithInsecure(true))
	}
	return opts
}

func withSlash(u string) string {
	if strings.HasSuffix(u, "/") {
		return u
	}
	return u + "/"
}

// countingTransport counts requests for the sync report and the benchmark.
type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

func (t *countingTransport) CloseIdleConnections() {
	if ci, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// negotiate reads each service's version document and picks the highest
// microversion both sides understand.
func (c *Client) negotiate(ctx context.Context) error {
	// Compute: the endpoint is …/v2.1 (maybe with a project id after it);
	// its own document is GET …/v2.1/.
	base := c.Compute.Endpoint
	if i := strings.Index(base, "/v2.1/"); i >= 0 {
		base = base[:i+len("/v2.1/")]
	}
	var cv struct {
		Version struct {
			Version    string `json:"version"`
			MinVersion string `json:"min_version"`
		} `json:"version"`
	}
	if err := c.rawGet(ctx, c.Compute, "nova", base, &cv); err != nil {
		return err
	}
	if cv.Version.Version == "" && !strings.Contains(base, "/v2.1/") {
		// The service's root lists its versions instead of naming one.
		return fmt.Errorf("nova at %s: the compute URL must end in /v2.1 (%s)", base, base+"v2.1")
	}
	mv, err := pick("nova", cv.Version.MinVersion, cv.Version.Version, computeMin, computeMax)
	if err != nil {
		return err
	}
	c.Compute.Microversion = mv
	c.ComputeMaxVersion = cv.Version.Version
	var pv struct {
		Versions []struct {
			ID         string `json:"id"`
			MaxVersion string `json:"max_version"`
			MinVersion string `json:"min_version"`
		} `json:"versions"`
	}
	if err = c.rawGet(ctx, c.Placement, "placement", c.Placement.Endpoint, &pv); err != nil {
		return err
	}
	if len(pv.Versions) == 0 {
		return fmt.Errorf("placement at %s answered a version document without versions", c.Placement.Endpoint)
	}
	mv, err = pick("placement", pv.Versions[0].MinVersion, pv.Versions[0].MaxVersion, placementMin, placementMax)
	if err != nil {
		return err
	}
	c.Placement.Microversion = mv
	return nil
}

// pick chooses min(server max, ours) and checks it is at least both minima.
func pick(service, srvMin, srvMax, ourMin, ourMax string) (string, error) {
	if srvMax == "" {
		return "", fmt.Errorf("%s offers no microversions; corral needs %s", service, ourMin)
	}
	mv := srvMax
	if lessVersion(ourMax, mv) {
		mv = ourMax
	}
	if lessVersion(mv, ourMin) {
		return "", fmt.Errorf("%s offers microversions up to %s; corral needs %s or later", service, srvMax, ourMin)
	}
	if srvMin != "" && lessVersion(mv, srvMin) {
		return "", fmt.Errorf("%s requires microversion %s or later; corral speaks up to %s", service, srvMin, ourMax)
	}
	return mv, nil
}

func lessVersion(a, b string) bool {
	am, an := splitVersion(a)
	bm, bn := splitVersion(b)
	return am < bm || am == bm && an < bn
}

func splitVersion(v string) (int, int) {
	maj, min, _ := strings.Cut(v, ".")
	x, _ := strconv.Atoi(maj)
	y, _ := strconv.Atoi(min)
	return x, y
}

// rawGet is a GET of an absolute URL (version documents).
func (c *Client) rawGet(ctx context.Context, sc *gophercloud.ServiceClient, service, u string, out any) error {
	_, err := asCaller(ctx, sc).Get(ctx, u, out, &gophercloud.RequestOpts{OkCodes: []int{200}, OmitHeaders: []string{"OpenStack-API-Version", "X-OpenStack-Nova-API-Version"}})
	if err != nil {
		return &ServiceError{Service: service, Method: "GET", Path: u, err: err}
	}
	return nil
}

// ServiceError is one service's unexpected answer; its message is the one
// line the CLI prints ("nova answered 403 to GET /os-aggregates: …").
type ServiceError struct {
	Service, Method, Path string
	err                   error
}

func (e *ServiceError) Error() string {
	status, msg := answerParts(e.err)
	s := fmt.Sprintf("%s answered %s to %s %s", e.Service, status, e.Method, e.Path)
	if msg != "" {
		s += ": " + msg
	}
	return RedactText(s)
}

func (e *ServiceError) Unwrap() error { return e.err }

// Status is the HTTP status the service answered, or 0 when it did not.
func (e *ServiceError) Status() int {
	var ue gophercloud.ErrUnexpectedResponseCode
	if errors.As(e.err, &ue) {
		return ue.Actual
	}
	return 0
}

// answerOf is "403 Forbidden: <the service's message>" or the transport error.
func answerOf(err error) string {
	status, msg := answerParts(err)
	if msg != "" {
		return status + ": " + msg
	}
	return status
}

// answerParts splits an answer into its status ("403 Forbidden", or what
// went wrong on the way) and the service's own message.
func answerParts(err error) (string, string) {
	var ue gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &ue) {
		return fmt.Sprintf("%d %s", ue.Actual, http.StatusText(ue.Actual)), faultMessage(ue.Body)
	}
	if why := tlsProblem(err); why != "" {
		return "nothing", why
	}
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		return "nothing in time", clip(err.Error())
	}
	return "nothing", clip(err.Error())
}

// faultMessage digs the message out of Nova's {"<kind>": {"message"}} or
// Placement's {"errors": [{"detail"}]} fault bodies, on one short line.
func faultMessage(body []byte) string {
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) == nil {
		if raw, ok := doc["errors"]; ok {
			var errs []struct {
				Title, Detail string
			}
			if json.Unmarshal(raw, &errs) == nil && len(errs) > 0 {
				return clip(errs[0].Detail)
			}
		}
		for _, raw := range doc {
			var f struct{ Message string }
			if json.Unmarshal(raw, &f) == nil && f.Message != "" {
				return clip(f.Message)
			}
		}
	}
	return clip(string(bytes.TrimSpace(body)))
}

func clip(s string) string {
	s = RedactText(strings.Join(strings.Fields(s), " "))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func serviceName(sc *gophercloud.ServiceClient) string {
	if sc.Type == "compute" {
		return "nova"
	}
	return "placement"
}

// get reads one JSON document from the service at path (relative to the
// endpoint).
func (c *Client) get(ctx context.Context, sc *gophercloud.ServiceClient, path string, out any) error {
	u := sc.Endpoint + strings.TrimPrefix(path, "/")
	_, err := asCaller(ctx, sc).Get(ctx, u, out, &gophercloud.RequestOpts{OkCodes: []int{200}})
	if err != nil {
		return &ServiceError{Service: serviceName(sc), Method: "GET", Path: "/" + strings.TrimPrefix(path, "/"), err: err}
	}
	return nil
}

// getAt is get at an older microversion than the negotiated one.
func (c *Client) getAt(ctx context.Context, sc *gophercloud.ServiceClient, mv, path string, out any) error {
	older := *sc
	older.Microversion = mv
	return c.get(ctx, &older, path, out)
}

// send makes a write call with a JSON body (nil: none) and reads the
// answer into out (nil: ignored).
func (c *Client) send(ctx context.Context, sc *gophercloud.ServiceClient, method, path string, body, out any, ok ...int) error {
	u := sc.Endpoint + strings.TrimPrefix(path, "/")
	opts := &gophercloud.RequestOpts{JSONBody: body, JSONResponse: out, OkCodes: ok}
	if out == nil {
		opts.KeepResponseBody = false
	}
	resp, err := asCaller(ctx, sc).Request(ctx, method, u, opts)
	if resp != nil && resp.Body != nil && out == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if err != nil {
		return &ServiceError{Service: serviceName(sc), Method: method, Path: "/" + strings.TrimPrefix(path, "/"), err: err}
	}
	return nil
}
