package models

import "testing"

func TestRoleAtLeast(t *testing.T) {
	cases := []struct {
		role, min Role
		want      bool
	}{
		{RoleAdmin, RoleAdmin, true},
		{RoleAdmin, RoleReader, true},
		{RoleMember, RoleAdmin, false},
		{RoleMember, RoleMember, true},
		{RoleReader, RoleMember, false},
		{"", RoleReader, false},
		{"root", RoleReader, false},
	}
	for _, tc := range cases {
		if got := tc.role.AtLeast(tc.min); got != tc.want {
			t.Errorf("Role(%q).AtLeast(%q) = %v", tc.role, tc.min, got)
		}
	}
}

func TestRoleValid(t *testing.T) {
	for _, r := range []Role{RoleAdmin, RoleMember, RoleReader} {
		if !r.Valid() {
			t.Errorf("%q is not valid", r)
		}
	}
	for _, r := range []Role{"", "root", "Admin"} {
		if r.Valid() {
			t.Errorf("%q is valid", r)
		}
	}
}
