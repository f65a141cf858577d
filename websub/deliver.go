package websub

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// Delivery outcomes, the label of dynamo_websub_deliveries_total.
const (
	outcomeDelivered = "delivered" // 2xx
	outcomeRetry     = "retry"     // failed, another attempt is scheduled
	outcomeAbandoned = "abandoned" // failed past RetryFor: the notification is given up
	outcomeGone      = "gone"      // 410: the subscription was ended (§7)
	outcomeDropped   = "dropped"   // abandoned DropAfter times in a row: the subscription was ended
	outcomeSkipped   = "skipped"   // the topic could not be rendered: nothing to deliver
)

func deliveryOutcomes() []string {
	return []string{outcomeDelivered, outcomeRetry, outcomeAbandoned, outcomeGone, outcomeDropped, outcomeSkipped}
}

// deliver makes the pending delivery of the subscription named by k, if it
// is still pending, due and unexpired: a content distribution request (§7)
// with the topic's current content, then records the outcome.
func (h *Hub) deliver(ctx context.Context, k Key) {
	s, err := h.opts.Store.Subscription(ctx, k)
	if errors.Is(err, ErrNotFound) {
		return // unsubscribed or expired meanwhile
	}
	if err != nil {
		h.log.ErrorContext(ctx, "websub: read subscription", slog.String("topic", k.Topic), slog.Any("error", err))
		return
	}
	now := h.clock.Now()
	switch {
	case s.Pending == nil:
		return
	case !now.Before(s.Expires):
		h.expire(ctx, k)
		return
	case now.Before(s.Pending.Next):
		h.sched.push(k, s.Pending.Next)
		return
	}
	log := h.log.With(slog.String("topic", k.Topic), slog.String("callback", k.Callback))
	c, err := h.render(ctx, k.Topic)
	if err != nil {
		// The topic no longer renders: there is no content to distribute.
		// If its resource was deleted, the notification pass that found it
		// has handed the subscription to endIfDeleted as well.
		log.WarnContext(ctx, "websub: render topic for delivery", slog.Any("error", err))
		h.finish(ctx, k, *s.Pending, s.Pending.Hash, outcomeSkipped)
		return
	}
	status, err := h.post(ctx, s, c.body, c.ctype)
	outcome := outcomeDelivered
	switch {
	case err == nil && status >= 200 && status <= 299:
	case err == nil && status == http.StatusGone:
		outcome = outcomeGone // §7: "the hub MAY terminate the subscription"
	default:
		outcome = outcomeRetry // §7: every other code, and no answer, is a failure
		if err == nil {
			err = fmt.Errorf("callback answered %d", status)
		}
		log.InfoContext(ctx, "websub: delivery failed", slog.Int("attempt", s.Pending.Attempts+1), slog.Any("error", err))
	}
	if outcome == outcomeDelivered {
		h.metrics.latency.Observe(h.clock.Now().Sub(s.Pending.Since).Seconds())
	}
	h.finish(ctx, k, *s.Pending, c.hash, outcome)
}

// post sends the content distribution request of §7 and returns the status
// code; the response body is ignored ("MUST be ignored by the hub").
func (h *Hub) post(ctx context.Context, s Subscription, body []byte, ctype string) (int, error) {
	header := http.Header{}
	header.Set("Content-Type", ctype)
	// §7: one Link rel=hub and one rel=self (the topic), combined into a
	// single header as the Recommendation suggests.
	header.Set("Link", fmt.Sprintf(`<%s>; rel="hub", <%s>; rel="self"`, h.opts.URL, s.Topic))
	if s.Secret != "" {
		header.Set("X-Hub-Signature", signature(s.Secret, body))
	}
	resp, err := h.call(ctx, http.MethodPost, s.Callback, body, header)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain)) // ignored (§7); read for connection reuse
	return resp.StatusCode, nil
}

// signature is the X-Hub-Signature of §7.1: sha256 (§7.1.1; §8.3 asks for
// at least SHA-256) HMAC of the body keyed by hub.secret, in hex.
func signature(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// finish records the outcome of an attempt for the pending delivery p,
// unless a newer notification replaced it meanwhile (that one has been
// scheduled on its own). sum is the hash of the content the attempt sent.
func (h *Hub) finish(ctx context.Context, k Key, p Pending, sum, outcome string) {
	now := h.clock.Now()
	var retryAt time.Time
	attempted := outcome
	err := h.opts.Store.Update(ctx, k, func(cur *Subscription) (*Subscription, error) {
		retryAt, outcome = time.Time{}, attempted // fn may run again (a store retries conflicts)
		if cur == nil {
			return nil, nil
		}
		replaced := cur.Pending == nil || !cur.Pending.Since.Equal(p.Since) || cur.Pending.Hash != p.Hash
		switch outcome {
		case outcomeGone:
			return nil, nil
		case outcomeDelivered:
			cur.LastHash = sum
			cur.Failures = 0
			if !replaced || (cur.Pending != nil && cur.Pending.Hash == sum) {
				cur.Pending = nil // what was pending (or newer) has been delivered
			}
			return cur, nil
		case outcomeSkipped:
			if !replaced {
				cur.LastHash, cur.Pending = p.Hash, nil
			}
			return cur, nil
		}
		if replaced {
			return cur, nil
		}
		attempts := cur.Pending.Attempts + 1
		next := now.Add(backoff(h.opts.RetryMin, h.opts.RetryMax, attempts))
		if next.Sub(p.Since) > h.opts.RetryFor {
			// §7: past the hub's limit it stops attempting to deliver this
			// notification; a new one will be tried again.
			outcome = outcomeAbandoned
			cur.LastHash, cur.Pending = p.Hash, nil
			cur.Failures++
			if h.opts.DropAfter > 0 && cur.Failures >= h.opts.DropAfter {
				outcome = outcomeDropped
				return nil, nil
			}
			return cur, nil
		}
		cur.Pending.Attempts = attempts
		cur.Pending.Next = next
		retryAt = next
		return cur, nil
	})
	if err != nil {
		h.log.ErrorContext(ctx, "websub: record delivery", slog.String("topic", k.Topic), slog.String("callback", k.Callback), slog.Any("error", err))
		return
	}
	h.metrics.deliveries.WithLabelValues(outcome).Inc()
	if !retryAt.IsZero() {
		h.sched.push(k, retryAt)
	}
	h.observe(outcome, k)
	if outcome == outcomeAbandoned || outcome == outcomeDropped || outcome == outcomeGone {
		h.log.InfoContext(ctx, "websub: delivery ended", slog.String("outcome", outcome), slog.String("topic", k.Topic), slog.String("callback", k.Callback))
	}
}

// backoff is the wait before attempt n+1 after n failures: base doubled
// n-1 times, at most limit.
func backoff(base, limit time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}
