package poller

import (
	"fmt"
	"hash/fnv"
	"time"
)

// Error back-off: base·2^(n−1) after the n-th consecutive error, capped, ±10% jitter.
const (
	errBackoffBase = 30 * time.Second
	errBackoffCap  = time.Hour
)

// diskFullRetry is the longest wait after a poll that could not store for
// lack of disk space.
const diskFullRetry = 5 * time.Minute

// replan starts pol on st (a new policy, a new budget) and returns when
// resource id is next due: from its last poll, keeping an error back-off
// in force. It sets st.NextPoll. An overdue resource is due now, or, when
// it was just added (a start-up), within the first minute as scheduleFirst
// places overdue ones, so that a start-up under a new default does not
// poll every page at once.
func replan(st *persisted, pol Policy, id string, now time.Time, added bool) time.Time {
	wait := pol.Start(&st.Policy)
	var at time.Time
	switch {
	case st.LastPoll.IsZero():
		at = now.Add(spread(id, wait))
	case st.LastPoll.Add(wait).Before(now) && added:
		at = now.Add(spread(id, min(wait, firstPollWindow)))
	default:
		at = st.LastPoll.Add(wait)
		if at.Before(now) {
			at = now
		}
	}
	if st.Failures > 0 && st.NextPoll.After(at) {
		at = st.NextPoll // keep an error back-off in force
	}
	st.NextPoll = at
	return at
}

// firstPollWindow bounds the spread of first polls (new resources, and
// overdue ones after a restart).
const firstPollWindow = time.Minute

// spread is a stable offset of id within d.
func spread(id string, d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(id)) // hash writes never fail
	return time.Duration(h.Sum64() % uint64(d))
}

// backoff is the wait after the n-th consecutive error of id.
func backoff(id string, n int) time.Duration {
	d := errBackoffCap
	if n <= 20 {
		d = min(errBackoffBase<<(max(n, 1)-1), errBackoffCap)
	}
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%s/%d", id, n) // hash writes never fail
	jitter := 0.9 + 0.2*float64(h.Sum64()%1000)/1000
	return time.Duration(float64(d) * jitter)
}
