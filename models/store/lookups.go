package store

import (
	"context"
	"slices"
	"strconv"

	"gorm.io/gorm"

	"corral/models"
)

// Batch lookups for pages that show many providers at once: one query per
// page instead of one (or two) per provider.

// lookupChunk bounds the uuids bound into one IN list, well under the
// databases' bind-variable limits.
const lookupChunk = 500

// AggregatesOfProviders returns, for each provider in provUUIDs, the uuids
// of the aggregates it is directly in (sorted). Providers in none, and
// unknown uuids, are absent from the map.
func (s *Store) AggregatesOfProviders(ctx context.Context, provUUIDs []string) (map[string][]string, error) {
	out := make(map[string][]string, len(provUUIDs))
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		for rest := uniqueSorted(provUUIDs); len(rest) > 0; {
			n := min(len(rest), lookupChunk)
			var rows []models.AggregateMember
			if err := tx.Where("provider_uuid IN ?", rest[:n]).Order("provider_uuid, aggregate_uuid").Find(&rows).Error; err != nil {
				return err
			}
			for _, r := range rows {
				out[r.ProviderUUID] = append(out[r.ProviderUUID], r.AggregateUUID)
			}
			rest = rest[n:]
		}
		return nil
	})
	if err != nil {
		return nil, mapErr("store.AggregatesOfProviders", err)
	}
	return out, nil
}

// ProvidersByUUID loads the providers in uuids; unknown uuids are absent
// from the map.
func (s *Store) ProvidersByUUID(ctx context.Context, uuids []string) (map[string]models.Provider, error) {
	out := make(map[string]models.Provider, len(uuids))
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		for rest := uniqueSorted(uuids); len(rest) > 0; {
			n := min(len(rest), lookupChunk)
			var ps []models.Provider
			if err := tx.Where("uuid IN ?", rest[:n]).Find(&ps).Error; err != nil {
				return err
			}
			for _, p := range ps {
				normaliseProvider(&p)
				out[p.UUID] = p
			}
			rest = rest[n:]
		}
		return nil
	})
	if err != nil {
		return nil, mapErr("store.ProvidersByUUID", err)
	}
	return out, nil
}

// AggregateNames returns the names of the aggregates in aggUUIDs without
// loading their members; unknown uuids are absent from the map.
func (s *Store) AggregateNames(ctx context.Context, aggUUIDs []string) (map[string]string, error) {
	out := make(map[string]string, len(aggUUIDs))
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		for rest := uniqueSorted(aggUUIDs); len(rest) > 0; {
			n := min(len(rest), lookupChunk)
			var rows []struct{ UUID, Name string }
			if err := tx.Model(&models.Aggregate{}).Select("uuid, name").Where("uuid IN ?", rest[:n]).Scan(&rows).Error; err != nil {
				return err
			}
			for _, r := range rows {
				out[r.UUID] = r.Name
			}
			rest = rest[n:]
		}
		return nil
	})
	if err != nil {
		return nil, mapErr("store.AggregateNames", err)
	}
	return out, nil
}

// ProviderRef names a provider.
type ProviderRef struct {
	UUID, Name string
}

// SharedHosts is what HostsSharingWith finds for one provider: the first
// hosts in name order, and how many there are in all.
type SharedHosts struct {
	Hosts []ProviderRef
	Total int
}

// HostsSharingWith finds, for each provider in provUUIDs, the hosts
// (non-sharing roots) that share at least one aggregate with it — for a
// sharing provider, the trees it serves. Each answer lists at most limit
// hosts (limit <= 0: all) in name order, with the total. One query serves
// the whole list; providers sharing with no host are absent from the map.
func (s *Store) HostsSharingWith(ctx context.Context, provUUIDs []string, limit int) (map[string]SharedHosts, error) {
	out := map[string]SharedHosts{}
	// The peers are few; the roots are many. SQLite's planner would walk
	// every root through the parent_uuid index and test each against the
	// peers (tens of ms per provider on a 100,000-provider cloud); the
	// unary plus keeps it off that index, so it looks the peers up by uuid.
	root := "p.parent_uuid IS NULL"
	if !s.postgres {
		root = "+p.parent_uuid IS NULL"
	}
	keep := ""
	if limit > 0 {
		keep = "WHERE rn <= " + strconv.Itoa(limit)
	}
	// Distinct pairs first (a host may share several aggregates with the
	// provider), then ranked per provider so that only the first limit of
	// each leave the database.
	query := `SELECT of_uuid, uuid, name, n FROM (
		SELECT of_uuid, uuid, name,
			ROW_NUMBER() OVER (PARTITION BY of_uuid ORDER BY name) AS rn,
			COUNT(*) OVER (PARTITION BY of_uuid) AS n
		FROM (
			SELECT DISTINCT mine.provider_uuid AS of_uuid, p.uuid AS uuid, p.name AS name
			FROM aggregate_members AS mine
			JOIN aggregate_members AS peer ON peer.aggregate_uuid = mine.aggregate_uuid
			JOIN providers AS p ON p.uuid = peer.provider_uuid
			WHERE mine.provider_uuid IN ? AND p.uuid <> mine.provider_uuid AND ` + root + ` AND NOT ` + s.sharingCond() + `
		) AS pairs
	) AS ranked ` + keep + ` ORDER BY of_uuid, rn`
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		for rest := uniqueSorted(provUUIDs); len(rest) > 0; {
			n := min(len(rest), lookupChunk)
			var rows []struct {
				OfUUID, UUID, Name string
				N                  int
			}
			if err := tx.Raw(query, rest[:n]).Scan(&rows).Error; err != nil {
				return err
			}
			for _, r := range rows {
				sh := out[r.OfUUID]
				sh.Hosts = append(sh.Hosts, ProviderRef{UUID: r.UUID, Name: r.Name})
				sh.Total = r.N
				out[r.OfUUID] = sh
			}
			rest = rest[n:]
		}
		return nil
	})
	if err != nil {
		return nil, mapErr("store.HostsSharingWith", err)
	}
	return out, nil
}

func uniqueSorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}
