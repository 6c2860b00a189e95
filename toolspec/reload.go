package toolspec

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"time"
)

// Reloader is a Source that rebuilds its Checker when one of its catalogue
// files changes. Before each attempt's check, Current stats the files
// (one stat each: no read, no parse when nothing changed) and rebuilds the
// Checker when a file's size, modification time or identity differs from
// when it was last read, or the file appeared or disappeared. Reload
// forces a rebuild (for SIGHUP, or a test that wants no dependence on
// file times).
//
// A build that fails is not cached: Current returns its error, and the
// next Current tries again if the files changed again, so a broken
// catalogue stops the agents that depend on it (fail closed) until it is
// repaired. It is safe for concurrent use.
type Reloader struct {
	files []string
	build func(ctx context.Context) (Checker, error)

	mu     sync.Mutex
	stamps []stamp
	cur    Checker
	err    error
	loads  int
}

// stamp is what Current compares to decide a file changed.
type stamp struct {
	exists bool
	size   int64
	mod    time.Time
	fi     os.FileInfo
}

func (s stamp) same(o stamp) bool {
	if s.exists != o.exists {
		return false
	}
	if !s.exists {
		return true
	}
	return s.size == o.size && s.mod.Equal(o.mod) && os.SameFile(s.fi, o.fi)
}

// NewReloader returns a Reloader over files whose Checker build makes
// (reading the files), after building it once: an error from that first
// build is returned.
func NewReloader(ctx context.Context, files []string, build func(ctx context.Context) (Checker, error)) (*Reloader, error) {
	r := &Reloader{files: files, build: build}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reload(ctx, r.stat())
	if r.err != nil {
		return nil, r.err
	}
	return r, nil
}

// stat returns the files' stamps now.
func (r *Reloader) stat() []stamp {
	out := make([]stamp, len(r.files))
	for i, f := range r.files {
		fi, err := os.Stat(f)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				// Unreadable: a distinct stamp each time, so it is retried.
				out[i] = stamp{exists: true, mod: time.Now()}
			}
			continue
		}
		out[i] = stamp{exists: true, size: fi.Size(), mod: fi.ModTime(), fi: fi}
	}
	return out
}

func (r *Reloader) reload(ctx context.Context, st []stamp) {
	r.stamps = st
	r.loads++
	c, err := r.build(ctx)
	if err != nil {
		r.cur, r.err = nil, err
		return
	}
	r.cur, r.err = c, nil
}

// Current returns the Checker in force, rebuilt first when a file changed.
func (r *Reloader) Current(ctx context.Context) (Checker, error) {
	st := r.stat()
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := len(st) != len(r.stamps)
	for i := 0; !changed && i < len(st); i++ {
		changed = !st[i].same(r.stamps[i])
	}
	if changed {
		r.reload(ctx, st)
	}
	return r.cur, r.err
}

// Reload rebuilds the Checker now, whether or not a file changed, and
// returns the build's error.
func (r *Reloader) Reload(ctx context.Context) error {
	st := r.stat()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reload(ctx, st)
	return r.err
}

// Loads returns how many times the Checker was built (for tests and
// logs).
func (r *Reloader) Loads() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loads
}
