package sqlite

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
	"time"
)

// The writer's statements skip database/sql (conn.go): its argument
// conversion must be database/sql's, and its Scan must store what
// database/sql's would for the destinations the store uses.

func TestValueIsDefaultConverter(t *testing.T) {
	t.Parallel()
	type named string
	now := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	for _, v := range []any{nil, 0, 1, -7, 1 << 40, int64(3), 2.5, true, false, "s", "",
		[]byte("b"), []byte{}, json.RawMessage(`{"a":1}`), named("x"), now, uint8(9), int32(-4)} {
		got, err := value(v)
		want, werr := driver.DefaultParameterConverter.ConvertValue(v)
		if (err != nil) != (werr != nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("value(%#v) = %#v, %v; database/sql converts to %#v, %v", v, got, err, want, werr)
		}
	}
	if _, err := value(struct{}{}); err == nil {
		t.Error("value(struct{}{}) succeeded; database/sql refuses it")
	}
}

func TestAssign(t *testing.T) {
	t.Parallel()
	var (
		s   string
		b   []byte
		i64 int64
		i   int
		ok  bool
		ni  sql.NullInt64
		ns  sql.NullString
		f32 float32
	)
	blob := []byte("blob")
	for _, c := range []struct {
		dest, src any
		want      any // *dest after; nil: an error is wanted
	}{
		{&s, "text", "text"},
		{&s, []byte("bytes"), "bytes"},
		{&s, int64(42), "42"},
		{&s, nil, nil},
		{&b, blob, blob},
		{&b, "text", []byte("text")},
		{&b, nil, []byte(nil)},
		{&i64, int64(-5), int64(-5)},
		{&i64, nil, nil},
		{&i, int64(7), 7},
		{&ok, int64(1), true},
		{&ok, int64(0), false},
		{&ok, true, true},
		{&ok, int64(2), nil},
		{&ni, int64(9), sql.NullInt64{Int64: 9, Valid: true}},
		{&ni, nil, sql.NullInt64{}},
		{&ns, "m", sql.NullString{String: "m", Valid: true}},
		{&ns, nil, sql.NullString{}},
		{&f32, 1.5, nil},
	} {
		err := assign(c.dest, c.src)
		if c.want == nil {
			if err == nil {
				t.Errorf("assign(%T, %#v) succeeded; want an error", c.dest, c.src)
			}
			continue
		}
		if err != nil {
			t.Errorf("assign(%T, %#v): %v", c.dest, c.src, err)
			continue
		}
		if got := reflect.ValueOf(c.dest).Elem().Interface(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("assign(%T, %#v) stored %#v, want %#v", c.dest, c.src, got, c.want)
		}
	}
	// A blob scanned into []byte is the caller's: the driver may reuse
	// its buffer.
	if err := assign(&b, blob); err != nil {
		t.Fatal(err)
	}
	b[0] = 'X'
	if string(blob) != "blob" {
		t.Error("assign(*[]byte) returned the driver's buffer, not a copy")
	}
}

// fakeRows is a driver.Rows of fixed rows.
type fakeRows struct {
	cols   []string
	rows   [][]driver.Value
	closed int
	err    error
}

func (r *fakeRows) Columns() []string {
	if r.cols != nil {
		return r.cols
	}
	return []string{"a", "b"}
}
func (r *fakeRows) Close() error { r.closed++; return nil }
func (r *fakeRows) Next(dest []driver.Value) error {
	if len(r.rows) == 0 {
		if r.err != nil {
			return r.err
		}
		return io.EOF
	}
	copy(dest, r.rows[0])
	r.rows = r.rows[1:]
	return nil
}

func newDriverRows(fr *fakeRows) *driverRows {
	return &driverRows{r: fr, vals: make([]driver.Value, len(fr.Columns()))}
}

