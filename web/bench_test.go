package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"corral/models/store"
)

// BenchmarkTokenWhoAmI measures the per-request cost of the middleware
// chain for a token-authenticated JSON call: request id, logging, headers,
// token lookup, CSRF skip, handler.
func BenchmarkTokenWhoAmI(b *testing.B) {
	a := newApp(b)
	plain, _, err := a.Store.CreateToken(context.Background(), store.Actor{Name: "bench"}, "alice", "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest(http.MethodGet, "/api/whoami", nil)
			req.Header.Set("X-Auth-Token", plain)
			rec := httptest.NewRecorder()
			a.Echo.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("status %d", rec.Code)
			}
		}
	})
}

// BenchmarkSessionWhoAmI is BenchmarkTokenWhoAmI for a console session:
// cookie decoding plus the one indexed lookup of the session and its user.
func BenchmarkSessionWhoAmI(b *testing.B) {
	a := newApp(b)
	c := a.Client(b)
	login(c, "alice")
	ck := c.Cookie("corral_session")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest(http.MethodGet, "/api/whoami", nil)
			req.AddCookie(ck)
			rec := httptest.NewRecorder()
			a.Echo.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("status %d", rec.Code)
			}
		}
	})
}
