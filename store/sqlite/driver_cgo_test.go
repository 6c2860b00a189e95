//go:build sqlite_cgo

package sqlite_test

// The tests open database files directly with database/sql's "sqlite"
// driver to inspect and tamper with them. Under sqlite_cgo the store no
// longer links modernc.org/sqlite, so the tests import it here: the store
// (the SQLite C library through go-sqlite3) and the tampering (modernc) then
// share every file, which also exercises that the two builds' files are
// interchangeable.
import _ "modernc.org/sqlite"
