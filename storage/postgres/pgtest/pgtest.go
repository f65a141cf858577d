// Package pgtest gives tests a throwaway PostgreSQL: one server per test
// binary whose TestMain calls [Main], started by the first [DSN] (a binary
// whose tests do not ask for one does not start it), and a fresh empty
// database per test from [DSN].
//
// The server is the Debian package's (postgresql): initdb, postgres and
// their friends are looked up on PATH, then in /usr/lib/postgresql/*/bin
// (newest major first). It lives in a temporary directory, listens only on a
// unix socket there (listen_addresses=”), runs with fsync, full-page writes
// and synchronous commit off (nothing it holds outlives the test binary),
// and is stopped (fast shutdown) and removed when the tests end. PostgreSQL
// refuses to run as root, so when the tests run as root (as CI does) initdb
// and the server run as the unprivileged user nobody (a child process with
// other credentials; the directory is given to that user).
//
// When DYNAMO_TEST_POSTGRES_DSN is set, no server is started: the tests use
// that server, whose user must be allowed to create databases. Without a
// server, [DSN] skips the test with a message, or fails it when
// DYNAMO_REQUIRE_VALIDATORS=1 (as in CI).
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables read here.
const (
	// DSNEnv names an existing server to use instead of starting one.
	DSNEnv = "DYNAMO_TEST_POSTGRES_DSN"
	// RequireEnv set to 1 turns a missing PostgreSQL into a failure.
	RequireEnv = "DYNAMO_REQUIRE_VALIDATORS"
)

// The test binary's server: Main arranges for it, the first DSN starts it.
var (
	adminDSN    string // a DSN of the maintenance database, "" when none
	unavailable string // why there is no server
	dbCounter   atomic.Int64

	managed   bool      // Main runs the tests and starts a server when one is needed
	startOnce sync.Once // the first DSN starts it
	srv       *server   // the server started, nil when none
)

// Main runs the tests and stops the server the first [DSN] started, if
// any (none when DYNAMO_TEST_POSTGRES_DSN names one); it returns m.Run's
// exit code. A test binary none of whose tests runs against PostgreSQL
// does not pay for starting it. Call it from TestMain:
// os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	if dsn := os.Getenv(DSNEnv); dsn != "" {
		adminDSN = dsn
		return m.Run()
	}
	managed = true
	code := m.Run()
	if srv != nil {
		if err := srv.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// DSN creates an empty database for t, dropped when t ends, and returns a
// DSN for it; the first call starts the server. Without a server it skips
// t (fails it when DYNAMO_REQUIRE_VALIDATORS=1).
func DSN(t testing.TB) string {
	t.Helper()
	startOnce.Do(func() {
		if !managed || adminDSN != "" {
			return
		}
		s, err := start()
		if err != nil {
			unavailable = err.Error()
			return
		}
		srv, adminDSN = s, s.dsn("postgres")
	})
	if adminDSN == "" {
		why := unavailable
		if why == "" {
			why = "pgtest.Main was not called from TestMain"
		}
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("PostgreSQL is required (%s=1) but unavailable: %s", RequireEnv, why)
		}
		t.Skipf("PostgreSQL unavailable (%s); skipping (install the postgresql package, or set %s; %s=1 makes this a failure)", why, DSNEnv, RequireEnv)
	}
	name := fmt.Sprintf("dynamo_test_%d_%d", os.Getpid(), dbCounter.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := admin(ctx, "create database "+name+" template template0 encoding 'UTF8'"); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := admin(ctx, "drop database if exists "+name+" with (force)"); err != nil {
			t.Errorf("pgtest: drop database: %v", err)
		}
	})
	return withDatabase(adminDSN, name)
}

// withDatabase returns dsn naming database db instead of its own.
func withDatabase(dsn, db string) string {
	if strings.Contains(dsn, "://") {
		// URL form: the path is the database.
		u := dsn
		q := ""
		if i := strings.IndexByte(u, '?'); i >= 0 {
			u, q = u[:i], u[i:]
		}
		scheme := strings.Index(u, "://") + 3
		if i := strings.IndexByte(u[scheme:], '/'); i >= 0 {
			u = u[:scheme+i]
		}
		return u + "/" + db + q
	}
	// key=value form: a later dbname wins
	return dsn + " dbname=" + db
}

func admin(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, sql)
	return errors.Join(err, conn.Close(context.WithoutCancel(ctx)))
}

