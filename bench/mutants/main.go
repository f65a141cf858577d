// Command mutants runs the mutants gremlins finds in one package, each
// against only the tests that execute the mutated line, instead of the
// package's whole suite. On a package whose suite takes half a minute
// (poller, api) and whose mutants each touch a few of its tests, that is
// several times faster, with the same verdicts: a test that never reaches the
// mutated line cannot see the mutant.
//
// bench/mutation.sh runs it when MUTATION_SELECT=1; by hand:
//
//	gremlins unleash --dry-run ./poller > /tmp/poller.list
//	go run ./bench/mutants -pkg poller -list /tmp/poller.list -workers 2
//
// It reads gremlins' dry-run list (RUNNABLE and NOT COVERED mutants, with
// their kind and file:line:column), builds the package's tests once with
// coverage and runs each top-level test alone to learn which blocks it
// executes, then, for each mutant, writes the mutated file aside, builds
// the tests with it through go's -overlay (the tree is never touched) and
// runs the tests that cover the line. It prints one line per mutant in
// gremlins' words (KILLED, LIVED, TIMED OUT, NOT VIABLE, NOT COVERED), so
// bench/mutation.sh counts its output as it counts gremlins'.
//
// An operator outside every coverage block is in a switch's case
// expression or in a package-level declaration, which go's cover does not
// count: the first is run against the tests that run the innermost
// statement around it that a block holds (the switch), the second against
// every test (package initialization runs in all of them). gremlins calls
// both NOT COVERED.
//
// -sample N runs N mutants drawn at random from the list (-seed makes the
// draw repeatable), for an estimate of a package's efficacy when all of its
// mutants would take hours; -run keeps only the tests a regexp matches, to
// check quickly what new tests kill (the verdicts are then theirs alone).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A mutant is one of gremlins' mutations: its kind and where its operator
// is, the file relative to the package's directory.
type mutant struct {
	Kind string
	File string
	Line int
	Col  int
}

func (m mutant) String() string {
	return fmt.Sprintf("%s at %s:%d:%d", m.Kind, m.File, m.Line, m.Col)
}

// A block is a coverage block: lines and columns, inclusive at both ends
// as go's cover tool writes them.
type block struct {
	file                     string
	line0, col0, line1, col1 int
}

func (b block) has(line, col int) bool {
	if line < b.line0 || line > b.line1 {
		return false
	}
	if line == b.line0 && col < b.col0 {
		return false
	}
	if line == b.line1 && col > b.col1 {
		return false
	}
	return true
}

var listLine = regexp.MustCompile(`^\s*(RUNNABLE|NOT COVERED)\s+(\S+) at (.+):(\d+):(\d+)\s*$`)

// readList reads gremlins' dry-run output.
func readList(path string) ([]mutant, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ms []mutant
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := listLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		line, _ := strconv.Atoi(m[4])
		col, _ := strconv.Atoi(m[5])
		ms = append(ms, mutant{Kind: m[2], File: m[3], Line: line, Col: col})
	}
	return ms, sc.Err()
}

// replacements are gremlins' mutators (v0.6.0's mappings), by kind and
// original operator.
var replacements = map[string]map[token.Token]token.Token{
	"ARITHMETIC_BASE": {
		token.ADD: token.SUB, token.SUB: token.ADD, token.MUL: token.QUO,
		token.QUO: token.MUL, token.REM: token.MUL,
	},
	"CONDITIONALS_BOUNDARY": {
		token.GTR: token.GEQ, token.GEQ: token.GTR, token.LSS: token.LEQ, token.LEQ: token.LSS,
	},
	"CONDITIONALS_NEGATION": {
		token.EQL: token.NEQ, token.NEQ: token.EQL, token.GEQ: token.LSS,
		token.GTR: token.LEQ, token.LEQ: token.GTR, token.LSS: token.GEQ,
	},
	"INCREMENT_DECREMENT": {token.INC: token.DEC, token.DEC: token.INC},
	"INVERT_NEGATIVES":    {token.SUB: token.ADD},
	// Not on by default in gremlins (--invert-logical and the others):
	// one side of a condition, a loop's exit, an accumulation.
	"INVERT_LOGICAL":  {token.LAND: token.LOR, token.LOR: token.LAND},
	"INVERT_LOOPCTRL": {token.BREAK: token.CONTINUE, token.CONTINUE: token.BREAK},
	"INVERT_ASSIGNMENTS": {
		token.ADD_ASSIGN: token.SUB_ASSIGN, token.SUB_ASSIGN: token.ADD_ASSIGN,
		token.MUL_ASSIGN: token.QUO_ASSIGN, token.QUO_ASSIGN: token.MUL_ASSIGN,
	},
	"REMOVE_SELF_ASSIGNMENTS": {
		token.ADD_ASSIGN: token.ASSIGN, token.SUB_ASSIGN: token.ASSIGN, token.MUL_ASSIGN: token.ASSIGN,
		token.QUO_ASSIGN: token.ASSIGN, token.REM_ASSIGN: token.ASSIGN, token.AND_ASSIGN: token.ASSIGN,
		token.OR_ASSIGN: token.ASSIGN, token.XOR_ASSIGN: token.ASSIGN, token.SHL_ASSIGN: token.ASSIGN,
		token.SHR_ASSIGN: token.ASSIGN, token.AND_NOT_ASSIGN: token.ASSIGN,
	},
}

