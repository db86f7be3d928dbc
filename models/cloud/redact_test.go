package cloud_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corral/models/cloud"
	"corral/models/cloud/cloudtest"
)

// A password in a URL flag never reaches an error, a log line, the sync
// record or a page: corral's own messages, the connection's description
// and the transport's errors all leave it out.
func TestCredentialsInURLsAreRedacted(t *testing.T) {
	const pw = "hunter2-secret"
	o := cloud.Options{ComputeURL: "http://ops:" + pw + "@127.0.0.1:1/v2.1", PlacementURL: "http://ops:" + pw + "@127.0.0.1:1/", Token: "t"}
	if d := o.Describe(); strings.Contains(d, pw) || !strings.Contains(d, "ops:xxxxx@127.0.0.1:1") {
		t.Errorf("Describe() = %q", d)
	}
	bad := cloud.Options{ComputeURL: "ftp://ops:" + pw + "@x/v2.1", PlacementURL: "http://p", Token: "t"}
	if err := bad.Validate(); err == nil || strings.Contains(err.Error(), pw) {
		t.Errorf("Validate() = %v", err)
	}
	_, err := cloud.Connect(context.Background(), o)
	if err == nil || strings.Contains(err.Error(), pw) || strings.Contains(cloud.StoredError(err), pw) {
		t.Errorf("Connect() = %v", err)
	}
}

// A cloud's error body that echoes the token is shown and stored without
// it, and bounded.
func TestTokensInCloudErrorsAreRedacted(t *testing.T) {
	const tok = "gAAAAABsecret-fernet-token-value-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"badRequest": {"message": "refused X-Auth-Token: ` + r.Header.Get("X-Auth-Token") + ` ` + strings.Repeat("x", 50000) + `"}}`))
	}))
	defer srv.Close()
	_, err := cloud.Connect(context.Background(), cloud.Options{ComputeURL: srv.URL + "/v2.1", PlacementURL: srv.URL, Token: tok})
	if err == nil {
		t.Fatal("a cloud that refuses everything was accepted")
	}
	if strings.Contains(err.Error(), tok) || strings.Contains(cloud.StoredError(err), tok) {
		t.Errorf("the token is in the error: %.200s", err.Error())
	}
	if n := len(cloud.StoredError(err)); n > 2100 {
		t.Errorf("a stored error holds %d bytes", n)
	}
	if !strings.Contains(err.Error(), "refused X-Auth-Token: xxxxx") {
		t.Errorf("the cloud's message is lost: %.200s", err.Error())
	}
}

// The token of a cloud reached without Keystone may come from OS_TOKEN or
// a file instead of the command line, where every local user reads it.
func TestTokenFromEnvironmentOrFile(t *testing.T) {
	c := cloudtest.Shared(t)
	env := func(k string) string {
		if k == "OS_TOKEN" {
			return cloudtest.Token
		}
		return ""
	}
	o := cloud.Options{ComputeURL: c.ComputeURL, PlacementURL: c.PlacementURL, Getenv: env}
	if err := o.Validate(); err != nil {
		t.Fatalf("with OS_TOKEN: %v", err)
	}
	client, err := cloud.Connect(context.Background(), o)
	if err != nil {
		t.Fatalf("connect with OS_TOKEN: %v", err)
	}
	client.Close()
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(cloudtest.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o = cloud.Options{ComputeURL: c.ComputeURL, PlacementURL: c.PlacementURL, TokenFile: file, Getenv: func(string) string { return "" }}
	client, err = cloud.Connect(context.Background(), o)
	if err != nil {
		t.Fatalf("connect with --token-file: %v", err)
	}
	client.Close()
	o.TokenFile = filepath.Join(t.TempDir(), "missing")
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "token-file") {
		t.Errorf("a missing token file: %v", err)
	}
}
