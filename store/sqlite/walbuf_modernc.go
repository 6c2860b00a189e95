//go:build !sqlite_cgo

package sqlite

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// This file is a SQLite VFS, registered as walVFSName, that the store's
// writer opens its database with. It is the default (unix) VFS except for
// how the write-ahead log is written: SQLite writes each frame of a commit
// with two pwrite calls (its 24-byte header, then the page), some 40 calls
// for a commit of one task; this VFS gathers a commit's frames in a buffer
// and writes them with one call (or one per 128 KiB) when the commit
// frame's page is in. The bytes, their order and their offsets are
// SQLite's; only the number of calls changes (docs/storage.md).
//
// When a commit returns, its frames are in the kernel as they are without
// the VFS: SQLite writes the commit frame before it makes the commit
// visible (the wal-index header) and returns, and the buffer is written
// before that write returns. Frames written without a commit frame (a
// transaction larger than the page cache spills pages before its commit)
// stay buffered only until the connection's next use of the log file or
// of the shared-memory locks: every other method of the log file writes
// the buffer first, and so do the database file's xShmLock and
// xShmBarrier, through which a connection publishes a commit and releases
// the write lock when it rolls back. So the log file sees SQLite's writes
// in SQLite's order, each before any other connection can look at it.
//
// SQLite's C code is Go here (modernc.org/sqlite transpiles it), so a C
// function pointer is the address of a Go func value (fnptr) and is
// called by reinterpreting it as one (call*). A log file's buffer belongs
// to the connection that opened it, which uses it from one goroutine at a
// time; the database file's methods find its connection's log files by
// the connection's libc.TLS, which modernc.org/sqlite keeps one of per
// connection.

// walVFSName is the VFS the store's writer opens its database with.
const walVFSName = "pactum-walbuf"

// walBufMax bounds a log file's buffer: a commit with more frames than fit
// is written in several calls. It is the most the unix VFS writes in one
// call (its seekAndWriteFd keeps the low 17 bits of the length).
const walBufMax = 1<<17 - 1

// walFrameHeader is the size of a log frame's header; bytes 4–7 of a
// header are the database's size in pages after a commit, 0 in the frames
// before the commit's last.
const walFrameHeader = 24

// methods is a set of io methods of this VFS: own's, some replaced. m
// comes first, so a file's pMethods points at both. Like everything of
// this VFS that SQLite's code reads (the VFS, its name, a log buffer), a
// methods lives in C memory (libc.Xmalloc), never freed: the transpiled
// code does pointer arithmetic that the race detector's checkptr refuses
// on Go memory.
type methods struct {
	m   sqlite3.Tsqlite3_io_methods
	own uintptr // *Tsqlite3_io_methods
}

// walFile is one open log file and its buffer.
type walFile struct {
	tls *libc.TLS
	p   uintptr // the file (*Tsqlite3_file)
	own *sqlite3.Tsqlite3_io_methods
	// buf is the buffer, walBufMax bytes of C memory allocated at the
	// first write (0 before), of which n are in use.
	buf uintptr
	n   int
	off int64 // the file offset of the buffer's first byte
	// commitNext: the last write was the header of a commit frame, whose
	// page comes next.
	commitNext bool
}

var walvfs struct {
	once sync.Once
	err  error
	own  *sqlite3.Tsqlite3_vfs // the default VFS
	vfs  uintptr               // this VFS (*Tsqlite3_vfs), in C memory

	mu sync.RWMutex
	// files maps a log file (its sqlite3_file) to its buffer; byTLS a
	// connection to its log files.
	files map[uintptr]*walFile
	byTLS map[*libc.TLS][]*walFile
	// walMethods and dbMethods map a file's own io methods to this VFS's
	// for a log file and for a database file.
	walMethods map[uintptr]uintptr
	dbMethods  map[uintptr]uintptr

	// writes counts the write calls the log buffers made, frames the
	// frames they gathered (for tests).
	writes, frames atomic.Uint64
}

