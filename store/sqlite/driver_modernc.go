//go:build !sqlite_cgo

package sqlite

import (
	"database/sql"
	"errors"

	msqlite "modernc.org/sqlite" // registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// This file is the default SQLite driver: modernc.org/sqlite, pure Go, no
// cgo. driver_cgo.go (build tag sqlite_cgo) is the alternative; the two
// define the same names.

// driverName names the SQLite library in logs and docs.
const driverName = "modernc.org/sqlite"

// openDB opens a database/sql handle on dsn: a path or file: URI whose
// query holds modernc's connection parameters, which this driver applies
// itself: _pragma=name(value) (run on every new connection, in order),
// _txlock=immediate (every transaction BEGIN IMMEDIATE), and SQLite URI
// parameters such as mode=ro and immutable=1 (file: URIs only).
func openDB(dsn string) (*sql.DB, error) {
	return sql.Open("sqlite", dsn)
}

// Extended result codes isConstraint tells apart.
const (
	errConstraintPrimaryKey = sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	errConstraintUnique     = sqlite3.SQLITE_CONSTRAINT_UNIQUE
)

// isConstraint reports whether err is SQLite's extended result code code.
func isConstraint(err error, code int) bool {
	var e *msqlite.Error
	return errors.As(err, &e) && e.Code() == code
}
