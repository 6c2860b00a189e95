package exec

import (
	"context"
	"errors"
	"io"
	"os"
	"syscall"
	"time"
)

// outputPipe copies the read end of a command's standard output (or
// error) pipe to a writer from a goroutine of its own, until the pipe's end (every
// process holding the write end has closed it) or until finish.
//
// Nothing the command wrote is lost however slowly the writer takes it
// (an emit that waits on a busy store or on thousands of subscribers
// holds up the reading while the command writes its last lines and
// exits): finish stops waiting for the pipe's end, not the reading of
// what the pipe already holds. The read end is non-blocking (os.Pipe
// registers it with the runtime's poller); finish sets a read deadline in
// the past, which wakes a blocked Read, and the goroutine then reads what
// is left directly until the pipe is empty or at its end. What processes
// that escaped the group still write after that is not read.
//
// os/exec's own copying of a Stdout that is not a file does not do this:
// once WaitDelay has passed after the command's exit it closes the pipe
// with whatever is still in it, and a Wait that returned ErrWaitDelay
// looked like a success with the last lines missing.
type outputPipe struct {
	f    *os.File
	done chan struct{} // closed when the goroutine is done with f
	err  error         // a read error other than the end; read after done
}

// readOutput starts copying f to w. w.Write is called from one goroutine;
// after it fails the rest of the output is read and discarded, so that
// the command does not block on a full pipe while it is being stopped.
func readOutput(f *os.File, w io.Writer) *outputPipe {
	p := &outputPipe{f: f, done: make(chan struct{})}
	go p.copy(w)
	return p
}

func (p *outputPipe) copy(w io.Writer) {
	defer close(p.done)
	defer p.f.Close()
	buf := make([]byte, 32<<10)
	var werr error
	write := func(b []byte) {
		if werr == nil {
			_, werr = w.Write(b)
		}
	}
	for {
		n, err := p.f.Read(buf)
		write(buf[:n])
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			p.err = p.drain(buf, write)
			return
		case errors.Is(err, io.EOF):
			return
		default:
			p.err = err
			return
		}
	}
}

// drain reads what the pipe holds without waiting for more, past the
// read deadline that finish set (Control runs f's descriptor as is).
func (p *outputPipe) drain(buf []byte, write func([]byte)) error {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return err
	}
	for {
		var n int
		var rerr error
		if err := rc.Control(func(fd uintptr) { n, rerr = syscall.Read(int(fd), buf) }); err != nil {
			return err
		}
		switch {
		case errors.Is(rerr, syscall.EINTR):
			continue
		case errors.Is(rerr, syscall.EAGAIN):
			return nil // empty; only an escaped process still has it open
		case rerr != nil:
			return rerr
		case n == 0:
			return nil // the end
		}
		write(buf[:n])
	}
}

// waitOutput waits up to grace for the end of every pipe of ps, or until
// ctx is done.
func waitOutput(ctx context.Context, grace time.Duration, ps ...*outputPipe) {
	if grace <= 0 || ctx.Err() != nil {
		return
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	for _, p := range ps {
		select {
		case <-p.done:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// finish stops waiting for the pipe's end, lets the goroutine read what
// the pipe holds, waits until it is done and returns its read error.
func (p *outputPipe) finish() error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	if err := p.f.SetReadDeadline(time.Now()); err != nil {
		// Not pollable (no platform pactum runs on): closing is the only
		// way left to end a Read blocked on a process that escaped.
		_ = p.f.Close()
	}
	<-p.done
	return p.err
}
