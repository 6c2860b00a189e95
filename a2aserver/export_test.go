package a2aserver

// SetFastRPC turns the SendMessage fast path (fastrpc.go) on or off, for
// tests that compare it with the SDK's handler.
func SetFastRPC(s *Server, on bool) { s.noFastRPC.Store(!on) }

// FastServed returns how many requests the fast paths answered.
func FastServed(s *Server) int64 { return s.fastServed.Load() }
