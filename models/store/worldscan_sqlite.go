package store

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"
	"gorm.io/gorm"

	"corral/models"
)

// On SQLite, reading a column costs two or three calls into C; at 100,000
// providers of ten columns that was most of the world's load. The large
// tables are therefore read as one text value per row (fields joined by
// a separator) or, for memberships, one per aggregate. A value that holds
// the separator itself, or a time the parser below does not read as the
// driver would, makes these readers say errSlowScan, and the world is read
// column by column as before.

var errSlowScan = errors.New("read column by column")

// fieldSep joins a row's fields; nothing corral stores contains it in
// practice, and a row where it appears is detected by its field count.
const fieldSep = "\x1f"

// scanProvidersJoined reads every provider in name order, as scanProviders.
func scanProvidersJoined(tx *gorm.DB) ([]models.Provider, error) {
	var n int64
	if err := tx.Model(&models.Provider{}).Count(&n).Error; err != nil {
		return nil, err
	}
	const sep = "|| char(31) ||"
	rows, err := tx.Raw(`SELECT uuid ` + sep + ` name ` + sep + ` ifnull('+' || parent_uuid, '') ` + sep +
		` ifnull(root_uuid, '') ` + sep + ` ifnull(traits, '') ` + sep + ` ifnull(inventories, '') ` + sep +
		` ifnull(usages, '') ` + sep + ` generation ` + sep + ` ifnull(created_at, '') ` + sep + ` ifnull(updated_at, '') ` + sep +
		` ifnull(compute, '')
		FROM providers ORDER BY name`).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]models.Provider, 0, n)
	var f [11]string
	var memo columnMemo
	for rows.Next() {
		var line string
		if err = rows.Scan(&line); err != nil {
			return nil, err
		}
		if !splitFields(line, f[:]) {
			return nil, errSlowScan
		}
		p := models.Provider{UUID: f[0], Name: f[1], RootUUID: f[3]}
		if f[2] != "" {
			v := f[2][1:]
			p.ParentUUID = &v
		}
		var ok bool
		if p.Traits, err = memo.traitsOf(f[4]); err != nil {
			return nil, fmt.Errorf("provider %s traits: %w", p.Name, err)
		}
		if p.Inventories, err = memo.inventoriesOf(f[5]); err != nil {
			return nil, fmt.Errorf("provider %s inventories: %w", p.Name, err)
		}
		if p.Usages, err = memo.usagesOf(f[6]); err != nil {
			return nil, fmt.Errorf("provider %s usages: %w", p.Name, err)
		}
		if p.Generation, err = strconv.ParseInt(f[7], 10, 64); err != nil {
			return nil, errSlowScan
		}
		if p.CreatedAt, ok = sqliteTime(f[8]); !ok {
			return nil, errSlowScan
		}
		if p.UpdatedAt, ok = sqliteTime(f[9]); !ok {
			return nil, errSlowScan
		}
		if err = decodeJSONColumn([]byte(f[10]), &p.Compute); err != nil {
			return nil, fmt.Errorf("provider %s compute service: %w", p.Name, err)
		}
		normaliseProvider(&p)
		out = append(out, p)
	}
	return out, rows.Err()
}

