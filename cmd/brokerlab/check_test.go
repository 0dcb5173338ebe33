package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateCheck = flag.Bool("update", false, "rewrite golden files")

// TestCheckGolden runs `brokerlab check NAME.yaml` from inside each of the
// scenario test directories and compares the exit code, stdout and stderr
// byte for byte with testdata/check/DIR-NAME.golden (rewrite with -update).
// The goldens pin the errors users see: a redesign of the loader must leave
// every one of them unchanged.
func TestCheckGolden(t *testing.T) {
	goldens, err := filepath.Abs(filepath.Join("testdata", "check"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", "..", "scenario", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, dir := range []string{"invalid", "warn", "valid"} {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*.yaml"))
		if len(files) == 0 {
			t.Fatalf("no scenario files in %s", dir)
		}
		for _, f := range files {
			name := filepath.Base(f)
			golden := filepath.Join(goldens, dir+"-"+strings.TrimSuffix(name, ".yaml")+".golden")
			t.Run(dir+"/"+name, func(t *testing.T) {
				t.Chdir(filepath.Join(root, dir))
				var stdout, stderr bytes.Buffer
				code := newCLI(&stdout, &stderr).main([]string{"check", name})
				got := fmt.Sprintf("exit %d\n-- stdout --\n%s-- stderr --\n%s", code, stdout.String(), stderr.String())
				if *updateCheck {
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update)", err)
				}
				if got != string(want) {
					t.Errorf("brokerlab check %s differs from %s:\ngot:\n%s\nwant:\n%s", name, golden, got, want)
				}
			})
			seen++
		}
	}
	if seen < 40 {
		t.Errorf("checked %d files, want at least 40", seen)
	}
}
