package httpguard

import (
	"net"
	"sync"
)

// LimitListener returns a listener that holds at most n accepted
// connections open at once: while n are open, further connections wait in
// the kernel's backlog and are accepted as open ones close. full, when set,
// is called each time Accept finds every slot taken and has to wait. n < 1
// returns l.
func LimitListener(l net.Listener, n int, full func()) net.Listener {
	if n < 1 {
		return l
	}
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{}), full: full}
}

type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	full      func()
}

// Accept waits for a free slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		if l.full != nil {
			l.full()
		}
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			// Closed: the listener's own Accept says so in its words.
			return l.Listener.Accept()
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

// Close closes the listener and wakes an Accept waiting for a slot.
func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitConn gives its slot back when closed (once, however often it is
// closed).
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
