package lab

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// module is the root module's import path.
const module = "github.com/brokerlab/brokerlab"

// layers gives every package of the repository its layer, lowest first, as
// the README's "Packages" section draws them: a package may import its own
// layer and the ones below, never one above. The models never see a front
// end, scenario (the file format) never sees lab (the runtime), and lab
// never sees the player, the grader or the command.
var layers = map[string]int{
	"printable": 0, "sim": 0,
	"faults": 1, "producer": 1, "internal/stored": 1, "internal/ledgercmp": 1,
	"queue": 2, "pubsub": 2, "eventlog": 2, "outbox": 2, "projection": 2, "saga": 2,
	"sweep": 3, "simtest/core": 3, "live": 3,
	"simtest": 4, "scenario": 4,
	"lab":                  5,
	"tui":                  6,
	"contrib/watermillsim": 6,
	"exercise":             7,
	"cmd/brokerlab":        8,
	"bench":                9,
}

// packagesUnder returns the directory of every Go package under root (by
// its path relative to root), skipping testdata and hidden directories.
func packagesUnder(t *testing.T, root string) map[string]*build.Package {
	t.Helper()
	pkgs := map[string]*build.Package{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no buildable Go files here
		}
		rel, _ := filepath.Rel(root, path)
		pkgs[filepath.ToSlash(rel)] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// layerOf returns the layer of the package at rel (a package under bench
// or contrib/watermillsim is in its module's layer) and whether the table
// places it.
func layerOf(rel string) (int, bool) {
	if l, ok := layers[rel]; ok {
		return l, true
	}
	for _, nested := range []string{"bench", "contrib/watermillsim"} {
		if strings.HasPrefix(rel, nested+"/") {
			return layers[nested], true
		}
	}
	return 0, false
}

// upward returns, for every package of pkgs (by path relative to the
// repository), each import of a package of a higher layer, and each
// package or import the table does not place, in path order.
func upward(pkgs map[string]*build.Package) (problems []string, imports int) {
	var rels []string
	for rel := range pkgs {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		from, ok := layerOf(rel)
		if !ok {
			problems = append(problems, "package "+rel+" has no layer: place it in the table of layers_test.go and in the README's Packages section")
			continue
		}
		for _, imp := range pkgs[rel].Imports {
			dep, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			imports++
			to, ok := layerOf(dep)
			switch {
			case !ok:
				problems = append(problems, rel+" imports "+dep+", which has no layer")
			case to > from:
				problems = append(problems, rel+" (layer "+strconv.Itoa(from)+") imports "+dep+" (layer "+strconv.Itoa(to)+"): an import points upward")
			}
		}
	}
	return problems, imports
}

// TestNoImportPointsUp reads the imports of every package of the
// repository (test files aside) and reports every import of a package of a
// higher layer, and every package the layer table does not place.
func TestNoImportPointsUp(t *testing.T) {
	pkgs := packagesUnder(t, "..")
	problems, imports := upward(pkgs)
	for _, p := range problems {
		t.Error(p)
	}
	if len(pkgs) < 15 || imports < 40 {
		t.Fatalf("found %d packages and %d internal imports; the walk missed the repository", len(pkgs), imports)
	}
	for _, must := range []string{"scenario", "lab", "sim", "tui", "cmd/brokerlab"} {
		if pkgs[must] == nil {
			t.Errorf("package %s not found", must)
		}
	}
}

// TestUpwardImportsAreCaught feeds the check upward imports, so that it
// cannot pass by accident: scenario importing lab, a model importing a
// front end, lab importing the player, and a package nobody placed.
func TestUpwardImportsAreCaught(t *testing.T) {
	imports := func(deps ...string) *build.Package {
		p := &build.Package{}
		for _, d := range deps {
			p.Imports = append(p.Imports, module+"/"+d)
		}
		return p
	}
	problems, _ := upward(map[string]*build.Package{
		"scenario": imports("sim", "lab"),
		"queue":    imports("faults", "tui"),
		"lab":      imports("scenario", "exercise"),
		"nowhere":  imports("sim"),
		"sim":      imports(),
	})
	want := []string{
		"lab (layer 5) imports exercise (layer 7): an import points upward",
		"package nowhere has no layer: place it in the table of layers_test.go and in the README's Packages section",
		"queue (layer 2) imports tui (layer 6): an import points upward",
		"scenario (layer 4) imports lab (layer 5): an import points upward",
	}
	if strings.Join(problems, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
}
