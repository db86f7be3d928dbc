package layout

import (
	"testing"

	"corral/handlers"
	"corral/views"
)

// The kernel queues flashes by kind name and the views style them by the
// same names; a renamed kind on one side would show unstyled messages.
func TestFlashKindsMatchViews(t *testing.T) {
	for _, k := range [][2]string{
		{handlers.FlashSuccess, views.FlashSuccess},
		{handlers.FlashWarning, views.FlashWarning},
		{handlers.FlashError, views.FlashError},
	} {
		if k[0] != k[1] {
			t.Errorf("handlers flash kind %q, views %q", k[0], k[1])
		}
	}
}
