//go:build sqlite_cgo

package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"strings"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// This file is the cgo SQLite driver, github.com/mattn/go-sqlite3 (the
// SQLite C library compiled in), chosen with the build tag sqlite_cgo; see
// docs/storage.md. driver_modernc.go is the default; the two define the
// same names.

// driverName names the SQLite library in logs and docs.
const driverName = "github.com/mattn/go-sqlite3"

// openDB opens a database/sql handle on dsn, which is written in the
// default driver's syntax (see driver_modernc.go): a path or file: URI
// whose query holds _pragma=name(value) parameters, _txlock and SQLite URI
// parameters. go-sqlite3 has no _pragma parameter, so the PRAGMAs are
// taken out of the query and run, in order, by a ConnectHook on every new
// connection; _txlock=immediate means the same to go-sqlite3, and the URI
// parameters (mode=ro, immutable=1) go to SQLite with the file: URI.
// go-sqlite3 itself sets busy_timeout and synchronous=normal before the
// hook runs; the hook's PRAGMAs override them where pactum sets them (the
// read pool keeps synchronous=normal, which in WAL mode checkpoints as
// full does).
func openDB(dsn string) (*sql.DB, error) {
	name, rawQuery, _ := strings.Cut(dsn, "?")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, fmt.Errorf("connection parameters %q: %w", rawQuery, err)
	}
	pragmas := q["_pragma"]
	q.Del("_pragma")
	d := &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		for _, p := range pragmas {
			if _, err := c.Exec("PRAGMA "+p, nil); err != nil {
				return fmt.Errorf("PRAGMA %s: %w", p, err)
			}
		}
		return nil
	}}
	if len(q) > 0 {
		name += "?" + q.Encode()
	}
	return sql.OpenDB(connector{d: d, dsn: name}), nil
}

// connector opens go-sqlite3 connections on one DSN with one driver (and
// so one ConnectHook), without registering the driver globally.
type connector struct {
	d   *sqlite3.SQLiteDriver
	dsn string
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.d }

// Extended result codes isConstraint tells apart.
var (
	errConstraintPrimaryKey = int(sqlite3.ErrConstraintPrimaryKey)
	errConstraintUnique     = int(sqlite3.ErrConstraintUnique)
)

// isConstraint reports whether err is SQLite's extended result code code.
func isConstraint(err error, code int) bool {
	var e sqlite3.Error
	return errors.As(err, &e) && int(e.ExtendedCode) == code
}

// walVFSName is empty: the cgo driver's writer uses SQLite's default VFS
// (walbuf_modernc.go is the default driver's).
const walVFSName = ""

func registerWALVFS() error { return nil }
