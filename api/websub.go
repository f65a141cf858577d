package api

// The api's side of the WebSub hub (API.md "Push (WebSub hub)"): POST
// /websub hands the form to the hub, and the Server renders topics for the
// hub exactly as a GET of them answers (websub.Topics).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/websub"
)

// Hub is the api's view of the WebSub hub; *websub.Hub implements it.
type Hub interface {
	// Request handles a subscription request's form: nil means accepted
	// (202); errors wrap websub.ErrInvalidRequest, websub.ErrUnknownTopic,
	// websub.ErrBusy or websub.ErrRateLimited (a *websub.LimitError: 429).
	Request(ctx context.Context, form url.Values) error
}

// POST /websub per client address: a burst, then one request a second. A
// request costs a topic render here and, once accepted, a verification
// GET to its callback; the hub also limits verifications per callback host
// (websub.Options.CallbackEvery), whoever asks for them.
const (
	webSubEvery = time.Second
	webSubBurst = 60
)

// SetHub sets the hub POST /websub hands requests to (nil: the route
// answers 404). The hub needs the Server (as its websub.Topics), so cmd
// builds the Server, then the hub, then calls SetHub. Safe for concurrent use.
func (s *Server) SetHub(h Hub) {
	s.hub.Store(&h)
}

// postWebSub serves POST /websub: a subscription or unsubscription request
// (WebSub §5.1), answered 202 when accepted; verification follows
// asynchronously.
func (s *Server) postWebSub(c echo.Context) error {
	var hub Hub
	if p := s.hub.Load(); p != nil {
		hub = *p
	}
	if hub == nil {
		return errNotFound(nil, "the WebSub hub is off; it runs when public_url is set (websub.enabled)")
	}
	req := c.Request()
	mt, _, err := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEApplicationForm {
		return problemf(http.StatusUnsupportedMediaType, "a WebSub request is a form: Content-Type application/x-www-form-urlencoded with hub.mode, hub.topic and hub.callback")
	}
	// Every request counts, accepted or not: each costs a topic render, and
	// a client that floods the hub with refused ones is no better.
	if ok, wait, _ := s.subLim.Take(c.RealIP(), s.now()); !ok {
		return TooManyRequests(c, wait, "too many subscription requests from your address; try again in %v", wait.Round(time.Second))
	}
	if err := req.ParseForm(); err != nil {
		return fmt.Errorf("read form: %w", err) // a body past the limit is a *http.MaxBytesError: 413
	}
	if err := hub.Request(req.Context(), req.PostForm); err != nil {
		var le *websub.LimitError
		if errors.As(err, &le) {
			return TooManyRequests(c, le.RetryAfter, "too many subscription requests for callbacks on %s; try again in %v", le.Host, le.RetryAfter.Round(time.Second))
		}
		return err
	}
	return c.String(http.StatusAccepted, "Accepted: the hub will verify the request with a GET to hub.callback.\n")
}

// TopicResource implements websub.Topics: topic is a feed of this service
// when it lies under the public base URL, names /resources,
// /resources/{id} or /resources/{id}/versions/{seq}, and a GET of it
// answers 200 with a feed. The resource of /resources is "" (it depends on
// every resource). A feed of a resource the store says was deleted
// (storage.ErrGone) is websub.ErrTopicDeleted.
func (s *Server) TopicResource(ctx context.Context, topic string) (string, error) {
	u, err := url.Parse(topic)
	if err != nil {
		return "", fmt.Errorf("%w: %v", websub.ErrUnknownTopic, err)
	}
	path, ok := s.topicPath(u)
	if !ok {
		return "", fmt.Errorf("%w: feeds of this service are %s/resources…", websub.ErrUnknownTopic, strings.TrimRight(s.opts.PublicURL, "/"))
	}
	var resource string
	switch parts := strings.Split(strings.TrimPrefix(path, "/resources"), "/"); {
	case len(parts) == 1 && parts[0] == "":
	case len(parts) == 2 && parts[0] == "" && parts[1] != "",
		len(parts) == 4 && parts[0] == "" && parts[1] != "" && parts[2] == "versions":
		if resource, err = url.PathUnescape(parts[1]); err != nil {
			return "", fmt.Errorf("%w: %v", websub.ErrUnknownTopic, err)
		}
	default:
		return "", fmt.Errorf("%w: %s is not a feed path (/resources, /resources/{id}, /resources/{id}/versions/{seq})", websub.ErrUnknownTopic, path)
	}
	if _, _, err := s.RenderTopic(ctx, topic); err != nil {
		// Named: the hub ends subscriptions to a deleted resource. Deleted
		// is the store's word (its tombstone), not the 410 a GET answers:
		// a version removed by retention answers 410 too.
		if resource != "" && errors.Is(err, websub.ErrUnknownTopic) {
			if _, serr := s.opts.Store.Resource(ctx, resource); errors.Is(serr, storage.ErrGone) {
				return resource, fmt.Errorf("%w (%q)", websub.ErrTopicDeleted, resource)
			}
		}
		return resource, err
	}
	return resource, nil
}

// topicPath returns the path of u relative to the public base URL.
func (s *Server) topicPath(u *url.URL) (string, bool) {
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", false
	}
	if s.opts.PublicURL == "" {
		return u.EscapedPath(), true
	}
	base, err := url.Parse(strings.TrimRight(s.opts.PublicURL, "/"))
	if err != nil || !strings.EqualFold(base.Scheme, u.Scheme) || !strings.EqualFold(base.Host, u.Host) {
		return "", false
	}
	rest, ok := strings.CutPrefix(u.EscapedPath(), base.EscapedPath())
	return rest, ok && strings.HasPrefix(rest, "/resources")
}

// RenderTopic implements websub.Topics: it answers an in-process GET of
// topic (no Accept, no Accept-Encoding: the topic's type= chooses the
// format, RSS 2.0 without it) and returns the body and content type, so
// that a delivery is byte for byte what a reader fetching the topic gets.
func (s *Server) RenderTopic(ctx context.Context, topic string) ([]byte, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, topic, nil)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", websub.ErrUnknownTopic, err)
	}
	req.RemoteAddr = "127.0.0.1:0" // in-process: the hub itself
	req.RequestURI = req.URL.RequestURI()
	w := &bufferWriter{header: http.Header{}, code: http.StatusOK}
	s.ServeHTTP(w, req)
	ctype := w.header.Get(echo.HeaderContentType)
	if w.code >= http.StatusInternalServerError {
		// Our failure (a store error), not the topic's: not ErrUnknownTopic,
		// so POST /websub answers 5xx, and the hub does not deny (§5.2) a
		// subscription for a passing error.
		return nil, "", fmt.Errorf("render %s: GET answers %d", topic, w.code)
	}
	if w.code != http.StatusOK || strings.HasPrefix(ctype, echo.MIMETextHTML) || strings.HasPrefix(ctype, problemContentType) {
		return nil, "", fmt.Errorf("%w: GET %s answers %d", websub.ErrUnknownTopic, topic, w.code)
	}
	return w.body.Bytes(), ctype, nil
}

// bufferWriter is an http.ResponseWriter that keeps the response in memory.
type bufferWriter struct {
	header http.Header
	code   int
	wrote  bool
	body   bytes.Buffer
}

func (w *bufferWriter) Header() http.Header { return w.header }

func (w *bufferWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
}

func (w *bufferWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}
