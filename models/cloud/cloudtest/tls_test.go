package cloudtest_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
	"corral/models/store"
	"corral/models/store/storetest"
)

// testCA is a certificate authority made for one test; its certificate is
// written to a file, as an operator's CA bundle is.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string
}

func newTestCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err)
	cert, err := x509.ParseCertificate(der)
	must(t, err)
	file := filepath.Join(dir, name+".pem")
	must(t, os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	return &testCA{cert: cert, key: key, file: file}
}

// serverCert is a certificate for 127.0.0.1 signed by the CA.
func (ca *testCA) serverCert(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	must(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// tlsProxy terminates TLS in front of the real services, as a cloud's
// load balancer does: /identity/… goes to Keystone, /compute/… to
// nova-api, /placement/… to Placement. It counts what it forwards.
type tlsProxy struct {
	URL        string
	forwarded  map[string]*atomic.Int64
	srv        *httptest.Server
	identity   string // …/identity/v3
	compute    string // …/compute/v2.1
	placementU string
}

func startTLSProxy(t *testing.T, ca *testCA, c *cloudtest.Cloud) *tlsProxy {
	t.Helper()
	origin := func(raw string) *url.URL {
		u, err := url.Parse(raw)
		must(t, err)
		return &url.URL{Scheme: u.Scheme, Host: u.Host}
	}
	routes := map[string]*url.URL{"identity": origin(c.KeystoneURL), "compute": origin(c.ComputeURL), "placement": origin(c.PlacementURL)}
	p := &tlsProxy{forwarded: map[string]*atomic.Int64{}}
	for name := range routes {
		p.forwarded[name] = &atomic.Int64{}
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		name, rest, _ := strings.Cut(strings.TrimPrefix(r.In.URL.Path, "/"), "/")
		to := routes[name]
		if to == nil {
			to = routes["identity"] // answers 404 to a path it does not know
		}
		p.forwarded[name].Add(1)
		r.SetURL(to)
		r.Out.URL.Path, r.Out.URL.RawPath = "/"+rest, ""
	}}
	p.srv = httptest.NewUnstartedServer(rp)
	p.srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.serverCert(t)}}
	p.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refusals below are expected
	p.srv.StartTLS()
	t.Cleanup(p.srv.Close)
	p.URL = p.srv.URL
	p.identity = p.URL + "/identity" + strings.TrimPrefix(c.KeystoneURL, origin(c.KeystoneURL).String())
	p.compute = p.URL + "/compute" + strings.TrimPrefix(c.ComputeURL, origin(c.ComputeURL).String())
	p.placementU = p.URL + "/placement"
	return p
}

// registerRegion puts the proxy's compute and Placement endpoints into
// Keystone's catalog as their own region, so that nova keeps reaching
// Placement directly in RegionOne.
func registerRegion(t *testing.T, c *cloudtest.Cloud, region string, p *tlsProxy) {
	t.Helper()
	must(t, c.CallKeystone("POST", "regions", map[string]any{"region": map[string]any{"id": region}}, nil, 201))
	for kind, u := range map[string]string{"compute": p.compute, "placement": p.placementU} {
		var svc struct {
			Services []struct {
				ID string `json:"id"`
			} `json:"services"`
		}
		must(t, c.CallKeystone("GET", "services?type="+kind, nil, &svc, 200))
		if len(svc.Services) != 1 {
			t.Fatalf("keystone has %d %s services", len(svc.Services), kind)
		}
		must(t, c.CallKeystone("POST", "endpoints", map[string]any{"endpoint": map[string]any{
			"service_id": svc.Services[0].ID, "interface": "public", "url": u, "region_id": region}}, nil, 201))
	}
}

// syncOverTLS is TestKeystoneSync's TLS part: Keystone, nova-api and
// Placement behind a TLS proxy, reached with the CA file clouds.yaml
// names, with `insecure: true`, and refused in one line when the CA file
// holds another authority.
func syncOverTLS(t *testing.T, c *cloudtest.Cloud, dir string, wantAggregate string) {
	ca := newTestCA(t, dir, "corral-test-ca")
	other := newTestCA(t, dir, "another-ca")
	p := startTLSProxy(t, ca, c)
	registerRegion(t, c, "RegionTLS", p)
	entry := func(name, extra string) string {
		return fmt.Sprintf(`  %s:
    auth:
      auth_url: %s
      username: admin
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionTLS
    interface: public
%s`, name, p.identity, extra)
	}
	yaml := "clouds:\n" + entry("tls-cacert", "    cacert: "+ca.file+"\n") +
		entry("tls-insecure", "    insecure: true\n") +
		entry("tls-other-ca", "    cacert: "+other.file+"\n") +
		entry("tls-none", "")
	file := filepath.Join(dir, "clouds-tls.yaml")
	must(t, os.WriteFile(file, []byte(yaml), 0o600))
	env := func(k string) string {
		switch k {
		case "OS_CLIENT_CONFIG_FILE":
			return file
		case "OS_PASSWORD":
			return c.AdminPassword
		}
		return ""
	}
	ctx := context.Background()
	for _, name := range []string{"tls-cacert", "tls-insecure"} {
		t.Run(name, func(t *testing.T) {
			before := p.forwarded["placement"].Load() + p.forwarded["compute"].Load()
			cl, err := cloud.Connect(ctx, cloud.Options{Cloud: name, Getenv: env})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if !strings.HasPrefix(cl.Placement.Endpoint, "https://") || !strings.HasPrefix(cl.Compute.Endpoint, "https://") {
				t.Fatalf("endpoints %s %s, want the proxy's", cl.Compute.Endpoint, cl.Placement.Endpoint)
			}
			st := storetest.Open(t)
			if _, err := cloud.Sync(ctx, st, cl, store.Actor{Name: "t", Via: "cli"}, cloud.SyncOptions{Connection: name}); err != nil {
				t.Fatal(err)
			}
			w, err := st.ExportWorld(ctx)
			must(t, err)
			if len(w.Aggregates) != 1 || w.Aggregates[0].UUID != wantAggregate {
				t.Errorf("aggregates over TLS: %+v", w.Aggregates)
			}
			if after := p.forwarded["placement"].Load() + p.forwarded["compute"].Load(); after-before < 10 {
				t.Errorf("the proxy forwarded %d requests to nova and Placement", after-before)
			}
		})
	}
	for _, name := range []string{"tls-other-ca", "tls-none"} {
		_, err := cloud.Connect(ctx, cloud.Options{Cloud: name, Getenv: env})
		want := "keystone " + p.identity + " of cloud " + name + ": its TLS certificate is signed by an authority corral does not trust: give the CA that signed it as cacert in clouds.yaml (or OS_CACERT)"
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", name, err, want)
		}
	}
}
