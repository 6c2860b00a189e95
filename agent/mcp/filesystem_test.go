package mcpagent

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pactum/pactum/task"
)

// The tests in this file run @modelcontextprotocol/server-filesystem (see
// testdata/npm) as a real subprocess over stdio, allowed one temporary
// directory.

// filesystem is a runtime calling tool on server-filesystem, allowed dir.
func filesystem(t *testing.T, dir, tool string) *bundle {
	t.Helper()
	node, script := nodeServer(t, serverFilesystem)
	return setup(t, fmt.Sprintf("command: %q\nargs: [%q, %q]\ntool: %q\n", node, script, dir, tool))
}

func TestFilesystemWriteThenRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "note.txt")

	write := filesystem(t, dir, "write_file")
	res, err := write.invokeData(t, fmt.Sprintf(`{"path": %q, "content": "hello from pactum\n"}`, path))
	if got := mustText(t, res, err); got != "Successfully wrote to "+path {
		t.Errorf("write_file = %q", got)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "hello from pactum\n" {
		t.Fatalf("file on disk = %q, %v", b, err)
	}

	// path is read_text_file's only required argument: the text is the
	// path.
	read := filesystem(t, dir, "read_text_file")
	res, err = read.invoke(t, path)
	if err != nil {
		t.Fatal(err)
	}
	parts := res.Artifacts[0].Parts
	if len(parts) != 2 || parts[0].Text != "hello from pactum\n" || parts[1].Kind != task.PartData {
		t.Fatalf("read_text_file parts = %+v, want the text and its structured content", parts)
	}
	if string(parts[1].Data) != `{"content":"hello from pactum\n"}` {
		t.Errorf("structured content = %s", parts[1].Data)
	}
	if res.Message.Text() != "hello from pactum\n" {
		t.Errorf("message = %q", res.Message.Text())
	}
}

func TestFilesystemOutsideAllowedDirIsPermanent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("no"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := filesystem(t, dir, "read_text_file")
	_, err := b.invoke(t, outside)
	wantPermanent(t, err, task.CodeAgentFailed, `tool "read_text_file" reported an error`, "Access denied")
}