// registerWALVFS registers walVFSName, once per process.
func registerWALVFS() error {
	walvfs.once.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		own := sqlite3.Xsqlite3_vfs_find(tls, 0)
		if own == 0 {
			walvfs.err = fmt.Errorf("sqlite: no default VFS to wrap")
			return
		}
		walvfs.own = (*sqlite3.Tsqlite3_vfs)(ptr(own))
		walvfs.files = map[uintptr]*walFile{}
		walvfs.byTLS = map[*libc.TLS][]*walFile{}
		walvfs.walMethods = map[uintptr]uintptr{}
		walvfs.dbMethods = map[uintptr]uintptr{}
		name, err := libc.CString(walVFSName)
		if err != nil {
			walvfs.err = fmt.Errorf("sqlite: register the %s VFS: %w", walVFSName, err)
			return
		}
		walvfs.vfs = cmalloc(tls, unsafe.Sizeof(sqlite3.Tsqlite3_vfs{}))
		v := (*sqlite3.Tsqlite3_vfs)(ptr(walvfs.vfs))
		*v = *walvfs.own
		v.FpNext = 0
		v.FzName = name
		v.FxOpen = fnptr(walOpen)
		if rc := sqlite3.Xsqlite3_vfs_register(tls, walvfs.vfs, 0); rc != sqlite3.SQLITE_OK {
			walvfs.err = fmt.Errorf("sqlite: register the %s VFS: result code %d", walVFSName, rc)
		}
	})
	return walvfs.err
}

// cmalloc allocates n bytes of C memory; it panics when there is none,
// as a Go allocation would.
func cmalloc(tls *libc.TLS, n uintptr) uintptr {
	p := libc.Xmalloc(tls, libc.Tsize_t(n))
	if p == 0 {
		panic(fmt.Sprintf("sqlite: %s VFS: out of memory (%d bytes)", walVFSName, n))
	}
	return p
}

// ptr is the C address u as a pointer. (The reinterpretation, rather
// than unsafe.Pointer(u), is for go vet: u is memory SQLite allocated or
// Go memory kept alive elsewhere, never a Go pointer the collector could
// move.)
func ptr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }

// fnptr is f as SQLite's transpiled code holds a function pointer: the
// address of its func value.
func fnptr[F any](f F) uintptr { return *(*uintptr)(unsafe.Pointer(&struct{ f F }{f})) }

// fn is the function pointer p as a Go func of type F.
func fn[F any](p uintptr) F { return *(*F)(unsafe.Pointer(&struct{ uintptr }{p})) }

// file is the sqlite3_file at p.
func file(p uintptr) *sqlite3.Tsqlite3_file { return (*sqlite3.Tsqlite3_file)(ptr(p)) }

// ownMethods is the io methods the default VFS gave the file p.
func ownMethods(p uintptr) *sqlite3.Tsqlite3_io_methods {
	return (*sqlite3.Tsqlite3_io_methods)(ptr((*methods)(ptr(file(p).FpMethods)).own))
}

// wrap returns this VFS's methods over own from cache (in C memory),
// made by set the first time.
func wrap(tls *libc.TLS, cache map[uintptr]uintptr, own uintptr, set func(*sqlite3.Tsqlite3_io_methods)) uintptr {
	p := cache[own]
	if p == 0 {
		p = cmalloc(tls, unsafe.Sizeof(methods{}))
		m := (*methods)(ptr(p))
		m.m, m.own = *(*sqlite3.Tsqlite3_io_methods)(ptr(own)), own
		set(&m.m)
		cache[own] = p
	}
	return p
}

