#!/usr/bin/env bash
# Mutation testing of the core packages with gremlins: each mutant (a
# comparison turned around, a boundary moved, an arithmetic operator swapped,
# an increment made a decrement, a sign dropped) is applied to a copy of the
# module, the mutant's package's tests are run, and the mutant is KILLED when
# they fail and LIVED when they pass. Efficacy is killed / (killed + lived);
# the figure to keep is 90 % or more in every core package
# (docs/mutation-testing.md has the current figures and the living mutants
# named as equivalent).
#
#   bash bench/mutation.sh                  # every core package
#   bash bench/mutation.sh config poller    # some of them
#   MUTATION_BUDGET=1800 bash bench/mutation.sh extractor
#   MUTATION_FILES='^policy\.go$' bash bench/mutation.sh poller
#
# Each package gets MUTATION_BUDGET seconds (default 900); a package whose
# run is cut by its budget is reported "partial", with the figures of the
# mutants that ran (gremlins tests files in name order). MUTATION_FILES, a
# regexp on the file's path inside the package, keeps only those files, to
# finish a package a few files at a time. MUTATION_WORKERS (default 1) runs
# that many mutants at once; each runs its package's tests, so on a small
# machine one or two is the most. MUTATION_TIMEOUT_COEFF (default 15) times
# the first, covered test run is how long a mutant's tests may take before
# it counts as TIMED OUT (the mutant made the tests hang, or the machine was
# too busy: each mutant compiles its package's tests again, which the first
# run may have found in the build cache; 5 gave false time-outs at load 20).
# MUTATION_EXTRA=1 runs gremlins' optional mutators instead of its
# defaults: `&&` and `||` swapped, `break` and `continue` swapped, `+=` made
# `-=` or `=` (a bound checked on one side only, one bad item ending a loop
# for the others, a count that no longer adds up); docs/mutation-testing.md
# has their own figures. MUTATION_SELECT=1 has gremlins only list the mutants and bench/mutants run
# each against the tests that execute the mutated line (learned by running
# each test alone with coverage first) instead of the whole package: the
# same verdicts, about two and a half times faster on poller, whose suite
# takes half a minute. With it, MUTATION_SAMPLE=N runs N of the package's
# mutants drawn at random (MUTATION_SEED, default 1, makes the draw
# repeatable): an estimate of the efficacy for a package whose mutants would
# take hours (api's thousand), with its margin (about ±4 points at 200
# mutants and 90 %).
#
# gremlins is pinned and installed into a temporary GOBIN through the module
# proxy on each run (the build cache makes that quick after the first), so a
# fresh clone needs only Go. The logs stay in MUTATION_OUT (default
# bench/mutation.out, not committed): <pkg>.log has every mutant, and the
# summary lists the living ones. storage/postgres needs PostgreSQL's server
# binaries, as its tests do. This does not run in CI: a full run takes hours.
set -euo pipefail
cd "$(dirname "$0")/.."

gremlins_version=v0.6.0
budget=${MUTATION_BUDGET:-900}
workers=${MUTATION_WORKERS:-1}
coeff=${MUTATION_TIMEOUT_COEFF:-15}
out=${MUTATION_OUT:-bench/mutation.out}

core=(schema extractor config fetch poller storage/badger storage/postgres api websub)
pkgs=("$@")
if [ "${#pkgs[@]}" -eq 0 ]; then
  pkgs=("${core[@]}")
fi

# gremlins copies the module into its temporary directory for each run: a
# run cut by its budget cannot clean up, so TMPDIR is one of ours, removed
# at the end.
gobin=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$gobin" "$work"' EXIT
echo "== go install github.com/go-gremlins/gremlins/cmd/gremlins@$gremlins_version"
GOBIN=$gobin go install "github.com/go-gremlins/gremlins/cmd/gremlins@$gremlins_version"
mkdir -p "$out"

# Sub-packages that are test helpers or tools rather than the package itself
# (their code runs only under other packages' tests, which gremlins does not
# run for a mutant: it runs the mutant's own package's tests).
exclude_for() {
  case "$1" in
    schema) echo '^schematest/' ;;
    poller) echo '^sim/' ;;
    storage/postgres) echo '^pgtest/' ;;
    *) echo '^$' ;;
  esac
}