// apply returns src with the mutant's operator replaced.
func apply(src []byte, m mutant) ([]byte, error) {
	fset := token.NewFileSet()
	file := fset.AddFile(m.File, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			return nil, fmt.Errorf("%s: no operator at %d:%d", m.File, m.Line, m.Col)
		}
		p := fset.Position(pos)
		if p.Line != m.Line || p.Column != m.Col {
			continue
		}
		to, ok := replacements[m.Kind][tok]
		if !ok {
			return nil, fmt.Errorf("%s: %s at %d:%d is not a %s operator", m.File, tok, m.Line, m.Col, m.Kind)
		}
		off := file.Offset(pos)
		out := make([]byte, 0, len(src)+1)
		out = append(out, src[:off]...)
		out = append(out, to.String()...)
		out = append(out, src[off+len(tok.String()):]...)
		return out, nil
	}
}

type runner struct {
	module, pkg, dir string // module root, package path inside it, its absolute directory
	importPath       string
	tmp              string
	coeff            float64
	minTimeout       time.Duration

	tests   []string                 // top-level tests that pass alone
	took    map[string]time.Duration // each one's time alone
	covers  map[string][]block       // blocks each test executes
	failing []string                 // tests that fail alone, unmutated: never selected
	only    *regexp.Regexp           // when set, the only tests considered
	blocks  []block                  // every block of the package, run or not
}

func main() {
	pkg := flag.String("pkg", "", "package directory inside the module (poller, storage/badger)")
	list := flag.String("list", "", "gremlins' dry-run output for the package")
	workers := flag.Int("workers", 1, "mutants built and run at once")
	coeff := flag.Float64("timeout-coefficient", 15, "a mutant's tests may take this many times their time unmutated")
	sample := flag.Int("sample", 0, "run this many of the listed mutants, drawn at random (0: all of them)")
	seed := flag.Uint64("seed", 1, "the draw's seed, so that a sample can be run again")
	only := flag.String("run", "", "consider only the top-level tests this regexp matches (a quick check of new tests; the verdicts are then those tests' alone)")
	flag.Parse()
	if *pkg == "" || *list == "" {
		fmt.Fprintln(os.Stderr, "usage: mutants -pkg DIR -list GREMLINS_DRY_RUN_OUTPUT [-workers N]")
		os.Exit(2)
	}
	var onlyRe *regexp.Regexp
	if *only != "" {
		var err error
		if onlyRe, err = regexp.Compile(*only); err != nil {
			fmt.Fprintln(os.Stderr, "mutants: -run:", err)
			os.Exit(2)
		}
	}
	if err := run(*pkg, *list, *workers, *coeff, onlyRe, *sample, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(1)
	}
}

