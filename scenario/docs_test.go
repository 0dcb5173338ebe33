package scenario

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// docPath is the format reference, whose field tables are generated.
var docPath = filepath.Join("..", "docs", "scenario-format.md")

// TestDocs fails when a field table of docs/scenario-format.md differs
// from the one the field table generates; `go test ./scenario -run Docs
// -update` rewrites them.
func TestDocs(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	got, err := updateDoc(doc)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(docPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, doc) {
		t.Errorf("%s differs from the field table; run go test ./scenario -run Docs -update and read the diff:\n%s", docPath, firstDiff(doc, got))
	}
	// Every documented object has its table.
	for _, x := range objects {
		if x.o.title != "" && !bytes.Contains(doc, []byte(docBegin+defName(x.o)+" -->")) {
			t.Errorf("%s has no generated table for %s", docPath, defName(x.o))
		}
	}
}

// TestDocsDrift: a doc or a default changed in the table alone makes the
// committed doc differ, so TestDocs fails.
func TestDocsDrift(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	f := queueObj.fieldOf("visibility_timeout")
	for _, change := range []func(){
		func() { f.doc += " (changed)" },
		func() { f.def = 31 },
		func() { f.max-- },
	} {
		saved := *f
		change()
		got, err := updateDoc(doc)
		*f = saved
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(got, doc) {
			t.Errorf("a change to the field table left the generated doc as it was")
		}
	}
	if _, err := updateDoc([]byte("<!-- fields nothing -->\n<!-- end fields -->")); err == nil {
		t.Error("a marker naming no object was accepted")
	}
}
