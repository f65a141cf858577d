package websub

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxDrain bounds what is read of a callback's response body: the
// challenge echo (§5.3.1) and, for reuse of the connection, the rest.
const maxDrain = 64 << 10

// verifyIntent makes the verification request of §5.3 for an accepted
// request and applies it when the subscriber echoes the challenge: a
// subscribe creates or renews the subscription (§5.1 "MUST override the
// previous subscription state … only once the action is verified"), an
// unsubscribe deletes it. Any other answer leaves the state unchanged.
// Verification is attempted once: a subscriber that was not ready asks
// again.
func (h *Hub) verifyIntent(ctx context.Context, r request) {
	log := h.log.With(slog.String("mode", r.mode), slog.String("topic", r.topic), slog.String("callback", r.callback))
	resource, err := h.topicOf(ctx, r)
	if err != nil { // the feed went away between the request and now, or does not render now
		if r.mode == ModeSubscribe && errors.Is(err, ErrUnknownTopic) {
			// §5.2: a subscription the hub denies after accepting the
			// request MUST be reported to the subscriber (hub.mode=denied).
			reason := "hub.topic is no longer a feed of this hub"
			if errors.Is(err, ErrTopicDeleted) {
				reason = reasonDeleted
			}
			h.deny(ctx, r.callback, r.asGiven, reason)
		}
		h.metrics.verifications.WithLabelValues(r.mode, "refused").Inc()
		log.InfoContext(ctx, "websub: topic gone before verification", slog.Any("error", err))
		h.observe("refused", Key{Topic: r.topic, Callback: r.callback})
		return
	}
	challenge, err := newChallenge()
	if err != nil {
		h.metrics.verifications.WithLabelValues(r.mode, "error").Inc()
		log.ErrorContext(ctx, "websub: challenge", slog.Any("error", err))
		return
	}
	var sum string
	if r.mode == ModeSubscribe {
		// The content the subscriber can fetch now is what it has: only a
		// later change is delivered. A topic that does not render now gets
		// its first delivery at the next change.
		sum = h.topicHash(ctx, r.topic)
	}
	started := h.clock.Now() // §5.3: the lease is measured from the verification request
	if err := h.askIntent(ctx, r, challenge); err != nil {
		h.metrics.verifications.WithLabelValues(r.mode, "refused").Inc()
		log.InfoContext(ctx, "websub: intent not verified", slog.Any("error", err))
		h.observe("refused", Key{Topic: r.topic, Callback: r.callback})
		return
	}
	key := Key{Resource: resource, Topic: r.topic, Callback: r.callback}
	created := false
	err = h.opts.Store.Update(ctx, key, func(cur *Subscription) (*Subscription, error) {
		created = false // fn may run again
		if r.mode == ModeUnsubscribe {
			return nil, nil
		}
		next := Subscription{Key: key, LastHash: sum}
		created = cur == nil
		if cur != nil { // a renewal keeps the delivery state
			next.LastHash, next.Pending = cur.LastHash, cur.Pending
		}
		next.Secret = r.secret // §5.1: a renewal may change or drop the secret
		next.AsGiven = r.asGiven
		next.Lease = r.lease
		next.Verified = started
		next.Expires = started.Add(r.lease)
		return &next, nil
	})
	if err != nil {
		h.metrics.verifications.WithLabelValues(r.mode, "error").Inc()
		log.ErrorContext(ctx, "websub: store subscription", slog.Any("error", err))
		return
	}
	// A change processed while the verification was under way did not see
	// this subscription: when the topic differs now from what it was
	// before, a notification pass makes the change pending (a renewal
	// was already seen by such a pass).
	if created && sum != "" && h.topicHash(ctx, r.topic) != sum {
		h.Notify(resource)
	}
	h.metrics.verifications.WithLabelValues(r.mode, "verified").Inc()
	log.InfoContext(ctx, "websub: intent verified", slog.Duration("lease", r.lease))
	h.observe(r.mode, key)
}

// topicHash is the hash of topic's current rendering, "" when it does not
// render.
func (h *Hub) topicHash(ctx context.Context, topic string) string {
	body, ctype, err := h.opts.Topics.RenderTopic(ctx, topic)
	if err != nil {
		return ""
	}
	return contentHash(body, ctype)
}

// askIntent sends the GET of §5.3 and checks the answer as §5.3.1 says: a
// 2xx whose body is exactly the challenge verifies; anything else (3xx,
// 4xx, 5xx, another body, no answer, a callback the SSRF guard refuses)
// does not.
func (h *Hub) askIntent(ctx context.Context, r request, challenge string) error {
	q := url.Values{}
	q.Set("hub.mode", r.mode)
	// §5.3: "the topic URL given in the corresponding subscription
	// request", as given: a subscriber compares it with the topic it asked
	// for, and may not know that the hub keys it in normal form.
	q.Set("hub.topic", r.asGiven)
	q.Set("hub.challenge", challenge)
	if r.mode == ModeSubscribe { // §5.3: required for subscribe
		q.Set("hub.lease_seconds", strconv.FormatInt(int64(r.lease.Seconds()), 10))
	}
	resp, err := h.call(ctx, http.MethodGet, appendQuery(r.callback, q.Encode()), nil, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(len(challenge))+1))
	if err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain)) // for connection reuse; the rest is irrelevant
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("callback answered %d", resp.StatusCode)
	}
	if !bytes.Equal(body, []byte(challenge)) {
		return fmt.Errorf("callback answered %d without echoing the challenge", resp.StatusCode)
	}
	return nil
}

// deny tells the subscriber that its subscription (or its request) was
// denied (§5.2): a GET to the callback with hub.mode=denied, hub.topic as
// the subscriber gave it and hub.reason. The answer does not matter and
// the request is not retried.
func (h *Hub) deny(ctx context.Context, callback, topic, reason string) {
	q := url.Values{}
	q.Set("hub.mode", "denied")
	q.Set("hub.topic", topic)
	q.Set("hub.reason", reason)
	resp, err := h.call(ctx, http.MethodGet, appendQuery(callback, q.Encode()), nil, nil)
	if err != nil {
		h.log.InfoContext(ctx, "websub: denial not delivered", slog.String("topic", topic), slog.String("callback", callback), slog.Any("error", err))
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	_ = resp.Body.Close()
}

// appendQuery adds query to a callback URL, keeping its own query string
// (§5.1.1: "appending new parameters to the end of the list using the &").
func appendQuery(callback, query string) string {
	switch {
	case !strings.Contains(callback, "?"):
		return callback + "?" + query
	case strings.HasSuffix(callback, "?") || strings.HasSuffix(callback, "&"):
		return callback + query
	}
	return callback + "&" + query
}

// newChallenge is a random, single-use hub.challenge (§8.2).
func newChallenge() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random challenge: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// call makes one callback request, bounded by Options.Timeout (the
// response body included: the caller reads it before the deadline).
func (h *Hub) call(ctx context.Context, method, target string, body []byte, header http.Header) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, h.opts.Timeout)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("build request: %w", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", h.opts.UserAgent)
	resp, err := h.client.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	return resp, nil
}

// cancelOnClose releases a request's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
