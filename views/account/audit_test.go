package account

import (
	"reflect"
	"testing"
)

func TestChanges(t *testing.T) {
	cases := []struct {
		name          string
		before, after string
		want          []Change
	}{
		{"created", ``, `{"name":"a","n":1}`, []Change{{Key: "n", After: "1"}, {Key: "name", After: "a"}}},
		{"deleted", `{"name":"a"}`, `null`, []Change{{Key: "name", Before: "a"}}},
		{"one field changed", `{"name":"a","meta":{"k":"v"}}`, `{"name":"a","meta":{"k":"w"}}`, []Change{{Key: "meta", Before: `{"k":"v"}`, After: `{"k":"w"}`}}},
		{"unchanged", `{"a":1}`, `{"a":1}`, nil},
		{"not JSON objects", `[1]`, `[2]`, []Change{{Before: "[1]", After: "[2]"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Changes(tc.before, tc.after); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Changes(%s, %s) = %+v, want %+v", tc.before, tc.after, got, tc.want)
			}
		})
	}
}