// walOpen is the VFS's xOpen: the default VFS's, after which a log file
// gets the buffering methods and a database file the methods that write
// its connection's log buffers before the shared-memory locks move.
func walOpen(tls *libc.TLS, _, zName, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	rc := fn[func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32](walvfs.own.FxOpen)(
		tls, uintptr(unsafe.Pointer(walvfs.own)), zName, pFile, flags, pOutFlags)
	f := file(pFile)
	if rc != sqlite3.SQLITE_OK || f.FpMethods == 0 {
		return rc
	}
	walvfs.mu.Lock()
	defer walvfs.mu.Unlock()
	switch {
	case flags&sqlite3.SQLITE_OPEN_WAL != 0:
		m := wrap(tls, walvfs.walMethods, f.FpMethods, func(m *sqlite3.Tsqlite3_io_methods) {
			m.FxClose = fnptr(walClose)
			m.FxRead = fnptr(walRead)
			m.FxWrite = fnptr(walWrite)
			m.FxTruncate = fnptr(walTruncate)
			m.FxSync = fnptr(walSync)
			m.FxFileSize = fnptr(walFileSize)
			m.FxLock = fnptr(walLock)
			m.FxUnlock = fnptr(walUnlock)
			m.FxCheckReservedLock = fnptr(walCheckReservedLock)
			m.FxFileControl = fnptr(walFileControl)
		})
		w := &walFile{tls: tls, p: pFile, own: (*sqlite3.Tsqlite3_io_methods)(ptr(f.FpMethods))}
		walvfs.files[pFile] = w
		walvfs.byTLS[tls] = append(walvfs.byTLS[tls], w)
		f.FpMethods = m
	case flags&sqlite3.SQLITE_OPEN_MAIN_DB != 0 && (*sqlite3.Tsqlite3_io_methods)(ptr(f.FpMethods)).FiVersion >= 2:
		m := wrap(tls, walvfs.dbMethods, f.FpMethods, func(m *sqlite3.Tsqlite3_io_methods) {
			m.FxShmLock = fnptr(dbShmLock)
			m.FxShmBarrier = fnptr(dbShmBarrier)
		})
		f.FpMethods = m
	}
	return rc
}

// logFile returns the buffer of the log file p.
func logFile(p uintptr) *walFile {
	walvfs.mu.RLock()
	w := walvfs.files[p]
	walvfs.mu.RUnlock()
	return w
}

// flush writes w's buffer with the file's own xWrite. The buffer is
// emptied either way: after a failed write SQLite fails the transaction,
// and writes the frames again if it retries.
func (w *walFile) flush(tls *libc.TLS) int32 {
	if w.n == 0 {
		return sqlite3.SQLITE_OK
	}
	rc := w.write(tls, w.buf, int32(w.n), w.off)
	walvfs.writes.Add(1)
	w.n = 0
	w.commitNext = false
	return rc
}

// write is the file's own xWrite.
func (w *walFile) write(tls *libc.TLS, zBuf uintptr, n int32, off int64) int32 {
	return fn[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](w.own.FxWrite)(tls, w.p, zBuf, n, off)
}

// flushTLS writes the buffers of the log files the connection tls has
// open.
func flushTLS(tls *libc.TLS) int32 {
	walvfs.mu.RLock()
	files := walvfs.byTLS[tls]
	walvfs.mu.RUnlock()
	rc := int32(sqlite3.SQLITE_OK)
	for _, w := range files {
		if r := w.flush(tls); r != sqlite3.SQLITE_OK {
			rc = r
		}
	}
	return rc
}