func TestDriverRows(t *testing.T) {
	t.Parallel()
	fr := &fakeRows{rows: [][]driver.Value{{"x", int64(1)}, {"y", int64(2)}}}
	r := newDriverRows(fr)
	var s string
	var n int
	if err := r.Scan(&s, &n); err == nil {
		t.Error("Scan before Next succeeded")
	}
	var got []string
	for r.Next() {
		if err := r.Scan(&s); err == nil {
			t.Error("Scan with one destination for two columns succeeded")
		}
		if err := r.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"x", "y"}) || fr.closed != 1 {
		t.Errorf("rows read %v, closed %d times; want [x y], once", got, fr.closed)
	}
	if err := r.Close(); err != nil || fr.closed != 1 {
		t.Errorf("Close after the end: %v, closed %d times; want nil, once", err, fr.closed)
	}

	// A driver error ends the rows and is Err.
	boom := sql.ErrConnDone
	r = newDriverRows(&fakeRows{err: boom})
	if r.Next() || r.Err() != boom {
		t.Errorf("Next on a failing driver: Err() = %v, want %v", r.Err(), boom)
	}

	// driverRow: the first row, sql.ErrNoRows for none, closed either way.
	fr = &fakeRows{rows: [][]driver.Value{{"z", int64(3)}, {"w", int64(4)}}}
	if err := (driverRow{rows: newDriverRows(fr)}).Scan(&s, &n); err != nil || s != "z" || n != 3 || fr.closed != 1 {
		t.Errorf("driverRow.Scan = %v (%q, %d, closed %d); want nil (z, 3, closed once)", err, s, n, fr.closed)
	}
	fr = &fakeRows{}
	if err := (driverRow{rows: newDriverRows(fr)}).Scan(&s, &n); err != sql.ErrNoRows || fr.closed != 1 {
		t.Errorf("driverRow.Scan of no rows = %v (closed %d); want sql.ErrNoRows, closed once", err, fr.closed)
	}
	if err := (driverRow{err: boom}).Scan(&s); err != boom {
		t.Errorf("driverRow.Scan after a failed query = %v, want %v", err, boom)
	}
}

// oneValue is a database/sql driver whose every query returns one row of
// one column, the value last put in oneValueSrc: the oracle for assign.
type oneValue struct{}

var oneValueSrc driver.Value

func (oneValue) Open(string) (driver.Conn, error) { return oneValueConn{}, nil }

type oneValueConn struct{}

func (oneValueConn) Prepare(string) (driver.Stmt, error) { return oneValueStmt{}, nil }
func (oneValueConn) Close() error                        { return nil }
func (oneValueConn) Begin() (driver.Tx, error)           { return nil, errors.New("no transactions") }

type oneValueStmt struct{}

func (oneValueStmt) Close() error  { return nil }
func (oneValueStmt) NumInput() int { return 0 }
func (oneValueStmt) Exec([]driver.Value) (driver.Result, error) {
	return nil, errors.New("no exec")
}
func (oneValueStmt) Query([]driver.Value) (driver.Rows, error) {
	return &fakeRows{rows: [][]driver.Value{{oneValueSrc}}, cols: []string{"v"}}, nil
}

func init() { sql.Register("sqlite-assign-oracle", oneValue{}) }

// FuzzAssign: whatever assign stores, database/sql's Scan stores the same
// from the same driver value; where database/sql refuses, so does assign.
// (assign may refuse more: conversions the store never needs.)
func FuzzAssign(f *testing.F) {
	f.Add(byte(0), int64(0), "", []byte(nil))
	f.Add(byte(1), int64(1), "x", []byte("y"))
	f.Add(byte(2), int64(-3), "12", []byte("1"))
	f.Add(byte(3), int64(2), "true", []byte{})
	db, err := sql.Open("sqlite-assign-oracle", "")
	if err != nil {
		f.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	f.Cleanup(func() { _ = db.Close() })
	f.Fuzz(func(t *testing.T, kind byte, n int64, s string, b []byte) {
		var src driver.Value
		switch kind % 6 {
		case 0:
			src = nil
		case 1:
			src = n
		case 2:
			src = s
		case 3:
			src = b
		case 4:
			src = n%2 == 0
		case 5:
			src = float64(n) / 4
		}
		dests := func() []any {
			return []any{new(string), new([]byte), new(int64), new(int), new(bool), new(sql.NullInt64), new(sql.NullString)}
		}
		mine, theirs := dests(), dests()
		for i := range mine {
			err := assign(mine[i], src)
			oneValueSrc = src
			werr := db.QueryRow("").Scan(theirs[i])
			if werr != nil {
				if err == nil {
					t.Errorf("assign(%T, %#v) succeeded; database/sql refuses: %v", mine[i], src, werr)
				}
				continue
			}
			if err != nil {
				continue
			}
			got, want := reflect.ValueOf(mine[i]).Elem().Interface(), reflect.ValueOf(theirs[i]).Elem().Interface()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("assign(%T, %#v) stored %#v; database/sql stores %#v", mine[i], src, got, want)
			}
		}
	})
}