// server is a running postgres child.
type server struct {
	dir  string // the temporary directory: data/ and the socket
	bin  string // where postgres is
	cred *syscall.Credential
	cmd  *exec.Cmd
	done chan error
}

func (s *server) dsn(db string) string {
	return fmt.Sprintf("host=%s user=postgres dbname=%s sslmode=disable", s.dir, db)
}

// binDir finds the directory holding initdb and postgres.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("postgres"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin") // a malformed pattern is impossible here
	slices.SortFunc(dirs, func(a, b string) int { return majorOf(b) - majorOf(a) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("initdb and postgres not found on PATH nor in /usr/lib/postgresql/*/bin")
}

func majorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir))) // not a number: sorts last
	return n
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// credential is who runs initdb and postgres: nil (this process's user)
// unless this process is root, then nobody.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("running as root, and no unprivileged user to run PostgreSQL as: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("user nobody: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

func start() (*server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir}
	if err := s.run(bin, cred); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	return s, nil
}

func (s *server) run(bin string, cred *syscall.Credential) error {
	if cred != nil {
		if err := os.Chown(s.dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("give %s to nobody: %w", s.dir, err)
		}
	}
	data := filepath.Join(s.dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = s.dir
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	s.bin, s.cred = bin, cred
	return s.postgres()
}

// postgres starts the server on the data directory initdb made (again,
// after a stop) and waits until it accepts connections.
func (s *server) postgres() error {
	s.cmd = exec.Command(filepath.Join(s.bin, "postgres"), "-D", filepath.Join(s.dir, "data"),
		"-c", "listen_addresses=",
		"-c", "unix_socket_directories="+s.dir,
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=200",
		"-c", "shared_buffers=64MB",
	)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	s.cmd.Dir = s.dir
	logf, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = logf.Close() }() // the child holds its own descriptor
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	s.done = make(chan error, 1)
	go func() { s.done <- s.cmd.Wait() }()
	if err := s.ready(30 * time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "server.log")) // best effort, for the message
		return errors.Join(fmt.Errorf("postgres did not start: %w\n%s", err, log), s.stop())
	}
	return nil
}

// ready waits until the server accepts connections, it exits, or the time is up.
func (s *server) ready(within time.Duration) error {
	deadline := time.Now().Add(within)
	var last error
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			s.done <- err // for stop
			return fmt.Errorf("postgres exited: %v", err)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.dsn("postgres"))
		if err == nil {
			err = conn.Ping(ctx)
			_ = conn.Close(ctx) // probe connection
			cancel()
			if err == nil {
				return nil
			}
		}
		cancel()
		last = err
		time.Sleep(20 * time.Millisecond) // the server is starting: poll its socket
	}
	return last
}

// stop shuts the server down (SIGINT: fast shutdown) and removes its directory.
func (s *server) stop() error {
	err := s.halt()
	return errors.Join(err, os.RemoveAll(s.dir))
}

// halt shuts the server down (SIGINT: fast shutdown), keeping its data.
func (s *server) halt() error {
	var errs []error
	if s.cmd != nil && s.cmd.Process != nil {
		if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
			errs = append(errs, fmt.Errorf("stop postgres: %w", err))
		}
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) // its own process group: the server and its children
			<-s.done
		}
		s.cmd = nil // stopped: a second halt has nothing to wait for
	}
	return errors.Join(errs...)
}

// Server is a PostgreSQL server of one test's own, which the test may stop
// and start again (a database restart, an outage): unlike [DSN]'s shared
// server, stopping it disturbs no other test.
type Server struct{ s *server }

// NewServer starts a server for t, stopped and removed when t ends. Without
// PostgreSQL it skips t (fails it when DYNAMO_REQUIRE_VALIDATORS=1).
func NewServer(t testing.TB) *Server {
	t.Helper()
	s, err := start()
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("PostgreSQL is required (%s=1) but unavailable: %v", RequireEnv, err)
		}
		t.Skipf("PostgreSQL unavailable (%v); skipping (install the postgresql package; %s=1 makes this a failure)", err, RequireEnv)
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return &Server{s: s}
}

// DSN is the DSN of the server's maintenance database.
func (s *Server) DSN() string { return s.s.dsn("postgres") }

// Stop shuts the server down (fast shutdown: connections are closed),
// keeping its data; [Server.Start] starts it again.
func (s *Server) Stop() error { return s.s.halt() }

// Start starts the server again after [Server.Stop], on the same data and
// socket, and returns once it accepts connections.
func (s *Server) Start() error { return s.s.postgres() }