func walWrite(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	w := logFile(pFile)
	if w.n > 0 && (w.off+int64(w.n) != iOfst || w.n+int(iAmt) > walBufMax) {
		if rc := w.flush(tls); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	if int(iAmt) > walBufMax {
		walvfs.writes.Add(1)
		return w.write(tls, zBuf, iAmt, iOfst)
	}
	if w.buf == 0 {
		w.buf = cmalloc(tls, walBufMax)
	}
	if w.n == 0 {
		w.off = iOfst
	}
	src := unsafe.Slice((*byte)(ptr(zBuf)), iAmt)
	copy(unsafe.Slice((*byte)(ptr(w.buf)), walBufMax)[w.n:], src)
	w.n += int(iAmt)
	if iAmt == walFrameHeader {
		walvfs.frames.Add(1)
		w.commitNext = binary.BigEndian.Uint32(src[4:8]) != 0
		return sqlite3.SQLITE_OK
	}
	if w.commitNext {
		return w.flush(tls)
	}
	return sqlite3.SQLITE_OK
}

func walClose(tls *libc.TLS, pFile uintptr) int32 {
	w := logFile(pFile)
	rc := w.flush(tls)
	if w.buf != 0 {
		libc.Xfree(tls, w.buf)
		w.buf = 0
	}
	walvfs.mu.Lock()
	delete(walvfs.files, pFile)
	list := walvfs.byTLS[w.tls]
	for i, x := range list {
		if x == w {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(walvfs.byTLS, w.tls)
	} else {
		walvfs.byTLS[w.tls] = list
	}
	walvfs.mu.Unlock()
	if r := fn[func(*libc.TLS, uintptr) int32](w.own.FxClose)(tls, pFile); r != sqlite3.SQLITE_OK {
		return r
	}
	return rc
}

// through writes the buffer of the log file pFile, then makes call with
// the file's own io methods; a failed write is the result.
func through(tls *libc.TLS, pFile uintptr, call func(*sqlite3.Tsqlite3_io_methods) int32) int32 {
	w := logFile(pFile)
	if rc := w.flush(tls); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return call(w.own)
}

func walRead(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	return through(tls, pFile, func(m *sqlite3.Tsqlite3_io_methods) int32 {
		return fn[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](m.FxRead)(tls, pFile, zBuf, iAmt, iOfst)
	})
}

func walTruncate(tls *libc.TLS, pFile uintptr, size int64) int32 {
	return through(tls, pFile, func(m *sqlite3.Tsqlite3_io_methods) int32 {
		return fn[func(*libc.TLS, uintptr, int64) int32](m.FxTruncate)(tls, pFile, size)
	})
}

func walSync(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	return through(tls, pFile, func(m *sqlite3.Tsqlite3_io_methods) int32 {
		return fn[func(*libc.TLS, uintptr, int32) int32](m.FxSync)(tls, pFile, flags)
	})
}

func walFileSize(tls *libc.TLS, pFile, pSize uintptr) int32 {
	return through(tls, pFile, func(m *sqlite3.Tsqlite3_io_methods) int32 {
		return fn[func(*libc.TLS, uintptr, uintptr) int32](m.FxFileSize)(tls, pFile, pSize)
	})
}

func walLock(tls *libc.TLS, pFile uintptr, lock int32) int32 {
	return through(tls, pFile, func(m *sqlite3.Tsqlite3_io_methods) int32 {
		return fn[func(*libc.TLS, uintptr, int32) int32](m.FxLock)(tls, pFile, lock)
	})
}

func walUnlock(tls *libc.TLS, pFile uintptr, lock int32) int32 {
	return through(tls, pFile, func(m *sqlite3.Tsqlite3_io_methods) int32 {
		return fn[func(*libc.TLS, uintptr, int32) int32](m.FxUnlock)(tls, pFile, lock)
	})
}

func walCheckReservedLock(tls *libc.TLS, pFile, pResOut uintptr) int32 {
	return through(tls, pFile, func(m *sqlite3.Tsqlite3_io_methods) int32 {
		return fn[func(*libc.TLS, uintptr, uintptr) int32](m.FxCheckReservedLock)(tls, pFile, pResOut)
	})
}

func walFileControl(tls *libc.TLS, pFile uintptr, op int32, pArg uintptr) int32 {
	return through(tls, pFile, func(m *sqlite3.Tsqlite3_io_methods) int32 {
		return fn[func(*libc.TLS, uintptr, int32, uintptr) int32](m.FxFileControl)(tls, pFile, op, pArg)
	})
}

func dbShmLock(tls *libc.TLS, pFile uintptr, offset, n, flags int32) int32 {
	if rc := flushTLS(tls); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return fn[func(*libc.TLS, uintptr, int32, int32, int32) int32](ownMethods(pFile).FxShmLock)(tls, pFile, offset, n, flags)
}

func dbShmBarrier(tls *libc.TLS, pFile uintptr) {
	// A commit's frames were written with its commit frame, before the
	// barrier of its wal-index header: this write finds the buffer empty
	// unless SQLite wrote frames some other way, and a barrier has no
	// result to fail with.
	_ = flushTLS(tls)
	fn[func(*libc.TLS, uintptr)](ownMethods(pFile).FxShmBarrier)(tls, pFile)
}
