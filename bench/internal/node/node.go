// Package node runs the dynamo binary for the benchmark programs under
// bench/: start it with a configuration, wait until it is ready, read its
// resident memory and CPU time, stop it or kill it.
package node

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is a running dynamo.
type Proc struct {
	Cmd   *exec.Cmd
	Base  string        // http://127.0.0.1:port
	Ready time.Duration // from start to /readyz answering 200
}

// Start runs `bin serve --config cfg`, its stderr in dir/name.err, and
// waits until /readyz answers 200 (at most readyWithin).
func Start(bin, cfg, dir, name string, readyWithin time.Duration) (*Proc, error) {
	cmd := exec.Command(bin, "serve", "--config", cfg)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	errLog, err := os.Create(filepath.Join(dir, name+".err"))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = errLog
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// "dynamo: listening on URL" tells the port; /readyz then says when
	// the store is open and the poller runs.
	sc := bufio.NewScanner(stdout)
	p := &Proc{Cmd: cmd}
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "dynamo: listening on "); ok {
			p.Base = u
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if p.Base == "" {
		_ = cmd.Wait()
		return nil, fmt.Errorf("%s exited before listening; see %s", name, errLog.Name())
	}
	for {
		resp, err := http.Get(p.Base + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(t0) > readyWithin {
			p.Kill()
			return nil, fmt.Errorf("%s not ready after %v", name, readyWithin)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Ready = time.Since(t0)
	return p, nil
}

// Stop sends SIGTERM and waits (at most 2 minutes, then kills).
func (p *Proc) Stop() error {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.Cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Minute):
		p.Kill()
		return errors.New("dynamo did not stop within 2 minutes")
	}
}

// Kill sends SIGKILL and reaps the process.
func (p *Proc) Kill() {
	_ = p.Cmd.Process.Kill()
	_ = p.Cmd.Wait()
}

// RSS is the process's resident memory (VmRSS), 0 when unreadable.
func (p *Proc) RSS() int64 { return p.status("VmRSS:") }

// RSSAnon and RSSFile split RSS into anonymous memory (the heap, Badger's
// memtables and caches) and mapped files (Badger's tables and logs, which the
// kernel can drop and read again).
func (p *Proc) RSSAnon() int64 { return p.status("RssAnon:") }

// RSSFile: see RSSAnon.
func (p *Proc) RSSFile() int64 { return p.status("RssFile:") }

// status reads a "kB" field of /proc/PID/status, in bytes; 0 when unreadable.
func (p *Proc) status(field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}

// Metric reads one unlabelled sample from /metrics; -1 when absent.
func (p *Proc) Metric(name string) float64 {
	code, body, err := p.Do(context.Background(), http.MethodGet, "/metrics", "", "")
	if err != nil || code != http.StatusOK {
		return -1
	}
	for line := range strings.Lines(string(body)) {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			if v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64); err == nil {
				return v
			}
		}
	}
	return -1
}

// CPU is the CPU time the process used so far (user + system).
func (p *Proc) CPU() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Cmd.Process.Pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// Do sends one request with an optional bearer token and JSON body and
// returns the status and body.
func (p *Proc) Do(ctx context.Context, method, path, token, body string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, p.Base+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// RegisterAll PUTs resources r0 … r(n−1), whose JSON definitions body
// gives, through the admin API with clients concurrent clients.
func (p *Proc) RegisterAll(n, clients int, token string, body func(i int) string) error {
	ids := make(chan int)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for i := range ids {
				code, b, err := p.Do(context.Background(), http.MethodPut, "/admin/resources/r"+strconv.Itoa(i), token, body(i))
				if err == nil && code != http.StatusCreated && code != http.StatusOK {
					err = fmt.Errorf("PUT r%d: %d %s", i, code, b)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var ferr error
	for i := 0; i < n && ferr == nil; i++ {
		select {
		case ids <- i:
		case ferr = <-errs:
		}
	}
	close(ids)
	wg.Wait()
	if ferr == nil && len(errs) > 0 {
		ferr = <-errs
	}
	return ferr
}
