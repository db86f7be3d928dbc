// Package account holds the templ pages about people and access: signing
// in, the dashboard, a user's API tokens, sessions and password, the
// admin's user pages and the audit log. handlers/account fills them in.
package account
