package compute

import (
	"testing"
)

// Any body, at any version, is either accepted as a valid spec or refused
// with a 400 — never a panic or another status.
func FuzzParseServerGroupCreate(f *testing.F) {
	for _, s := range []string{
		`{"server_group":{"name":"g","policy":"anti-affinity","rules":{"max_server_per_host":"3"}}}`,
		`{"server_group":{"name":"g","policies":["soft-affinity"]}}`,
		`{"server_group":{"name":" g","policy":"x","rules":{"max_server_per_host":1e400}}}`,
		`{"server_group":{"name":"\u2028","policies":[null,{},[]]}}`,
		`[{"a":1}]`, `null`, `"x"`, `{`,
	} {
		for _, minor := range []int{1, 15, 64} {
			f.Add(s, minor)
		}
	}
	f.Fuzz(func(t *testing.T, body string, minor int) {
		v := Version{2, 1 + (minor%104+104)%104}
		spec, faultErr := ParseServerGroupCreate(v, []byte(body))
		fault := faultOf(faultErr)
		if fault != nil {
			if fault.Status != 400 || fault.Message == "" {
				t.Fatalf("fault %d %q", fault.Status, fault.Message)
			}
			return
		}
		if spec.Name == "" || !isName(spec.Name) {
			t.Fatalf("accepted bad name %q", spec.Name)
		}
		if n, ok := spec.Rules["max_server_per_host"]; ok && (n < 1 || spec.Policy != "anti-affinity") {
			t.Fatalf("accepted rules %v with %s", spec.Rules, spec.Policy)
		}
	})
}
