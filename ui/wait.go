package ui

// Waits: a fetch on /new that has to wait for the host's politeness slot,
// and an Add whose first poll takes longer than a moment, run in the
// background (owned by the Server: tracked, bounded per session, ended by
// Close) while the browser gets at once a page that says what it waits for
// and for about how long, and refreshes itself (<meta http-equiv=refresh>,
// no script) at /new/wait/{token} until the result is there.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/session"
)

const (
	// waitRefresh is how often a waiting page reloads itself, in seconds.
	waitRefresh = 2
	// waitsPerSession bounds the waits one session runs at once.
	waitsPerSession = 3
	// waitKept is how long a finished wait's result stays for its page.
	waitKept = 10 * time.Minute
	// firstPollPatience is how long Add holds its request for the first
	// poll before it answers with a waiting page.
	firstPollPatience = 2 * time.Second
)

// errTooManyWaits: the session already runs waitsPerSession waits.
var errTooManyWaits = errors.New("too many waits at once")

// waitJob is one background wait, bound to the session that started it.
type waitJob struct {
	token, sessionID string
	what, why        string    // "Waiting for example.org", and why
	until            time.Time // about when it is done
	done             chan struct{}
	// Set before done closes: where to go next, or the error to show on
	// the URL form (failed, with url the URL typed in).
	next, failed, url string
	ended             time.Time
}

// waits are a Server's background waits. The zero value is ready.
type waits struct {
	once     sync.Once
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	mu       sync.Mutex
	jobs     map[string]*waitJob
	patience time.Duration // Add's patience; 0: firstPollPatience (tests shorten it)
}

func (w *waits) init() {
	w.once.Do(func() {
		w.ctx, w.cancel = context.WithCancel(context.Background())
		w.jobs = map[string]*waitJob{}
	})
}

// start runs fn in the background for job, unless its session already
// runs waitsPerSession waits. fn's context ends with Close or after limit.
func (w *waits) start(job *waitJob, clock func() time.Time, limit time.Duration, fn func(ctx context.Context, j *waitJob)) error {
	w.init()
	now := clock()
	w.mu.Lock()
	running := 0
	for t, j := range w.jobs {
		select {
		case <-j.done:
			if now.Sub(j.ended) >= waitKept {
				delete(w.jobs, t)
			}
		default:
			if j.sessionID == job.sessionID {
				running++
			}
		}
	}
	if running >= waitsPerSession || w.ctx.Err() != nil {
		w.mu.Unlock()
		return errTooManyWaits
	}
	job.token = session.RandomString(16)
	job.done = make(chan struct{})
	w.jobs[job.token] = job
	w.wg.Add(1)
	w.mu.Unlock()
	go func() {
		defer w.wg.Done()
		ctx, cancel := context.WithTimeout(w.ctx, limit)
		defer cancel()
		fn(ctx, job)
		w.mu.Lock()
		job.ended = clock()
		w.mu.Unlock()
		close(job.done)
	}()
	return nil
}

// get is the wait token of session sid.
func (w *waits) get(token, sid string) (*waitJob, bool) {
	w.init()
	w.mu.Lock()
	defer w.mu.Unlock()
	j, ok := w.jobs[token]
	if !ok || j.sessionID != sid {
		return nil, false
	}
	return j, true
}

// Close cancels the background waits (a fetch, a first poll) and waits for
// them to end. The pages answer no wait afterwards.
func (s *Server) Close() error {
	s.waits.init()
	s.waits.cancel()
	s.waits.wg.Wait()
	return nil
}

// waitPage is the data of wait.html.
type waitPage struct {
	Title   string
	CSRF    string
	Refresh string // the meta refresh: "2;url=/new/wait/…"
	URL     string // the wait's own page
	What    string // "Waiting for example.org"
	Why     string
	About   string // "about 9 seconds"
}

// renderWait answers with j's waiting page.
func (s *Server) renderWait(c echo.Context, j *waitJob) error {
	left := j.until.Sub(s.now())
	secs := max(1, int((left+time.Second-1)/time.Second))
	return s.renderPage(c, http.StatusOK, "wait.html", waitPage{
		Title: j.what, CSRF: s.csrfToken(c), What: j.what, Why: j.why,
		Refresh: fmt.Sprintf("%d;url=/new/wait/%s", waitRefresh, j.token), URL: "/new/wait/" + j.token,
		About: "about " + countNoun(secs, "second", "seconds"),
	})
}

