package service

import "time"

// PageWaiter is a PageFetcher that tells, without waiting or booking
// anything, how long a fetch of url would wait for its host's politeness
// slot (0: the slot is free now). Optional: the browser's /new asks it so
// that a fetch that has to wait answers at once with a page that waits.
type PageWaiter interface {
	PageWait(url string) time.Duration
}
