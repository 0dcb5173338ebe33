package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var schemaPath = filepath.Join("..", "scenario.schema.json")

// TestSchemaFile fails when scenario.schema.json differs from the schema
// the field table generates; -update rewrites it.
func TestSchemaFile(t *testing.T) {
	got := JSONSchema()
	if !bytes.Equal(got, JSONSchema()) {
		t.Fatal("JSONSchema differs between two calls")
	}
	if *update {
		if err := os.WriteFile(schemaPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from JSONSchema(); run go test ./scenario -run SchemaFile -update and read the diff:\n%s", schemaPath, firstDiff(want, got))
	}
}

// compileSchema compiles the committed schema with a real validator.
func compileSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(JSONSchema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(SchemaURL, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(SchemaURL)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// errUnsupported marks YAML the schema never sees as JSON: anchors,
// aliases, tags and merge keys.
var errUnsupported = errors.New("not plain YAML")

// yamlValue reads a YAML document as the JSON value an editor validates:
// mappings, lists, strings, numbers (json.Number), booleans and null.
// An unquoted scalar the loader takes as a number (1e3, 1_000) is one.
func yamlValue(data []byte) (any, error) {
	c := &collector{file: "x"}
	data = bytes.TrimPrefix(data, utf8BOM)
	if p, msg := checkEncoding(data); msg != "" {
		return nil, fmt.Errorf("%v: %s", p, msg)
	}
	body, ok := parse(c, data)
	if !ok || body == nil {
		return nil, fmt.Errorf("no document: %v", c.result())
	}
	return nodeValue(body)
}

func nodeValue(n ast.Node) (any, error) {
	switch x := n.(type) {
	case nil, *ast.NullNode:
		return nil, nil
	case *ast.MappingNode:
		m := map[string]any{}
		for _, kv := range x.Values {
			if err := pairValue(m, kv); err != nil {
				return nil, err
			}
		}
		return m, nil
	case *ast.MappingValueNode:
		m := map[string]any{}
		return m, pairValue(m, x)
	case *ast.SequenceNode:
		out := []any{}
		for _, v := range x.Values {
			e, err := nodeValue(v)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	case *ast.BoolNode:
		return x.Value, nil
	case *ast.IntegerNode:
		return json.Number(fmt.Sprint(x.Value)), nil
	case *ast.FloatNode:
		return json.Number(strconv.FormatFloat(x.Value, 'g', -1, 64)), nil
	case *ast.InfinityNode:
		if x.Value < 0 {
			return json.Number("-1e400"), nil
		}
		return json.Number("1e400"), nil
	case *ast.NanNode:
		return nil, errUnsupported
	case *ast.StringNode:
		if txt, ok := numberText(x); ok {
			return json.Number(strings.ReplaceAll(txt, "_", "")), nil
		}
		return x.Value, nil
	case *ast.LiteralNode:
		if x.Value == nil {
			return "", nil
		}
		return x.Value.Value, nil
	}
	return nil, errUnsupported
}

func pairValue(m map[string]any, kv *ast.MappingValueNode) error {
	k, ok := kv.Key.(*ast.StringNode)
	if !ok {
		return errUnsupported
	}
	v, err := nodeValue(kv.Value)
	if err != nil {
		return err
	}
	m[k.Value] = v
	return nil
}

// validFiles are every lesson and every file that loads.
func validFiles(t *testing.T) []string {
	var files []string
	for _, g := range []string{"lessons/*.yaml", "testdata/valid/*.yaml", "testdata/warn/*.yaml"} {
		fs, _ := filepath.Glob(g)
		files = append(files, fs...)
	}
	if len(files) < 25 {
		t.Fatalf("only %d valid files", len(files))
	}
	return files
}

// TestSchemaValidates: the schema accepts every lesson and every valid
// test file.
func TestSchemaValidates(t *testing.T) {
	sch := compileSchema(t)
	files := validFiles(t)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := yamlValue(data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s: the schema rejects a valid file:\n%v", f, err)
		}
	}
	t.Logf("%d valid files validate", len(files))
}

// schemaCannot lists the invalid test files the schema accepts, because
// none of their mistakes is one a JSON Schema can express, and why. Every
// other invalid file is rejected by it (files with mistakes of both kinds
// are, for the ones it expresses).
var schemaCannot = map[string]string{
	"alias-bomb.yaml":          "anchors and aliases are YAML, not JSON: an editor expands them",
	"anchors.yaml":             "anchors and aliases are YAML, not JSON: an editor expands them",
	"syntax-error.yaml":        "not YAML, so no document to validate",
	"empty.yaml":               "an empty file is no document",
	"latin1.yaml":              "an encoding is no JSON value",
	"utf16-be.yaml":            "an encoding is no JSON value",
	"utf16-le.yaml":            "an encoding is no JSON value",
	"utf16-no-bom.yaml":        "an encoding is no JSON value",
	"utf32.yaml":               "an encoding is no JSON value",
	"dlq-kind.yaml":            "references between names (a dead-letter queue of another kind)",
	"duplicate-names.yaml":     "uniqueness of names across the file",
	"fault-instance-glob.yaml": "patterns matched against the names of the file",
	"partition-fault.yaml":     "partition counts grown by faults and actions",
	"run-length.yaml":          "relations between fields (ticks or until, not both)",
	"run-missing.yaml":         "relations between fields (run needs ticks or until)",
	"strict-batch.yaml":        "a consumer's batch bounded by its queue's strict",
	"unknown-reference.yaml":   "references between names",
}

// TestSchemaRejects: the schema rejects every invalid test file whose
// mistake it can express, and accepts exactly those listed in
// schemaCannot, so the list stays true.
func TestSchemaRejects(t *testing.T) {
	sch := compileSchema(t)
	files, _ := filepath.Glob("testdata/invalid/*.yaml")
	rejected := 0
	for _, f := range files {
		name := filepath.Base(f)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		why, cannot := schemaCannot[name]
		v, err := yamlValue(data)
		if err != nil {
			if !cannot {
				t.Errorf("%s: %v, and schemaCannot does not list it", name, err)
			}
			continue
		}
		err = sch.Validate(v)
		switch {
		case err == nil && !cannot:
			t.Errorf("%s: the schema accepts an invalid file, and schemaCannot does not list it", name)
		case err != nil && cannot:
			t.Errorf("%s: the schema rejects it, but schemaCannot says %q; remove it from the list", name, why)
		case err != nil:
			rejected++
		}
	}
	t.Logf("%d invalid files: %d rejected by the schema, %d it cannot express", len(files), rejected, len(schemaCannot))
	if rejected < 15 {
		t.Errorf("the schema rejects only %d invalid files", rejected)
	}
}

// expressible are the loader's messages about what a JSON Schema states:
// unknown fields, types, enums, ranges, required fields, lengths and
// characters, list sizes.
var expressible = regexp.MustCompile(`unknown field "|` +
	` must be (an integer|a whole number|between|true or false|a string|a list|a mapping|a number|1 \(|none, or|ticks \()|` +
	` is not allowed|must not be empty|unknown fault point|is not a valid name|is empty; a name|bytes long; a name|` +
	`^seed |must be one line|control character|has \d+ entries|empty entry in|names exactly one of|` +
	`^metric "[^"]*"( must|: unknown)|set of variant "[^"]*" is empty|has an empty part|bytes long; at most`)

// relational are loader messages worded like ranges that are about
// relations: add_partitions needs a count of at least 1, a strict queue
// caps batch and max_in_flight.
var relational = regexp.MustCompile(`^count must be between 1 and 1024|^batch of consumer|of a strict queue must be`)

// needsExpressible are the "needs the field" errors of required fields.
func needsExpressible(msg string) bool {
	for _, x := range objects {
		needs := x.o.needs
		if needs == "" {
			needs = x.o.what
		}
		if strings.HasPrefix(msg, needs+" needs the field ") {
			f := strings.Trim(strings.TrimPrefix(msg, needs+" needs the field "), `"`)
			for _, fl := range x.o.fields {
				if fl.name == f && fl.required {
					return true
				}
			}
		}
	}
	return false
}

// mutations returns deterministic variations of the document v: each
// mapping key dropped and misspelt, each value replaced by values of
// other types and out of range, each enum word swapped. Each is given as
// a description and the new document.
func mutations(v any) []mutation {
	var out []mutation
	var walk func(path []string, x any, set func(any))
	walk = func(path []string, x any, set func(any)) {
		p := strings.Join(path, ".")
		switch y := x.(type) {
		case map[string]any:
			keys := make([]string, 0, len(y))
			for k := range y {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				val := y[k]
				out = append(out, mutation{p + " drop " + k, func() {
					delete(y, k)
				}, func() { y[k] = val }})
				out = append(out, mutation{p + " rename " + k, func() {
					delete(y, k)
					y[k+"s"] = val
				}, func() { delete(y, k+"s"); y[k] = val }})
				walk(append(path, k), val, func(n any) { y[k] = n })
			}
		case []any:
			for i := range y {
				if i > 1 {
					break
				}
				walk(append(path, strconv.Itoa(i)), y[i], func(n any) { y[i] = n })
			}
		}
		if len(path) == 0 {
			return
		}
		for _, r := range replacements(x) {
			out = append(out, mutation{fmt.Sprintf("%s = %v", p, r), func() { set(r) }, func() { set(x) }})
		}
	}
	walk(nil, v, nil)
	return out
}

type mutation struct {
	what        string
	apply, undo func()
}

// replacements are the values tried in place of x.
func replacements(x any) []any {
	switch y := x.(type) {
	case json.Number:
		f, _ := y.Float64()
		return []any{"ten", json.Number("-1"), json.Number("0"), json.Number("2.5"), json.Number(strconv.FormatFloat(math.Floor(f)+1e6, 'f', -1, 64)), true, nil}
	case string:
		return []any{json.Number("7"), "", "x\ty", "nope", strings.Repeat("a", 65), []any{}, y + "\n2"}
	case bool:
		return []any{"yes", json.Number("1"), !y}
	case map[string]any:
		return []any{"mapping", []any{}}
	case []any:
		return []any{"list", map[string]any{}, []any{nil}}
	}
	return []any{json.Number("1")}
}

// TestSchemaAgreesWithLoader: on hundreds of documents made from the
// valid files by mutations, the schema never rejects what the loader
// accepts, accepts everything the loader accepts, and rejects everything
// the loader rejects only for mistakes a schema expresses.
func TestSchemaAgreesWithLoader(t *testing.T) {
	sch := compileSchema(t)
	var total, bothAccept, bothReject, loaderOnly int
	for _, f := range validFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := yamlValue(data)
		if err != nil {
			t.Fatal(err)
		}
		ms := mutations(doc)
		// A sample of each file: every k-th mutation, so the test stays
		// fast and covers every file.
		step := max(1, len(ms)/60)
		for i := 0; i < len(ms); i += step {
			m := ms[i]
			m.apply()
			text, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			inst, err := yamlValue(text)
			if err != nil {
				t.Fatalf("%s %s: %v", f, m.what, err)
			}
			m.undo()
			total++
			schemaErr := sch.Validate(inst)
			_, loadErr := Load("m.yaml", text)
			switch {
			case loadErr == nil && schemaErr == nil:
				bothAccept++
			case loadErr == nil:
				t.Errorf("%s, %s: the loader accepts, the schema rejects:\n%v", f, m.what, schemaErr)
			case schemaErr != nil:
				bothReject++
			default:
				var errs *Errors
				errors.As(loadErr, &errs)
				all := true
				for _, e := range errs.List {
					// The values a variant sets are checked where they
					// land, which the schema does not follow.
					if strings.HasPrefix(e.Msg, "variant \"") || relational.MatchString(e.Msg) ||
						!expressible.MatchString(e.Msg) && !needsExpressible(e.Msg) {
						all = false
					}
				}
				if all {
					t.Errorf("%s, %s: the schema accepts what the loader rejects for a mistake a schema expresses:\n%v", f, m.what, loadErr)
				}
				loaderOnly++
			}
		}
	}
	t.Logf("%d mutated documents: %d accepted by both, %d rejected by both, %d rejected by the loader only (references, relations between fields)",
		total, bothAccept, bothReject, loaderOnly)
	if total < 300 || bothReject < 100 || bothAccept < 20 {
		t.Errorf("too small a sample: %d documents, %d rejected by both, %d accepted by both", total, bothReject, bothAccept)
	}
}

// modeline is the first line of a scenario file that points
// yaml-language-server at the schema.
const modeline = "# yaml-language-server: $schema="

// TestModelines: every lesson and every valid test file starts with the
// modeline, and its path leads to the committed schema.
func TestModelines(t *testing.T) {
	files, _ := filepath.Glob("lessons/*.yaml")
	valid, _ := filepath.Glob("testdata/valid/*.yaml")
	files = append(files, valid...)
	want, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(data), "\n")
		rel, ok := strings.CutPrefix(first, modeline)
		if !ok {
			t.Errorf("%s starts with %q, not the modeline %s...", f, first, modeline)
			continue
		}
		got, err := os.ReadFile(filepath.Join(filepath.Dir(f), filepath.FromSlash(rel)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: the modeline's %s is not scenario.schema.json (%v)", f, rel, err)
		}
	}
}
