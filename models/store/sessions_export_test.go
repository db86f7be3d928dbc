package store

// SessionRows returns every column of every sessions row as the database
// holds it, for tests that check what is (not) stored.
func (s *Store) SessionRows() ([]map[string]any, error) {
	var rows []map[string]any
	err := s.rdb.Raw("SELECT * FROM sessions ORDER BY id").Scan(&rows).Error
	return rows, err
}
