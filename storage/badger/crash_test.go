package badger_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// crashChildEnv switches TestMain into the child of TestCrashDurability; its
// value is the store directory.
const crashChildEnv = "DYNAMO_STORAGE_CRASH_CHILD"

// crashNoSyncEnv makes the child open the store with NoSyncWrites.
const crashNoSyncEnv = "DYNAMO_STORAGE_CRASH_NOSYNC"

const crashWriters = 4

// crashDoc is version i of writer w's resource: deterministic, so the parent
// can rebuild what an acknowledged save stored.
func crashDoc(w, i int) *schema.Document {
	id := fmt.Sprintf("crash%d", w)
	d := doc(id, i, it("keep", "Always here"), it(fmt.Sprintf("n%d", i), fmt.Sprintf("Item %d of writer %d", i, w)))
	if i%3 == 0 {
		d.Items = append(d.Items, schema.Item{Index: 3, ID: "sometimes", Title: fmt.Sprintf("Sometimes, edited at %d", i), Link: "https://example.org/s"})
	}
	return d
}

// crashChild saves versions from several goroutines until it is killed,
// printing "ack <writer> <i> <seq>" once Save returned.
func crashChild(dir string) int {
	db, err := badger.Open(dir, badger.Options{NoSyncWrites: os.Getenv(crashNoSyncEnv) != ""})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // the parent kills us long before
	defer cancel()
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	out := bufio.NewWriter(os.Stdout)
	for w := range crashWriters {
		wg.Go(func() {
			for i := 1; ctx.Err() == nil; i++ {
				res, err := db.Save(ctx, crashDoc(w, i))
				if err == nil {
					err = db.SavePollState(ctx, crashDoc(w, i).RSSID, []byte(strconv.Itoa(i)))
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					return
				}
				mu.Lock()
				fmt.Fprintf(out, "ack %d %d %d\n", w, i, res.Seq)
				err = out.Flush() // the ack leaves the process only after the save returned
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := db.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return 3 // not killed in time
}

// TestCrashDurability kills a writing child process with SIGKILL and checks
// that every save it acknowledged is intact after reopening. With
// NoSyncWrites too: Badger writes its WAL and value log through mmap, so
// the kernel keeps acknowledged writes when the process dies; SyncWrites
// (the default) is what protects them from an OS crash or power loss, which
// a test cannot simulate.
func TestCrashDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	for _, tt := range []struct {
		name string
		env  string
	}{
		{"sync writes (default)", ""},
		{"no sync writes", crashNoSyncEnv + "=1"},
	} {
		t.Run(tt.name, func(t *testing.T) { crashAndVerify(t, tt.env) })
	}
}

func crashAndVerify(t *testing.T, env string) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	if env != "" {
		cmd.Env = append(cmd.Env, env)
	}
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type ack struct {
		i   int
		seq uint64
	}
	acked := map[int][]ack{}
	total, killed := 0, false
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var w, i int
		var seq uint64
		if _, err := fmt.Sscanf(sc.Text(), "ack %d %d %d", &w, &i, &seq); err != nil {
			t.Fatalf("child said %q: %v", sc.Text(), err)
		}
		acked[w] = append(acked[w], ack{i, seq})
		if total++; total == 400 && !killed {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child ended before 400 acks (%d): %v", total, err)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed by SIGKILL: %v", cmd.ProcessState)
	}
	t.Logf("child acknowledged %d saves before SIGKILL", total)

	db, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}()
	mustCheck(t, db)
	ctx := context.Background()
	for w, acks := range acked {
		id := fmt.Sprintf("crash%d", w)
		info, err := db.Resource(ctx, id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		last := acks[len(acks)-1]
		if info.LatestSeq < last.seq {
			t.Errorf("%s: latest seq %d, but %d was acknowledged", id, info.LatestSeq, last.seq)
			continue
		}
		for _, a := range acks {
			got, _, err := db.Version(ctx, id, int(info.LatestSeq-a.seq+1))
			if err != nil {
				t.Fatalf("%s: acknowledged version %d: %v", id, a.seq, err)
			}
			if want := crashDoc(w, a.i); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: version %d = %+v, want %+v", id, a.seq, got, want)
			}
		}
		st, err := db.PollState(ctx, id)
		if n, _ := strconv.Atoi(string(st)); err != nil || n < last.i {
			t.Errorf("%s: poll state %q (%v), acknowledged %d", id, st, err, last.i)
		}
	}
}
