package postgres_test

import (
	"fmt"
	"testing"

	"github.com/pactum/pactum/audit/audittest"
	"github.com/pactum/pactum/task"
)

// TestVerifyTampered runs the tampering suite on PostgreSQL: each case
// works in a schema of its own and tampers through a plain connection.
func TestVerifyTampered(t *testing.T) {
	t.Parallel()
	dsn := storeDSN(t)
	audittest.Run(t, func(t *testing.T) audittest.Target {
		schema := newSchema(t)
		return audittest.Target{
			Store: open(t, dsn, schema),
			Exec: func(t *testing.T, stmts ...string) {
				t.Helper()
				c := conn(t, schema)
				guards := []string{`ALTER TABLE audit_log DISABLE TRIGGER USER`, `ALTER TABLE task_records DISABLE TRIGGER USER`}
				for _, q := range append(guards, stmts...) {
					if _, err := c.Exec(t.Context(), q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
			},
			Insert: func(e task.AuditEntry) string {
				data := "NULL"
				if len(e.Data) > 0 {
					data = fmt.Sprintf(`'\x%x'::bytea`, []byte(e.Data))
				}
				return fmt.Sprintf(`INSERT INTO audit_log (seq, at, kind, task_id, actor, data, prev_hash, hash) VALUES (%d, '%s', '%s', '%s', '%s', %s, '%s', '%s')`,
					e.Seq, e.At.Format("2006-01-02T15:04:05.999999Z07:00"), e.Kind, e.TaskID, e.Actor, data, e.PrevHash, e.Hash)
			},
			AllowDuplicates: []string{`ALTER TABLE audit_log DROP CONSTRAINT audit_log_pkey`},
		}
	})
}
