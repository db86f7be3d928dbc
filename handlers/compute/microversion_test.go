package compute

import (
	"net/http"
	"testing"

	"corral/models"
)

func TestNegotiate(t *testing.T) {
	tests := []struct {
		name    string
		headers map[string][]string
		want    Version
		kind    models.Kind // 0 with wantErr=false: success
		wantErr bool
		msg     string
	}{
		{name: "no header is the minimum", want: Version{2, 1}},
		{name: "standard header", headers: map[string][]string{"OpenStack-API-Version": {"compute 2.64"}}, want: Version{2, 64}},
		{name: "service name case-insensitive", headers: map[string][]string{"OpenStack-API-Version": {"COMPUTE 2.15"}}, want: Version{2, 15}},
		{name: "legacy header", headers: map[string][]string{"X-OpenStack-Nova-API-Version": {"2.13"}}, want: Version{2, 13}},
		{name: "standard wins over legacy", headers: map[string][]string{"OpenStack-API-Version": {"compute 2.20"}, "X-OpenStack-Nova-API-Version": {"2.5"}}, want: Version{2, 20}},
		{name: "other service falls back to legacy", headers: map[string][]string{"OpenStack-API-Version": {"placement 1.2"}, "X-OpenStack-Nova-API-Version": {"2.5"}}, want: Version{2, 5}},
		{name: "other service only", headers: map[string][]string{"OpenStack-API-Version": {"placement 1.2"}}, want: Version{2, 1}},
		{name: "comma folded, last compute wins", headers: map[string][]string{"OpenStack-API-Version": {"compute 2.3, placement 1.2", "compute 2.7"}}, want: Version{2, 7}},
		{name: "latest", headers: map[string][]string{"OpenStack-API-Version": {"compute latest"}}, want: Version{2, 104}},
		{name: "legacy latest", headers: map[string][]string{"X-OpenStack-Nova-API-Version": {"latest"}}, want: Version{2, 104}},
		{name: "maximum", headers: map[string][]string{"OpenStack-API-Version": {"compute 2.104"}}, want: Version{2, 104}},
		{name: "Latest is malformed", headers: map[string][]string{"OpenStack-API-Version": {"compute Latest"}}, wantErr: true, kind: models.Invalid,
			msg: "API Version String Latest is of invalid format. Must be of format MajorNum.MinorNum."},
		{name: "letters", headers: map[string][]string{"OpenStack-API-Version": {"compute 2.a"}}, wantErr: true, kind: models.Invalid,
			msg: "API Version String 2.a is of invalid format. Must be of format MajorNum.MinorNum."},
		{name: "leading zero minor", headers: map[string][]string{"OpenStack-API-Version": {"compute 2.064"}}, wantErr: true, kind: models.Invalid,
			msg: "API Version String 2.064 is of invalid format. Must be of format MajorNum.MinorNum."},
		{name: "above maximum", headers: map[string][]string{"OpenStack-API-Version": {"compute 2.105"}}, want: Version{2, 105}, wantErr: true, kind: models.NotAcceptable,
			msg: "Version 2.105 is not supported by the API. Minimum is 2.1 and maximum is 2.104."},
		{name: "2.0", headers: map[string][]string{"OpenStack-API-Version": {"compute 2.0"}}, want: Version{2, 0}, wantErr: true, kind: models.NotAcceptable,
			msg: "Version 2.0 is not supported by the API. Minimum is 2.1 and maximum is 2.104."},
		{name: "3.0 legacy", headers: map[string][]string{"X-OpenStack-Nova-API-Version": {"3.0"}}, want: Version{3, 0}, wantErr: true, kind: models.NotAcceptable,
			msg: "Version 3.0 is not supported by the API. Minimum is 2.1 and maximum is 2.104."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, vs := range tt.headers {
				for _, v := range vs {
					h.Add(k, v)
				}
			}
			got, err := Negotiate(h)
			if got != tt.want {
				t.Errorf("version = %v, want %v", got, tt.want)
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				if k := models.KindOf(err); k != tt.kind {
					t.Errorf("kind = %v, want %v", k, tt.kind)
				}
				if f := asFault(err); f.Message != tt.msg {
					t.Errorf("message = %q, want %q", f.Message, tt.msg)
				}
			}
		})
	}
}

func TestSetVersionHeaders(t *testing.T) {
	h := http.Header{}
	SetVersionHeaders(h, Version{2, 64})
	SetVersionHeaders(h, Version{2, 64}) // idempotent: no duplicate Vary
	if got := h.Get("OpenStack-API-Version"); got != "compute 2.64" {
		t.Errorf("OpenStack-API-Version = %q", got)
	}
	if got := h.Get("X-OpenStack-Nova-API-Version"); got != "2.64" {
		t.Errorf("X-OpenStack-Nova-API-Version = %q", got)
	}
	vary := h.Values("Vary")
	if len(vary) != 2 || vary[0] != "OpenStack-API-Version" || vary[1] != "X-OpenStack-Nova-API-Version" {
		t.Errorf("Vary = %q", vary)
	}
	z := http.Header{}
	SetVersionHeaders(z, Version{})
	if z.Get("OpenStack-API-Version") != "" || len(z.Values("Vary")) != 2 {
		t.Errorf("zero version headers = %v", z)
	}
}

func TestVersionOrder(t *testing.T) {
	if !(Version{2, 9}).Less(Version{2, 10}) || (Version{2, 10}).Less(Version{2, 9}) {
		t.Error("minor versions must compare numerically")
	}
	if !(Version{2, 64}).AtLeast(2, 64) || (Version{2, 63}).AtLeast(2, 64) || !(Version{3, 0}).AtLeast(2, 99) {
		t.Error("AtLeast boundary wrong")
	}
}