summary=$out/summary.txt
{
  echo "# bench/mutation.sh, gremlins $gremlins_version, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# $(nproc) CPUs, $(go version | cut -d' ' -f3), budget ${budget}s a package, $workers worker(s), timeout coefficient $coeff${MUTATION_FILES:+, files $MUTATION_FILES}${MUTATION_SAMPLE:+, a sample of $MUTATION_SAMPLE (seed ${MUTATION_SEED:-1})}${MUTATION_EXTRA:+, the optional mutators}"
  printf '%-18s %7s %6s %6s %9s %10s %9s  %s\n' package killed lived timeout notviable notcovered efficacy run
} >"$summary"

for pkg in "${pkgs[@]}"; do
  log=$out/${pkg//\//_}.log
  args=(unleash --workers "$workers" --timeout-coefficient "$coeff" -E "$(exclude_for "$pkg")")
  if [ "${MUTATION_EXTRA:-0}" = 1 ]; then
    # gremlins' optional mutators alone: one side of a condition (&& ↔ ||),
    # a loop's exit (break ↔ continue), an accumulation (+= ↔ -=, += → =).
    args+=(--invert-logical --invert-loopctrl --invert-assignments --remove-self-assignments
      --arithmetic-base=false --conditionals-boundary=false --conditionals-negation=false
      --increment-decrement=false --invert-negatives=false)
  fi
  if [ -n "${MUTATION_FILES:-}" ]; then
    # gremlins only excludes: keep the files named by excluding every other.
    while IFS= read -r f; do
      [[ $f =~ $MUTATION_FILES ]] || args+=(-E "^${f//./\\.}\$")
    done < <(cd "$pkg" && find . -name '*.go' ! -name '*_test.go' | sed 's|^\./||')
  fi
  echo "== $pkg (budget ${budget}s)"
  start=$(date +%s)
  run=complete
  set +e
  if [ "${MUTATION_SELECT:-0}" = 1 ]; then
    # gremlins lists the mutants; bench/mutants runs each against the tests
    # that execute its line only (same verdicts, several times faster on a
    # package whose suite is slow).
    TMPDIR=$work "$gobin/gremlins" "${args[@]}" --dry-run "./$pkg" >"$log.list" 2>&1
    TMPDIR=$work timeout --foreground -k 30 "$budget" nice -n 10 go run ./bench/mutants -pkg "$pkg" -list "$log.list" \
      -workers "$workers" -timeout-coefficient "$coeff" -sample "${MUTATION_SAMPLE:-0}" -seed "${MUTATION_SEED:-1}" >"$log" 2>&1
  else
    TMPDIR=$work timeout --foreground -k 30 "$budget" nice -n 10 "$gobin/gremlins" "${args[@]}" "./$pkg" >"$log" 2>&1
  fi
  rc=$?
  set -e
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    run="partial (budget hit after $(($(date +%s) - start))s)"
  elif [ "$rc" -ne 0 ]; then
    run="failed (exit $rc, see $log)"
  else
    run="complete in $(($(date +%s) - start))s"
  fi
  # gremlins prints one line per mutant as it is decided, so a run cut by
  # its budget still has the figures of the mutants that ran.
  count() { grep -c "^ *$1 " "$log" || true; }
  killed=$(count KILLED)
  lived=$(count LIVED)
  timedout=$(count 'TIMED OUT')
  notviable=$(count 'NOT VIABLE')
  notcovered=$(count 'NOT COVERED')
  efficacy=n/a
  if [ $((killed + lived)) -gt 0 ]; then
    efficacy=$(awk -v k="$killed" -v l="$lived" 'BEGIN { printf "%.1f%%", 100 * k / (k + l) }')
  fi
  printf '%-18s %7s %6s %6s %9s %10s %9s  %s\n' "$pkg" "$killed" "$lived" "$timedout" "$notviable" "$notcovered" "$efficacy" "$run" | tee -a "$summary"
done

echo
echo "== living mutants (each: a test to write, or an equivalent mutant to name in docs/mutation-testing.md)"
for pkg in "${pkgs[@]}"; do
  grep -H '^ *LIVED ' "$out/${pkg//\//_}.log" 2>/dev/null | sed "s|^$out/||; s|\.log: *| |" || true
done | tee -a "$summary"
echo "summary: $summary"
