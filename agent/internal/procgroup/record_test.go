package procgroup

import (
	"errors"
	"testing"
)

func FuzzParseRecord(f *testing.F) {
	good := (&record{Version: 1, Kind: "exec", Owner: procID{PID: 10, Start: "5"}, Leader: procID{PID: 11, Start: "6"}, Sid: 3}).encode()
	f.Add(good)
	f.Add([]byte(`{"version":1,"owner":{"pid":1,"start":"x"},"leader":{"pid":1}}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseRecord(b)
		if err != nil {
			if !errors.Is(err, ErrBadRecord) {
				t.Fatalf("error %v is not ErrBadRecord", err)
			}
			return
		}
		if r.pgid() <= 1 || r.Owner.PID <= 0 {
			t.Fatalf("accepted %+v", r)
		}
	})
}

func TestParseRecordRoundTrip(t *testing.T) {
	in := &record{Version: 1, Kind: "mcp", Agent: "a", TaskID: "t", Attempt: 2, Boot: "b", Owner: procID{PID: 10, Start: "5"}, Leader: procID{PID: 11, Start: "6"}, Sid: 3}
	out, err := parseRecord(in.encode())
	if err != nil || *out != *in {
		t.Fatalf("parseRecord = %+v, %v", out, err)
	}
	for _, bad := range []string{`{"version":1,"owner":{"pid":10,"start":"5"},"leader":{"pid":1}}`, `{"version":1,"owner":{"pid":10,"start":"5"},"leader":{"pid":-5}}`, `{"version":1,"leader":{"pid":50}}`} {
		if _, err := parseRecord([]byte(bad)); !errors.Is(err, ErrBadRecord) {
			t.Errorf("parseRecord(%s) = %v, want ErrBadRecord", bad, err)
		}
	}
}
