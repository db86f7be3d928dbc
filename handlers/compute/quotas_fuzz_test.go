package compute

import (
	"testing"
)

// Any quota-set body, at any version, is either accepted with limits in
// -1 … MAX_INT on the two enforced resources only, or refused with a 400.
func FuzzParseQuotaSetUpdate(f *testing.F) {
	for _, s := range []string{
		`{"quota_set":{"server_groups":"3","server_group_members":-1,"force":"yes"}}`,
		`{"quota_set":{"cores":-1,"floating_ips":"7"}}`,
		`{"quota_set":{"server_groups":"-0","injected_files":"0010"}}`,
		`{"quota_set":{"server_groups":1e400,"force":1}}`,
		`{"quota_set":{"server_groups":"99999999999999999999"}}`,
		`{"quota_set":[]}`, `[{"a":1}]`, `null`, `"x"`, `{`,
	} {
		for _, minor := range []int{1, 36, 57} {
			f.Add(s, minor)
		}
	}
	f.Fuzz(func(t *testing.T, body string, minor int) {
		v := Version{2, 1 + (minor%104+104)%104}
		u, faultErr := ParseQuotaSetUpdate(v, []byte(body))
		fault := faultOf(faultErr)
		if fault != nil {
			if fault.Status != 400 || fault.Message == "" {
				t.Fatalf("fault %d %q", fault.Status, fault.Message)
			}
			return
		}
		for r, n := range u.Set {
			if !QuotaTracked(r) || n < -1 || n > 1<<31-1 {
				t.Fatalf("accepted %s=%d", r, n)
			}
		}
		if f := faultOf(u.Refusal()); f != nil && (f.Status != 400 || QuotaTracked(u.Untracked)) {
			t.Fatalf("refusal %d for %q", f.Status, u.Untracked)
		}
	})
}
