package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// TestSchemaCommand: brokerlab schema prints the schema committed at the
// root of the repository, and takes no arguments.
func TestSchemaCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := newCLI(&stdout, &stderr).main([]string{"schema"}); code != exitOK || stderr.Len() > 0 {
		t.Fatalf("schema: exit %d, stderr %q", code, stderr.String())
	}
	if !bytes.Equal(stdout.Bytes(), scenario.JSONSchema()) {
		t.Error("brokerlab schema differs from scenario.JSONSchema")
	}
	committed, err := os.ReadFile(filepath.Join("..", "..", "scenario.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stdout.Bytes(), committed) {
		t.Error("brokerlab schema differs from scenario.schema.json; run go test ./scenario -run SchemaFile -update")
	}
	stdout.Reset()
	if code := newCLI(&stdout, &stderr).main([]string{"schema", "x"}); code != exitBadInput || stdout.Len() > 0 {
		t.Errorf("schema x: exit %d, stdout %q", code, stdout.String())
	}
}