func run(pkg, list string, workers int, coeff float64, only *regexp.Regexp, sample int, seed uint64) error {
	ms, err := readList(list)
	if err != nil {
		return err
	}
	if len(ms) == 0 {
		return fmt.Errorf("%s lists no mutants (is it gremlins' --dry-run output?)", list)
	}
	if sample > 0 && sample < len(ms) {
		all := len(ms)
		ms = draw(ms, sample, seed)
		fmt.Printf("A sample of %d of the %d mutants listed (seed %d)\n", len(ms), all, seed)
	}
	module, err := goOut("", "list", "-m", "-f", "{{.Dir}}")
	if err != nil {
		return err
	}
	importPath, err := goOut(module, "list", "./"+pkg)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "mutants-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	r := &runner{
		module: module, pkg: pkg, dir: filepath.Join(module, pkg), importPath: importPath,
		tmp: tmp, coeff: coeff, minTimeout: 10 * time.Second,
		took: map[string]time.Duration{}, covers: map[string][]block{}, only: only,
	}
	start := time.Now()
	if err := r.coverage(workers); err != nil {
		return err
	}
	fmt.Printf("Coverage of %d tests, each alone, in %s", len(r.tests), time.Since(start).Round(time.Second))
	if len(r.failing) > 0 {
		fmt.Printf(" (%d fail alone, unmutated, and are never selected: %s)", len(r.failing), strings.Join(r.failing, " "))
	}
	fmt.Println()

	jobs := make(chan mutant)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for m := range jobs {
				status, detail := r.mutant(w, m)
				mu.Lock()
				fmt.Printf("%12s %s%s\n", status, m, detail)
				mu.Unlock()
			}
		}(w)
	}
	for _, m := range ms {
		jobs <- m
	}
	close(jobs)
	wg.Wait()
	fmt.Printf("Done in %s\n", time.Since(start).Round(time.Second))
	return nil
}

// draw returns n of ms at random (a permutation seeded by seed, so the same
// sample can be run again), in the draw's order: a run cut short (by
// bench/mutation.sh's budget) is still a random sample, only smaller.
func draw(ms []mutant, n int, seed uint64) []mutant {
	idx := rand.New(rand.NewPCG(seed, 0)).Perm(len(ms))[:n]
	out := make([]mutant, n)
	for i, k := range idx {
		out[i] = ms[k]
	}
	return out
}

func goOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		return "", fmt.Errorf("go %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

var topLevel = regexp.MustCompile(`^(Test|Example|Fuzz)`)

// coverage builds the tests with coverage of the package, lists its
// top-level tests, and runs each alone to learn what it executes.
func (r *runner) coverage(workers int) error {
	bin := filepath.Join(r.tmp, "cover.test")
	if _, err := goOut(r.module, "test", "-c", "-cover", "-covermode=set", "-coverpkg="+r.importPath, "-o", bin, "./"+r.pkg); err != nil {
		return err
	}
	cmd := exec.Command(bin, "-test.list", ".")
	cmd.Dir = r.dir
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("listing %s's tests: %v", r.pkg, err)
	}
	var names []string
	for _, n := range strings.Fields(string(out)) {
		if topLevel.MatchString(n) && (r.only == nil || r.only.MatchString(n)) {
			names = append(names, n)
		}
	}
	jobs := make(chan string)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range jobs {
				prof := filepath.Join(r.tmp, "cover-"+n+".out")
				t0 := time.Now()
				cmd := exec.Command(bin, "-test.run", "^"+regexp.QuoteMeta(n)+"$", "-test.count=1",
					"-test.coverprofile="+prof, "-test.timeout=10m")
				cmd.Dir = r.dir
				err := cmd.Run()
				took := time.Since(t0)
				var blocks, all []block
				if err == nil {
					blocks, all, err = r.readProfile(prof)
				}
				mu.Lock()
				if r.blocks == nil {
					r.blocks = all
				}
				if err != nil {
					r.failing = append(r.failing, n)
				} else {
					r.tests = append(r.tests, n)
					r.took[n] = took
					r.covers[n] = blocks
				}
				mu.Unlock()
			}
		}()
	}
	for _, n := range names {
		jobs <- n
	}
	close(jobs)
	wg.Wait()
	sort.Strings(r.tests)
	sort.Strings(r.failing)
	return nil
}

// readProfile returns the blocks of the package's own files that ran, and
// all of them.
func (r *runner) readProfile(path string) (ran, all []block, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	prefix := r.importPath + "/"
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		// path/file.go:l0.c0,l1.c1 statements count
		colon := strings.LastIndex(line, ":")
		fields := strings.Fields(line[colon+1:])
		if len(fields) != 3 {
			continue
		}
		var b block
		if _, err := fmt.Sscanf(fields[0], "%d.%d,%d.%d", &b.line0, &b.col0, &b.line1, &b.col1); err != nil {
			return nil, nil, fmt.Errorf("%s: %q: %v", path, line, err)
		}
		b.file = line[len(prefix):colon]
		all = append(all, b)
		if fields[2] != "0" {
			ran = append(ran, b)
		}
	}
	return ran, all, sc.Err()
}

