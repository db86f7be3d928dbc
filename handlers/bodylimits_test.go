package handlers_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"corral/handlers"
)

// TestREADMEStatesTheBodyLimits: the README's list of body limits says
// the sizes the routes declare, so an operator reads what is refused.
func TestREADMEStatesTheBodyLimits(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(b)), " ")
	for _, tc := range []struct {
		limit int64
		what  string
	}{
		{handlers.SignInForm, "for the sign-in forms"},
		{handlers.SmallForm, "for other small forms"},
		{handlers.ListForm, "for forms carrying a picker's list"},
		{handlers.NovaJSON, "for Nova calls as Nova"},
		{handlers.PlacementJSON, "for Placement"},
		{handlers.ConsoleJSON, "for `/api`"},
	} {
		if want := humanSize(tc.limit) + " " + tc.what; !strings.Contains(readme, want) {
			t.Errorf("README.md does not say %q: the declared limit is %d bytes", want, tc.limit)
		}
	}
}

// humanSize writes a whole number of MiB or KiB as the README does.
func humanSize(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
