package server

import "github.com/pactum/pactum/store"

// RedactDSN hides a password in a store DSN before it is logged.
func RedactDSN(dsn string) string {
	return store.Redact(dsn)
}
