package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/brokerlab/brokerlab/exercise"
)

// exerciseSubcommands is the part of the help of brokerlab exercise that
// follows its usage line and description.
const exerciseSubcommands = `
Subcommands:
  brokerlab exercise list
      the exercises, each with its concept and the lesson to play first
  brokerlab exercise start [--clone DIR] NAME [DIR]
      write a workspace for exercise NAME into DIR (default brokerlab-NAME, next
      to the clone when run inside it); never overwrites a file that is there
  brokerlab exercise check [--seeds N] DIR
      grade the workspace DIR (runs go run . check in it)
  brokerlab exercise grade [--json] [--seeds N] DIR...
      grade several workspaces and print one table per exercise
  brokerlab exercise hint NAME [N]
      hint N (default 1) of exercise NAME
`

func (c *cli) cmdExercise(args []string) int {
	if len(args) == 0 {
		printUsage(c.stderr, "exercise")
		fmt.Fprint(c.stderr, exerciseSubcommands)
		return exitBadInput
	}
	sub, args := args[0], args[1:]
	if sub == "help" || isHelpFlag(sub) {
		printUsage(c.stdout, "exercise")
		fmt.Fprint(c.stdout, exerciseSubcommands)
		return exitOK
	}
	switch sub {
	case "list", "hint":
		// Neither takes flags, so a help flag is their only one: it
		// prints the subcommand's usage line, as --help does for the
		// others.
		if slices.ContainsFunc(args, isHelpFlag) {
			printUsage(c.stdout, "exercise "+sub)
			return exitOK
		}
		if sub == "hint" {
			return c.exerciseHint(args)
		}
		return c.exerciseList(args)
	case "start":
		return c.exerciseStart(args)
	case "check":
		return c.exerciseCheck(args)
	case "grade":
		return c.exerciseGrade(args)
	}
	fmt.Fprintf(c.stderr, "brokerlab exercise: unknown subcommand %q; it has: list, start, check, grade, hint\n", sub)
	return exitBadInput
}

func (c *cli) exerciseList(args []string) int {
	if len(args) != 0 {
		fmt.Fprintln(c.stderr, "brokerlab exercise list: takes no arguments")
		return exitBadInput
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tNAME\tAFTER LESSON\tCONCEPT")
	for _, e := range exercise.All() {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", e.Number, e.Name, e.Lesson, e.Title+": "+e.Concept)
	}
	tw.Flush()
	fmt.Fprintln(c.stdout, "\nStart one: brokerlab exercise start NAME [DIR]")
	return exitOK
}

func (c *cli) exerciseStart(args []string) int {
	fs := c.flags("exercise start")
	clone := fs.String("clone", "", "the brokerlab clone to build against (default: the clone holding the working directory)")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) < 1 || len(pos) > 2 {
		fmt.Fprintln(c.stderr, "brokerlab exercise start: want NAME [DIR]; the exercises are listed by: brokerlab exercise list")
		return exitBadInput
	}
	e, err := exercise.Lookup(pos[0])
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return exitBadInput
	}
	if *clone == "" {
		wd, err := os.Getwd()
		if err == nil {
			*clone, err = exercise.FindClone(wd)
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "%v\nRun brokerlab exercise start from inside your clone, or name it with --clone DIR.\n", err)
			return exitBadInput
		}
	}
	if abs, err := filepath.Abs(*clone); err == nil {
		*clone = abs
	}
	dir := "brokerlab-" + e.Name
	if len(pos) == 2 {
		dir = pos[1]
	} else if wd, err := os.Getwd(); err == nil && strings.HasPrefix(wd+string(filepath.Separator), *clone+string(filepath.Separator)) {
		// From inside the clone, the default goes next to it: a
		// workspace is a module of its own.
		dir = filepath.Join(filepath.Dir(*clone), dir)
	}
	w, err := e.Start(dir, *clone)
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return exitBadInput
	}
	fmt.Fprintf(c.stdout, "Exercise %d, %s: workspace %s\n", e.Number, e.Title, w.Dir)
	if len(w.Wrote) > 0 {
		fmt.Fprintf(c.stdout, "  wrote: %s\n", strings.Join(w.Wrote, ", "))
	}
	if len(w.Kept) > 0 {
		fmt.Fprintf(c.stdout, "  kept as they were: %s\n", strings.Join(w.Kept, ", "))
	}
	fmt.Fprintf(c.stdout, "Play the lesson first: brokerlab play %s\nThen write %s and grade it:\n  cd %s && go test\n", e.Lesson, e.File, dir)
	return exitOK
}

