package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// The writer's statements run on the driver's own connection and
// statements (database/sql/driver), not through database/sql: every write
// operation of a blocking request is a dozen statements, and database/sql
// spends on each one a lock of the connection, a conversion of every
// argument into a new []driver.NamedValue and a Result wrapper, ~1–2 µs
// and two or three allocations a statement that the single writer, which
// already runs one statement at a time, does not need. The driver
// connection is borrowed for each lead's turn with (*sql.Conn).Raw and
// used only inside it; its statements are prepared once and closed with
// the store. Read transactions of the read pool stay on database/sql.

// stmt is a prepared statement: on the read pool a *sql.Stmt (db), on the
// writer's connection the driver's own (ex, q).
type stmt struct {
	db *sql.Stmt
	ds driver.Stmt
	ex driver.StmtExecContext
	q  driver.StmtQueryContext
}

// onConn runs f with the writer's driver connection borrowed from
// database/sql (the writer's statements run only inside it). It reports
// false, with the reason, when the connection could not be borrowed (the
// store is closed): f did not run.
func (s *Store) onConn(f func()) (bool, error) {
	ran := false
	err := s.wconn.Raw(func(any) error {
		ran = true
		f()
		return nil
	})
	return ran, err
}

// prepareDriver prepares the writer's statements on the driver connection
// of wconn.
func (st *stmts) prepareDriver(ctx context.Context, wconn *sql.Conn) error {
	return wconn.Raw(func(dc any) error {
		cp, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return fmt.Errorf("driver connection %T cannot prepare with a context", dc)
		}
		for _, d := range st.list(true) {
			ds, err := cp.PrepareContext(ctx, d.sql)
			if err != nil {
				return fmt.Errorf("prepare %q: %w", d.sql, err)
			}
			ex, ok1 := ds.(driver.StmtExecContext)
			q, ok2 := ds.(driver.StmtQueryContext)
			if !ok1 || !ok2 {
				_ = ds.Close()
				return fmt.Errorf("driver statement %T lacks ExecContext or QueryContext", ds)
			}
			*d.p = &stmt{ds: ds, ex: ex, q: q}
		}
		return nil
	})
}

// closeDriver closes the writer's driver statements on wconn's connection.
func (st *stmts) closeDriver(wconn *sql.Conn) {
	_ = wconn.Raw(func(any) error {
		for _, d := range st.list(true) {
			if p := *d.p; p != nil && p.ds != nil {
				_ = p.ds.Close()
				p.ds, p.ex, p.q = nil, nil, nil
			}
		}
		return nil
	})
}

// args converts a statement's arguments as database/sql does (its default
// converter: neither driver checks named values itself) into st's buffer,
// reused from statement to statement: only the writer, one statement at a
// time, uses it, and the drivers bind the values before they return.
func (st *stmts) args(in []any) ([]driver.NamedValue, error) {
	nv := st.nv[:0]
	for i, a := range in {
		v, err := value(a)
		if err != nil {
			return nil, fmt.Errorf("converting argument $%d type: %w", i+1, err)
		}
		nv = append(nv, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	st.nv = nv
	return nv, nil
}

// done drops the references st's buffer holds to the last arguments.
func (st *stmts) done() { clear(st.nv) }

// value is driver.DefaultParameterConverter.ConvertValue, without its
// reflection for the types the store passes.
func value(v any) (driver.Value, error) {
	switch x := v.(type) {
	case nil, int64, float64, bool, []byte, string, time.Time:
		return v, nil
	case int:
		return int64(x), nil
	}
	return driver.DefaultParameterConverter.ConvertValue(v)
}

// exec runs s, a writer's statement, and returns how many rows it changed.
func (st *stmts) exec(ctx context.Context, s *stmt, in []any) (int64, error) {
	nv, err := st.args(in)
	if err != nil {
		return 0, err
	}
	res, err := s.ex.ExecContext(ctx, nv)
	st.done()
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// query runs s, a writer's statement, for its rows.
func (st *stmts) query(ctx context.Context, s *stmt, in []any) (*driverRows, error) {
	nv, err := st.args(in)
	if err != nil {
		return nil, err
	}
	r, err := s.q.QueryContext(ctx, nv)
	st.done()
	if err != nil {
		return nil, err
	}
	return &driverRows{r: r, vals: make([]driver.Value, len(r.Columns()))}, nil
}

// rowIter is what the store reads rows through: *sql.Rows or *driverRows.
type rowIter interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// driverRows reads a driver's rows as *sql.Rows does, for the
// destinations the store scans into.
type driverRows struct {
	r      driver.Rows
	vals   []driver.Value
	err    error
	row    bool
	closed bool
}

// Next prepares the next row for Scan; false at the end or on an error
// (Err), which also closes the rows.
func (r *driverRows) Next() bool {
	r.row = false
	if r.closed {
		return false
	}
	if err := r.r.Next(r.vals); err != nil {
		if !errors.Is(err, io.EOF) {
			r.err = err
		}
		if cerr := r.Close(); r.err == nil {
			r.err = cerr
		}
		return false
	}
	r.row = true
	return true
}

// Scan copies the current row's columns into dest.
func (r *driverRows) Scan(dest ...any) error {
	if !r.row {
		return errors.New("sql: Scan called without calling Next")
	}
	if len(dest) != len(r.vals) {
		return fmt.Errorf("sql: expected %d destination arguments in Scan, not %d", len(r.vals), len(dest))
	}
	for i, d := range dest {
		if err := assign(d, r.vals[i]); err != nil {
			return fmt.Errorf("sql: Scan error on column index %d: %w", i, err)
		}
	}
	return nil
}

// Err is the error that ended Next early, if any.
func (r *driverRows) Err() error { return r.err }

// Close ends the rows (and resets the statement); closing twice is safe.
func (r *driverRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed, r.row = true, false
	return r.r.Close()
}

// driverRow is the first row of a query, as *sql.Row: no row is
// sql.ErrNoRows.
type driverRow struct {
	rows *driverRows
	err  error
}

// Scan copies the row's columns into dest and closes the rows.
func (r driverRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	return r.rows.Close()
}

// assign stores src, a driver's column value, in dest as database/sql's
// Scan would for the destination types the store uses; any other
// destination is an error, so that a new one is noticed in the tests.
func assign(dest any, src driver.Value) error {
	switch d := dest.(type) {
	case *string:
		switch s := src.(type) {
		case string:
			*d = s
			return nil
		case []byte:
			*d = string(s)
			return nil
		case int64:
			*d = strconv.FormatInt(s, 10)
			return nil
		}
	case *[]byte:
		switch s := src.(type) {
		case nil:
			*d = nil
			return nil
		case []byte:
			*d = bytes.Clone(s)
			return nil
		case string:
			*d = []byte(s)
			return nil
		}
	case *int64:
		if n, ok := src.(int64); ok {
			*d = n
			return nil
		}
	case *int:
		if n, ok := src.(int64); ok {
			*d = int(n)
			return nil
		}
	case *bool:
		switch s := src.(type) {
		case bool:
			*d = s
			return nil
		case int64:
			if s == 0 || s == 1 {
				*d = s == 1
				return nil
			}
		}
	case sql.Scanner:
		return d.Scan(src)
	default:
		return fmt.Errorf("unsupported Scan destination %T", dest)
	}
	if src == nil {
		return fmt.Errorf("converting NULL to %T is unsupported", dest)
	}
	return fmt.Errorf("unsupported Scan, storing driver.Value type %T into type %T", src, dest)
}