// getWait shows a wait's page until it is done, then where it leads.
func (s *Server) getWait(c echo.Context) error {
	sess, _ := c.Get(sessionKey).(session.Session)
	j, ok := s.waits.get(c.Param("token"), sess.ID)
	if !ok {
		return problem(http.StatusNotFound, "no such wait: it ended a while ago, or it is another session's")
	}
	select {
	case <-j.done:
	default:
		return s.renderWait(c, j)
	}
	if j.failed != "" {
		return s.renderPage(c, http.StatusUnprocessableEntity, "new.html", newPage{Title: "Add a feed", CSRF: s.csrfToken(c), URL: j.url, Error: j.failed})
	}
	return c.Redirect(http.StatusSeeOther, j.next)
}

// fetchLater fetches raw in the background (rendered when render, as
// postNew would), its host's slot being wait away, and answers with the
// waiting page.
func (s *Server) fetchLater(c echo.Context, raw string, render bool, waitFor string, wait time.Duration) error {
	sess, _ := c.Get(sessionKey).(session.Session)
	host := raw
	if u, err := url.Parse(raw); err == nil {
		host = u.Hostname()
	}
	job := &waitJob{
		sessionID: sess.ID, url: raw, until: s.now().Add(wait),
		what: "Waiting for " + host,
		why:  "dynamo leaves some time between requests to one site (its politeness interval), and it asked " + host + " a moment ago. It fetches the page as soon as it may.",
	}
	err := s.waits.start(job, s.now, wait+firstPollWait, func(ctx context.Context, j *waitJob) {
		page, pic, err := s.fetchOrRender(ctx, raw, render, waitFor)
		if err != nil {
			j.failed = fmt.Sprintf("The page could not be fetched: %v", err)
			return
		}
		id := s.fetched.put(&fetchedPage{SessionID: j.sessionID, Requested: raw, Page: page, Render: render, WaitFor: waitFor, Picture: pic}, s.now())
		j.next = "/new?" + url.Values{fieldFetch: {id}}.Encode()
	})
	if err != nil {
		return s.renderPage(c, http.StatusTooManyRequests, "new.html", newPage{Title: "Add a feed", CSRF: s.csrfToken(c), URL: raw,
			Error: fmt.Sprintf("This session already waits for %d pages; try again when one is there.", waitsPerSession)})
	}
	return s.renderWait(c, job)
}

// pollLater polls the resource id (of page rawURL) just added for the
// first time in the background, waiting for it at most the patience
// (firstPollPatience): nil when it is done by then, else its wait, whose
// page leads to the resource's view once the poll is done (or after
// firstPollWait). When the session runs too many waits already, it polls
// in the request, as long as firstPollWait.
func (s *Server) pollLater(c echo.Context, id, rawURL string) *waitJob {
	ctx := c.Request().Context()
	poll := func(ctx context.Context, j *waitJob) {
		if _, err := s.firstPoll(ctx, id); err != nil {
			// Registered all the same: the poller polls it on its own
			// soon, and the view says it is not polled yet.
			s.log.LogAttrs(ctx, slog.LevelWarn, "first poll of a resource added in the browser", slog.String("id", id), slog.Any("error", err))
		}
		j.next = api.ViewHref(id)
	}
	sess, _ := c.Get(sessionKey).(session.Session)
	about := firstPollWait
	if w, ok := s.opts.Fetch.(api.PageWaiter); ok {
		about = min(firstPollWait, w.PageWait(rawURL)+firstPollPatience)
	}
	job := &waitJob{
		sessionID: sess.ID, until: s.now().Add(about),
		what: "Checking the page for the first time",
		why:  "The feed " + id + " is added. dynamo polls it once now to show its first items; the poll waits for the site's politeness interval, then fetches and reads the page.",
	}
	if err := s.waits.start(job, s.now, firstPollWait, poll); err != nil {
		pctx, cancel := context.WithTimeout(ctx, firstPollWait)
		defer cancel()
		poll(pctx, job)
		return nil
	}
	patience := cmp.Or(s.waits.patience, firstPollPatience)
	t := time.NewTimer(patience)
	defer t.Stop()
	select {
	case <-job.done:
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	return job
}
