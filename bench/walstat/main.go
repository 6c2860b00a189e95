// Command walstat says which pages SQLite wrote per commit: it reads the
// write-ahead log of a pactum SQLite database (the file's -wal), splits
// its current generation into commits, and names the b-tree of every
// page (SQLite's dbstat table). Pages written per commit are what a
// commit costs in pwrite calls (two per page: the frame's header and the
// page) and in bytes; issue 15's notes count them per table and index
// (docs/benchmarks.md). It is a benchmark tool, not part of pactum.
//
// A running pactum checkpoints the log every second and then starts it
// over, so stop the server with SIGKILL right after the load (a clean
// stop checkpoints and removes it), copy the database and its -wal
// aside, and read the copy:
//
//	pactum serve --config bench.yaml &  # load it, then: kill -9 %1
//	cp bench.db /tmp/w.db; cp bench.db-wal /tmp/w.db-wal
//	go run ./bench/walstat -skip 100 /tmp/w.db
//
// The log's current generation is the frames from its start whose salts
// are the header's; a commit is the frames up to one that records the
// database size. Pages are named as the database stands at the end
// (page 1, the header, is named "page1"); a page freed and reused under
// another b-tree meanwhile is counted under its last.
package main

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	_ "modernc.org/sqlite"
)

func main() {
	skip := flag.Int("skip", 0, "leave out the first `n` commits (a warm-up)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: walstat [-skip n] DATABASE   (reads DATABASE-wal)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(os.Stdout, flag.Arg(0), *skip); err != nil {
		fmt.Fprintln(os.Stderr, "walstat:", err)
		os.Exit(1)
	}
}

func run(out io.Writer, db string, skip int) error {
	wal, err := os.ReadFile(db + "-wal")
	if err != nil {
		return err
	}
	commits, err := parseWAL(wal)
	if err != nil {
		return fmt.Errorf("%s-wal: %w", db, err)
	}
	names, err := pageNames(db)
	if err != nil {
		return err
	}
	if skip >= len(commits) {
		return fmt.Errorf("%s-wal holds %d commits, -skip leaves none", db, len(commits))
	}
	s := summarize(commits[skip:], names)
	fmt.Fprintf(out, "%d commits (after %d skipped), %.2f pages per commit\n", s.commits, skip, s.perCommit)
	for _, b := range s.byName {
		fmt.Fprintf(out, "%7.2f  %s\n", b.perCommit, b.name)
	}
	return nil
}

// parseWAL returns the page numbers of each commit in the log's current
// generation, in log order.
func parseWAL(wal []byte) ([][]uint32, error) {
	const hdr, frameHdr = 32, 24
	if len(wal) < hdr {
		return nil, errors.New("shorter than a WAL header")
	}
	if m := binary.BigEndian.Uint32(wal); m != 0x377f0682 && m != 0x377f0683 {
		return nil, fmt.Errorf("magic %#x: not a SQLite write-ahead log", m)
	}
	pageSize := int(binary.BigEndian.Uint32(wal[8:]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return nil, fmt.Errorf("page size %d", pageSize)
	}
	salt1, salt2 := binary.BigEndian.Uint32(wal[16:]), binary.BigEndian.Uint32(wal[20:])
	var commits [][]uint32
	var cur []uint32
	for off := hdr; off+frameHdr+pageSize <= len(wal); off += frameHdr + pageSize {
		f := wal[off:]
		if binary.BigEndian.Uint32(f[8:]) != salt1 || binary.BigEndian.Uint32(f[12:]) != salt2 {
			break // an earlier generation's frame: the current one ended
		}
		cur = append(cur, binary.BigEndian.Uint32(f))
		if binary.BigEndian.Uint32(f[4:]) != 0 { // the commit's last frame
			commits = append(commits, cur)
			cur = nil
		}
	}
	return commits, nil
}

// pageNames maps page numbers to "b-tree/page type" from dbstat. It
// reads a copy of the database and its log: SQLite checkpoints the log
// when its last connection closes, and the copy takes that.
func pageNames(db string) (map[uint32]string, error) {
	dir, err := os.MkdirTemp("", "walstat")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	dst := filepath.Join(dir, "copy.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(db + suffix)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst+suffix, b, 0o600); err != nil {
			return nil, err
		}
	}
	conn, err := sql.Open("sqlite", dst)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rows, err := conn.Query("SELECT name, pageno, pagetype FROM dbstat")
	if err != nil {
		return nil, fmt.Errorf("read dbstat of %s: %w", db, err)
	}
	defer rows.Close()
	names := map[uint32]string{}
	for rows.Next() {
		var name, typ string
		var page uint32
		if err := rows.Scan(&name, &page, &typ); err != nil {
			return nil, err
		}
		names[page] = name + "/" + typ
	}
	return names, rows.Err()
}

type share struct {
	name      string
	perCommit float64
}

type summary struct {
	commits   int
	perCommit float64
	byName    []share // most pages per commit first
}

func summarize(commits [][]uint32, names map[uint32]string) summary {
	count := map[string]int{}
	total := 0
	for _, c := range commits {
		total += len(c)
		for _, p := range c {
			n, ok := names[p]
			switch {
			case p == 1:
				n = "page1"
			case !ok:
				n = fmt.Sprintf("page %d (free now)", p)
			}
			count[n]++
		}
	}
	s := summary{commits: len(commits), perCommit: float64(total) / float64(len(commits))}
	for n, c := range count {
		s.byName = append(s.byName, share{n, float64(c) / float64(len(commits))})
	}
	sort.Slice(s.byName, func(i, j int) bool {
		if s.byName[i].perCommit != s.byName[j].perCommit {
			return s.byName[i].perCommit > s.byName[j].perCommit
		}
		return s.byName[i].name < s.byName[j].name
	})
	return s
}
