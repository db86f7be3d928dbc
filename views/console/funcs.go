package console

import (
	"sort"
	"strings"

	"corral/views"
)

func joinComma(s []string) string { return strings.Join(s, ", ") }

// sortedKV lists a map's entries by key.
func sortedKV(m map[string]string) []KV {
	out := make([]KV, 0, len(m))
	for k, v := range m {
		out = append(out, KV{Key: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// memberSummary is "3 providers, 2 hosts." (hosts < 0: not all inspected).
func memberSummary(total, hosts int) string {
	s := views.Plural(total, "provider", "providers")
	if hosts >= 0 {
		s += ", " + views.Plural(hosts, "host", "hosts")
	}
	return s + "."
}