// goRun runs go run . with args in dir and returns its output.
func goRun(dir string, args ...string) (stdout, stderr []byte, err error) {
	cmd := exec.Command("go", append([]string{"run", "."}, args...)...)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.Bytes(), err
}

// isWorkspace says what is wrong with dir as a workspace, or "".
func isWorkspace(dir string) string {
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return dir + " does not exist; make a workspace there with brokerlab exercise start NAME " + dir
	case err != nil:
		return fmt.Sprintf("%s cannot be read: %v", dir, pathError(err))
	case !fi.IsDir():
		return dir + " is not a directory; a workspace is the directory brokerlab exercise start NAME DIR made"
	}
	main, err := os.ReadFile(filepath.Join(dir, "main.go"))
	if err != nil || !bytes.Contains(main, []byte("exercise.Main(")) {
		return dir + " is not an exercise workspace (no main.go calling exercise.Main); make one with brokerlab exercise start NAME DIR"
	}
	return ""
}

func (c *cli) exerciseCheck(args []string) int {
	fs := c.flags("exercise check")
	seeds := fs.Int("seeds", exercise.DefaultSeeds, "how many seeds")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(c.stderr, "brokerlab exercise check: want one workspace DIR")
		return exitBadInput
	}
	if why := isWorkspace(pos[0]); why != "" {
		fmt.Fprintln(c.stderr, why)
		return exitBadInput
	}
	out, errOut, err := goRun(pos[0], "check", "-seeds", strconv.Itoa(*seeds))
	c.stdout.Write(out)
	c.stderr.Write(errOut)
	if err != nil {
		if x, ok := err.(*exec.ExitError); ok && x.ExitCode() == 1 && len(out) > 0 {
			return exitFailed
		}
		return exitBadInput
	}
	return exitOK
}

// gradeRow is one workspace of a teacher's grading.
type gradeRow struct {
	Dir string `json:"dir"`
	// Student labels the workspace in the table: its directory's name,
	// or, when another workspace has the same name, the shortest end of
	// its path that no other workspace shares (c1/sam, c2/sam).
	Student string           `json:"student"`
	Report  *exercise.Report `json:"report,omitempty"`
	// Error says why the workspace could not be graded (it does not
	// build).
	Error string `json:"error,omitempty"`
}

func (c *cli) exerciseGrade(args []string) int {
	fs := c.flags("exercise grade")
	asJSON := fs.Bool("json", false, "print the gradings as JSON")
	seeds := fs.Int("seeds", exercise.DefaultSeeds, "how many seeds per workspace")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		fmt.Fprintln(c.stderr, "brokerlab exercise grade: want one or more workspace DIRs")
		return exitBadInput
	}
	if *seeds <= 0 {
		fmt.Fprintf(c.stderr, "brokerlab exercise grade: --seeds must be at least 1, not %d\n", *seeds)
		return exitBadInput
	}
	pos = c.distinctWorkspaces(pos)
	labels := studentLabels(pos)
	var rows []gradeRow
	for i, dir := range pos {
		row := gradeRow{Dir: dir, Student: labels[i]}
		if why := isWorkspace(dir); why != "" {
			row.Error = why
			rows = append(rows, row)
			continue
		}
		out, errOut, err := goRun(dir, "json", "-seeds", strconv.Itoa(*seeds))
		var rep exercise.Report
		if jerr := json.Unmarshal(out, &rep); jerr != nil || rep.Exercise == "" {
			msg := firstError(errOut)
			if msg == "" && err != nil {
				msg = err.Error()
			}
			row.Error = "cannot grade: " + msg
		} else {
			rep.Student = row.Student
			row.Report = &rep
		}
		rows = append(rows, row)
	}
	if *asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rows)
	} else {
		c.printGrades(rows)
	}
	for _, r := range rows {
		if r.Report == nil || !r.Report.Pass() {
			return exitFailed
		}
	}
	return exitOK
}

// distinctWorkspaces returns dirs without those that name a directory
// named before them (the same path spelled otherwise, or the same
// directory through a link), and says on stderr which were left out.
func (c *cli) distinctWorkspaces(dirs []string) []string {
	type seen struct {
		dir, abs string
		fi       os.FileInfo
	}
	var keep []string
	var kept []seen
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			abs = filepath.Clean(dir)
		}
		fi, _ := os.Stat(dir)
		first := ""
		for _, k := range kept {
			if k.abs == abs || (fi != nil && k.fi != nil && os.SameFile(k.fi, fi)) {
				first = k.dir
				break
			}
		}
		if first != "" {
			fmt.Fprintf(c.stderr, "brokerlab exercise grade: %s is the same workspace as %s; it is graded once\n", dir, first)
			continue
		}
		keep = append(keep, dir)
		kept = append(kept, seen{dir, abs, fi})
	}
	return keep
}

