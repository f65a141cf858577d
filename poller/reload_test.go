package poller

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
)

func TestReloaderAppliesToEngine(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	dir := t.TempDir()
	path := filepath.Join(dir, "dynamo.yaml")
	write := func(policy string) {
		y := baseYAML("resources:\n  - {id: r, url: \"" + o.url("/") + "\", policy: " + policy + "}\n")
		if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("{kind: flat, interval: 5m}")
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEngine(t, cfg, newMemStore(), clk)
	rl := config.NewReloader(path, config.ReloaderOptions{Load: func() (*config.Config, error) { return config.Load(path) }}, e.Apply)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- rl.Run(ctx, nil) }()
	defer func() { cancel(); <-done }()
	pollAtNext(t, e, clk, "r")
	write("{kind: smart, initial: 30m}")
	if err := rl.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	st, _ := e.Status("r")
	if st.Policy != KindSmart || st.NextPoll.Sub(st.LastPoll) != 30*time.Minute {
		t.Fatalf("after reload %+v", st)
	}
	write("{kind: smart, initial: 30m, min: 2h}") // invalid: min > initial
	if err := rl.Reload(t.Context()); err == nil {
		t.Fatal("invalid config accepted")
	}
	if st2, _ := e.Status("r"); !reflect.DeepEqual(st2, st) {
		t.Fatalf("a refused reload changed the engine: %+v", st2)
	}
}

// The example of docs/configuration.md builds an engine as it is.
func TestEngineAcceptsAPIExample(t *testing.T) {
	data, err := os.ReadFile("../testdata/config/api-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data) // Parse: the example's token file does not exist here
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(context.Background(), cfg, newMemStore(), Options{Clock: newFakeClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close() //nolint:errcheck // test cleanup
	if sts := e.Statuses(); len(sts) != 2 || sts[0].Policy != KindFlat || sts[1].Policy != KindSmart || !sts[1].AlphaAuto {
		t.Fatalf("%+v", sts)
	}
}

// The engine accepts every policy that the configuration accepts.
func FuzzParseConfigPolicies(f *testing.F) {
	f.Add([]byte(baseYAML("resources:\n  - {id: a, url: http://x/}\n")))
	f.Add([]byte("poller: {policy: {alpha: auto}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse(data)
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("ParseConfig returned a config that does not validate: %v", err)
		}
		for _, r := range cfg.Resources {
			if _, err := NewPolicy(cfg.Poller.ResolvePolicy(r.Policy)); err != nil {
				t.Fatalf("accepted resource %q has an invalid policy: %v", r.ID, err)
			}
		}
	})
}
