package store

// ExecRaw runs one statement on the write connection and maps its error the
// way every store method does, so tests can hit the database's own checks.
func (s *Store) ExecRaw(sql string, args ...any) error {
	return mapErr("test", s.db.Exec(sql, args...).Error)
}