// scanServersJoined reads every server, as scanServers.
func scanServersJoined(tx *gorm.DB) ([]models.Server, error) {
	var n int64
	if err := tx.Model(&models.Server{}).Count(&n).Error; err != nil {
		return nil, err
	}
	const sep = "|| char(31) ||"
	rows, err := tx.Raw(`SELECT uuid ` + sep + ` ifnull(name, '') ` + sep + ` ifnull(project_id, '') ` + sep +
		` ifnull(user_id, '') ` + sep + ` ifnull(host, '') ` + sep + ` created_at ` + sep + ` updated_at
		FROM servers ORDER BY name, uuid`).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]models.Server, 0, n)
	var f [7]string
	for rows.Next() {
		var line *string // NULL when a time is NULL: the column scan decides
		if err := rows.Scan(&line); err != nil {
			return nil, err
		}
		if line == nil || !splitFields(*line, f[:]) {
			return nil, errSlowScan
		}
		v := models.Server{UUID: f[0], Name: f[1], ProjectID: f[2], UserID: f[3], Host: f[4]}
		var ok bool
		if v.CreatedAt, ok = sqliteTime(f[5]); !ok {
			return nil, errSlowScan
		}
		if v.UpdatedAt, ok = sqliteTime(f[6]); !ok {
			return nil, errSlowScan
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// scanMembersGrouped reads the aggregates' members, one row per aggregate,
// and hands each aggregate's list to add, sorted as the column scan orders
// it.
func scanMembersGrouped(tx *gorm.DB, add func(agg string, providers []string)) error {
	var want int64
	if err := tx.Model(&models.AggregateMember{}).Count(&want).Error; err != nil {
		return err
	}
	rows, err := tx.Raw(`SELECT aggregate_uuid, group_concat(provider_uuid, char(31)) FROM aggregate_members GROUP BY aggregate_uuid`).Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	type group struct {
		agg     string
		members []string
	}
	var groups []group
	got := int64(0)
	for rows.Next() {
		var agg, list string
		if err := rows.Scan(&agg, &list); err != nil {
			return err
		}
		members := strings.Split(list, fieldSep)
		slices.Sort(members)
		groups = append(groups, group{agg, members})
		got += int64(len(members))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if got != want {
		return errSlowScan // a uuid held the separator
	}
	for _, g := range groups {
		add(g.agg, g.members)
	}
	return nil
}

// splitFields splits line into exactly len(f) fields.
func splitFields(line string, f []string) bool {
	for i := range f {
		if i == len(f)-1 {
			f[i] = line
			return !strings.Contains(line, fieldSep)
		}
		j := strings.Index(line, fieldSep)
		if j < 0 {
			return false
		}
		f[i], line = line[:j], line[j+1:]
	}
	return true
}

// sqliteTime reads a time column's text as the driver does; false when
// the driver would have read something else (a number, an odd format).
func sqliteTime(s string) (time.Time, bool) {
	if t, ok := utcTime(s); ok {
		return t, true
	}
	s = strings.TrimSuffix(s, "Z")
	for _, format := range sqlite3.SQLiteTimestampFormats {
		if t, err := time.ParseInLocation(format, s, time.UTC); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// utcTime reads "2006-01-02 15:04:05[.fraction][+00:00]", what the driver
// writes for corral's UTC times, without the general parser: a provider
// has two of them. Anything else is false.
func utcTime(s string) (time.Time, bool) {
	s = strings.TrimSuffix(s, "+00:00")
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	num := func(from, to int) (int, bool) {
		n := 0
		for i := from; i < to; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 7)
	day, ok3 := num(8, 10)
	hour, ok4 := num(11, 13)
	minute, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	nsec := 0
	if rest := s[19:]; rest != "" {
		if rest[0] != '.' || len(rest) < 2 || len(rest) > 10 {
			return time.Time{}, false
		}
		frac, ok := num(20, len(s))
		if !ok {
			return time.Time{}, false
		}
		for range 10 - len(rest) {
			frac *= 10
		}
		nsec = frac
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	if t.Day() != day { // 31 April and the like: the parser refuses them
		return time.Time{}, false
	}
	return t, true
}

// columnMemo decodes JSON columns, remembering recent texts: most
// providers of a large cloud share a handful of inventories and usages.
// Each caller gets its own copy of a remembered value.
type columnMemo struct {
	traits map[string][]string
	invs   map[string]map[string]models.Inventory
	usages map[string]map[string]int64
}

const maxMemo = 4096

func (m *columnMemo) traitsOf(s string) ([]string, error) {
	if v, ok := m.traits[s]; ok {
		return slices.Clone(v), nil
	}
	var v []string
	if err := decodeJSONColumn([]byte(s), &v); err != nil {
		return nil, err
	}
	if m.traits == nil {
		m.traits = map[string][]string{}
	}
	if len(m.traits) < maxMemo {
		m.traits[s] = v
	}
	return slices.Clone(v), nil
}

func (m *columnMemo) inventoriesOf(s string) (map[string]models.Inventory, error) {
	if v, ok := m.invs[s]; ok {
		return maps.Clone(v), nil
	}
	var v map[string]models.Inventory
	if err := decodeJSONColumn([]byte(s), &v); err != nil {
		return nil, err
	}
	if m.invs == nil {
		m.invs = map[string]map[string]models.Inventory{}
	}
	if len(m.invs) < maxMemo {
		m.invs[s] = v
	}
	return maps.Clone(v), nil
}

func (m *columnMemo) usagesOf(s string) (map[string]int64, error) {
	if v, ok := m.usages[s]; ok {
		return maps.Clone(v), nil
	}
	var v map[string]int64
	if err := decodeJSONColumn([]byte(s), &v); err != nil {
		return nil, err
	}
	if m.usages == nil {
		m.usages = map[string]map[string]int64{}
	}
	if len(m.usages) < maxMemo {
		m.usages[s] = v
	}
	return maps.Clone(v), nil
}