// selecting returns the tests that execute the mutant's operator. An
// operator outside every block is in a switch's case expression (go's cover
// counts the statements of a case, not its expression) or at package level.
func (r *runner) selecting(m mutant) []string {
	var sel []string
	for _, n := range r.tests {
		for _, b := range r.covers[n] {
			if b.file == m.File && b.has(m.Line, m.Col) {
				sel = append(sel, n)
				break
			}
		}
	}
	if len(sel) > 0 {
		return sel
	}
	outer, inFunc := r.enclosing(m)
	if !inFunc {
		// A package-level declaration: initialized before any test runs.
		return r.tests
	}
	// The innermost node around the operator whose start a block holds:
	// for a case expression, the switch statement (in the block before
	// its body), whose tests evaluate the case.
	for _, at := range outer {
		for _, n := range r.tests {
			for _, b := range r.covers[n] {
				if b.file == m.File && b.has(at[0], at[1]) {
					sel = append(sel, n)
					break
				}
			}
		}
		if len(sel) > 0 {
			return sel
		}
		for _, b := range r.blocks {
			if b.file == m.File && b.has(at[0], at[1]) {
				return nil // a block no test runs
			}
		}
	}
	return nil
}

// enclosing returns the starts (line, column) of the nodes around the
// mutant, innermost first, up to its function; false when the mutant is
// outside every function.
func (r *runner) enclosing(m mutant) ([][2]int, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(r.dir, m.File), nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, false
	}
	tf := fset.File(f.Pos())
	if m.Line < 1 || m.Line > tf.LineCount() {
		return nil, false
	}
	pos := tf.LineStart(m.Line) + token.Pos(m.Col-1)
	var path []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil || pos < n.Pos() || pos >= n.End() {
			return false
		}
		path = append(path, n)
		return true
	})
	inFunc := false
	var out [][2]int
	for i := len(path) - 1; i >= 0; i-- {
		p := fset.Position(path[i].Pos())
		out = append(out, [2]int{p.Line, p.Column})
		if _, ok := path[i].(*ast.FuncDecl); ok {
			inFunc = true
			break
		}
	}
	return out, inFunc
}

// mutant builds the package's tests with the mutant and runs those that
// cover it.
func (r *runner) mutant(w int, m mutant) (status, detail string) {
	sel := r.selecting(m)
	if len(sel) == 0 {
		return "NOT COVERED", ""
	}
	path := filepath.Join(r.dir, m.File)
	src, err := os.ReadFile(path)
	if err != nil {
		return "ERROR", ": " + err.Error()
	}
	mutated, err := apply(src, m)
	if err != nil {
		return "ERROR", ": " + err.Error()
	}
	wdir := filepath.Join(r.tmp, "w"+strconv.Itoa(w))
	if err := os.MkdirAll(wdir, 0o755); err != nil {
		return "ERROR", ": " + err.Error()
	}
	mfile := filepath.Join(wdir, filepath.Base(m.File))
	if err := os.WriteFile(mfile, mutated, 0o644); err != nil {
		return "ERROR", ": " + err.Error()
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {path: mfile}})
	ofile := filepath.Join(wdir, "overlay.json")
	if err := os.WriteFile(ofile, overlay, 0o644); err != nil {
		return "ERROR", ": " + err.Error()
	}
	bin := filepath.Join(wdir, "m.test")
	build := exec.Command("go", "test", "-c", "-overlay", ofile, "-o", bin, "./"+r.pkg)
	build.Dir = r.module
	if err := build.Run(); err != nil {
		return "NOT VIABLE", ""
	}
	var budget time.Duration
	quoted := make([]string, len(sel))
	for i, n := range sel {
		budget += r.took[n]
		quoted[i] = regexp.QuoteMeta(n)
	}
	timeout := time.Duration(float64(budget) * r.coeff)
	if timeout < r.minTimeout {
		timeout = r.minTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^("+strings.Join(quoted, "|")+")$",
		"-test.count=1", "-test.failfast", "-test.timeout="+timeout.String())
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	detail = fmt.Sprintf(" (%d tests)", len(sel))
	switch {
	case err == nil:
		return "LIVED", detail
	case ctx.Err() != nil || strings.Contains(string(out), "panic: test timed out"):
		return "TIMED OUT", detail
	default:
		return "KILLED", detail
	}
}
