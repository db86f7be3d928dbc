package cloud

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"corral/models"
	"corral/models/scheduling"
)

// DetectNovaRelease is the release the settings should name for a compute
// API whose maximum microversion is mv, given the release they name now:
// that one when it tops out at mv (two releases in a row often share a
// microversion, and an operator who said which one was right), else the
// oldest release at mv. The note says what was found, for the sync's
// warnings; change is false when the settings already agree or mv tells
// nothing (an older Nova than corral models).
func DetectNovaRelease(mv, current string) (release string, change bool, note string) {
	rs := models.NovaReleasesAt(mv)
	if len(rs) == 0 {
		if mv == "" {
			return current, false, ""
		}
		return current, false, fmt.Sprintf("nova's maximum microversion %s is older than the oldest release corral models (Zed, 2.93): nova_release stays %s", mv, current)
	}
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Name
	}
	if cur, ok := models.LookupNovaRelease(current); ok && current != "" && slices.Contains(names, cur.Name) {
		if len(rs) > 1 {
			return cur.Name, false, fmt.Sprintf("nova's maximum microversion %s is that of %s: nova_release keeps %s", mv, strings.Join(names, " and "), cur.Name)
		}
		return cur.Name, false, ""
	}
	note = fmt.Sprintf("nova's maximum microversion %s: nova_release set to %s", mv, rs[0].Name)
	if len(rs) > 1 {
		note += fmt.Sprintf(" (%s share it: set nova_release if the cloud runs a later one)", strings.Join(names, " and "))
	}
	return rs[0].Name, true, note
}

// applyNovaRelease sets nova_release in corral's settings after a sync,
// when the store can apply changes (every store corral runs with can).
func applyNovaRelease(ctx context.Context, st LiveStore, actor models.Actor, release string) error {
	ap, ok := st.(interface {
		Apply(ctx context.Context, a models.Actor, changes []scheduling.Change) (*scheduling.Applied, error)
	})
	if !ok {
		return nil
	}
	o := &scheduling.SettingsOverride{}
	o.Set("nova_release", release)
	_, err := ap.Apply(ctx, actor, []scheduling.Change{{Op: scheduling.OpSetSettings, Settings: o}})
	return err
}