// studentLabels labels each of dirs, which name distinct directories, by
// the name of its directory, or, when another has the same name, by the
// shortest end of its absolute path that no other ends in (c1/sam and
// c2/sam for c1/sam and c2/sam). A path too short to have such an end
// (/sam beside /a/sam) is labelled as it was given.
func studentLabels(dirs []string) []string {
	parts := make([][]string, len(dirs))
	for i, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			abs = filepath.Clean(dir)
		}
		for _, p := range strings.Split(filepath.ToSlash(abs), "/") {
			if p != "" {
				parts[i] = append(parts[i], p)
			}
		}
	}
	// suffix is the last n parts of path i, or nil when it has fewer.
	suffix := func(i, n int) []string {
		if n > len(parts[i]) {
			return nil
		}
		return parts[i][len(parts[i])-n:]
	}
	labels := make([]string, len(dirs))
	for i, dir := range dirs {
		labels[i] = filepath.Clean(dir)
		for n := 1; n <= len(parts[i]); n++ {
			end := suffix(i, n)
			shared := false
			for j := range dirs {
				if j != i && slices.Equal(end, suffix(j, n)) {
					shared = true
					break
				}
			}
			if !shared {
				labels[i] = filepath.Join(end...)
				break
			}
		}
	}
	return labels
}

// firstError returns the first line of the go command's output that is
// not a "# package" header, with a mark when more follow.
func firstError(out []byte) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	switch len(lines) {
	case 0:
		return ""
	case 1:
		return lines[0]
	}
	return lines[0] + " ..."
}

// printGrades prints one table per exercise: a row per student, a column
// per property (pass, FAIL, or - for a property the code never reached,
// which is no pass), and the seeds survived.
func (c *cli) printGrades(rows []gradeRow) {
	var order []string
	by := map[string][]gradeRow{}
	for _, r := range rows {
		name := ""
		if r.Report != nil {
			name = r.Report.Exercise
		}
		if _, ok := by[name]; !ok && name != "" {
			order = append(order, name)
		}
		by[name] = append(by[name], r)
	}
	// What could not be graded comes last, wherever it was named.
	if len(by[""]) > 0 {
		order = append(order, "")
	}
	for i, name := range order {
		if i > 0 {
			fmt.Fprintln(c.stdout)
		}
		group := by[name]
		tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
		if name == "" {
			fmt.Fprintln(c.stdout, "not graded:")
			for _, r := range group {
				fmt.Fprintf(tw, "%s\t%s\n", r.Dir, r.Error)
			}
			tw.Flush()
			continue
		}
		fmt.Fprintf(c.stdout, "exercise %s:\n", name)
		head := []string{"STUDENT"}
		for _, p := range group[0].Report.Props {
			head = append(head, p.ID)
		}
		head = append(head, "SEEDS SURVIVED")
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		for _, r := range group {
			cells := []string{r.Report.Student}
			for _, p := range r.Report.Props {
				switch {
				case p.Failed > 0 || r.Report.Error != "":
					cells = append(cells, "FAIL")
				case p.Judged == 0:
					cells = append(cells, "-") // never reached: no pass
				default:
					cells = append(cells, "pass")
				}
			}
			cells = append(cells, fmt.Sprintf("%d/%d", r.Report.Passed, r.Report.Seeds))
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		tw.Flush()
	}
}

func (c *cli) exerciseHint(args []string) int {
	if len(args) < 1 || len(args) > 2 {
		fmt.Fprintln(c.stderr, "brokerlab exercise hint: want NAME [N]")
		return exitBadInput
	}
	e, err := exercise.Lookup(args[0])
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return exitBadInput
	}
	n := 1
	if len(args) == 2 {
		if n, err = strconv.Atoi(args[1]); err != nil {
			fmt.Fprintf(c.stderr, "brokerlab exercise hint: %q is not a number; %s has hints 1 to %d\n", args[1], e.Name, len(e.Hints))
			return exitBadInput
		}
	}
	h, total, err := e.Hint(n)
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return exitBadInput
	}
	fmt.Fprintf(c.stdout, "Hint %d of %d for %s: %s\n", n, total, e.Name, h)
	return exitOK
}
