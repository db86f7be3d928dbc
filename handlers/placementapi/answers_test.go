package placementapi

import (
	"strings"
	"testing"
)

// TestAnswerCache: answers are kept per revision and key, an older
// revision never replaces a newer one, and the bounds hold.
func TestAnswerCache(t *testing.T) {
	var a answerCache
	k := answerKey{minor: 39, query: "member_of=x"}
	if _, ok := a.get(1, k); ok {
		t.Fatal("an empty cache answered")
	}
	body := []byte(`{"resource_providers":[]}`)
	a.put(1, k, newAnswer(body, 7))
	body[0] = 'X' // an answer keeps its own copy
	if ans, ok := a.get(1, k); !ok || string(ans.body) != `{"resource_providers":[]}` ||
		ans.length[0] != "25" || ans.modified[0] != "Thu, 01 Jan 1970 00:00:00 GMT" {
		t.Errorf("get after put: %q %q %q %v", ans.body, ans.length, ans.modified, ok)
	}
	if newAnswer(body, 0).modified != nil {
		t.Error("an answer listing no provider has a Last-Modified of its own")
	}
	if _, ok := a.get(1, answerKey{minor: 14, query: k.query}); ok {
		t.Error("another microversion got the answer")
	}
	if _, ok := a.get(2, k); ok {
		t.Error("a newer revision got the older answer")
	}
	a.put(2, k, newAnswer([]byte("two"), 0))
	a.put(1, k, newAnswer([]byte("late"), 0)) // a slow request of the older revision
	if ans, ok := a.get(2, k); !ok || string(ans.body) != "two" {
		t.Errorf("revision 2: %q %v", ans.body, ok)
	}
	if _, ok := a.get(1, k); ok {
		t.Error("revision 1 came back")
	}
	for i := range 3 * maxCachedAnswers {
		a.put(2, answerKey{minor: 39, query: strings.Repeat("q", i)}, newAnswer([]byte("x"), 0))
		if len(a.m) > maxCachedAnswers || a.bytes > maxCachedBytes {
			t.Fatalf("%d answers, %d bytes: past the bounds", len(a.m), a.bytes)
		}
	}
	big := make([]byte, maxCachedBytes/16+1)
	a.put(2, answerKey{query: "big"}, newAnswer(big, 0))
	if _, ok := a.get(2, answerKey{query: "big"}); ok {
		t.Error("an answer past the size bound was kept")
	}
	a.put(2, answerKey{query: strings.Repeat("q", maxCachedQuery+1)}, newAnswer([]byte("x"), 0))
	if _, ok := a.get(2, answerKey{query: strings.Repeat("q", maxCachedQuery+1)}); ok {
		t.Error("a query past the length bound was kept")
	}
}
