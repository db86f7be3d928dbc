package account

import "strconv"

// HostMapProps is the dashboard's host × aggregate map: one page of hosts
// against the aggregates they are in.
type HostMapProps struct {
	Columns []MapColumn
	Rows    []MapRow
	Zones   []MapZone // the legend's zones, with their colour classes
	// MoreAggregates counts aggregates of these hosts left out of the
	// columns; a row's Hidden counts its own.
	MoreAggregates         int
	Offset, Total, PerPage int
}

// MapColumn is one aggregate: what it does to its hosts (Kind, in words)
// and the colour class of its cells.
type MapColumn struct {
	UUID, Name, Zone, Kind, Class string
}

// MapRow is one host: whether it is in each column's aggregate.
type MapRow struct {
	Host, ProviderUUID string
	Cells              []bool
	Hidden             int
}

// MapZone is a zone of the legend.
type MapZone struct{ Name, Class string }

func (m HostMapProps) pageLink(offset int) string {
	return "/?hosts=" + strconv.Itoa(offset) + "#host-map"
}

func (m HostMapProps) hasPrev() bool { return m.Offset > 0 }
func (m HostMapProps) hasNext() bool { return m.Offset+m.PerPage < m.Total }

func (m HostMapProps) rangeText() string {
	if m.Total == 0 {
		return "No hosts."
	}
	return "Hosts " + strconv.Itoa(m.Offset+1) + "–" + strconv.Itoa(m.Offset+len(m.Rows)) + " of " + strconv.Itoa(m.Total) + "."
}
