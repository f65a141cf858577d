package websub

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestMeasureFanout measures the time from Notify to each subscriber's
// receipt with 1,000 subscribers of one topic on loopback (real clock,
// BadgerStore on disk). It runs only with DYNAMO_WEBSUB_MEASURE=1:
//
//	DYNAMO_WEBSUB_MEASURE=1 go test -run TestMeasureFanout -v -count=1 ./websub
func TestMeasureFanout(t *testing.T) {
	if os.Getenv("DYNAMO_WEBSUB_MEASURE") != "1" {
		t.Skip("set DYNAMO_WEBSUB_MEASURE=1 to measure")
	}
	const subscribers, rounds = 1000, 5
	for _, workers := range []int{8, 32} {
		t.Run("workers="+strconv.Itoa(workers), func(t *testing.T) {
			measureFanout(t, subscribers, rounds, workers)
		})
	}
}

func measureFanout(t *testing.T, subscribers, rounds, workers int) {
	var mu sync.Mutex
	var notified time.Time
	var lat []time.Duration
	got := make(chan struct{}, subscribers)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		lat = append(lat, time.Since(notified))
		mu.Unlock()
		got <- struct{}{}
	}))
	defer srv.Close()
	var st Store = &MemoryStore{}
	if os.Getenv("DYNAMO_WEBSUB_MEASURE_STORE") != "memory" {
		bs, err := OpenBadgerStore(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer bs.Close()
		st = bs
	}
	topics := newFakeTopics()
	body := make([]byte, 20<<10) // a 20 KiB feed
	topics.set(topicNews, string(body))
	ctx := context.Background()
	now := time.Now()
	for i := range subscribers {
		k := Key{Resource: "news", Topic: topicNews, Callback: fmt.Sprintf("%s/cb/%d", srv.URL, i)}
		err := st.Update(ctx, k, func(*Subscription) (*Subscription, error) {
			return &Subscription{Secret: "secret", Lease: DefaultLease, Verified: now, Expires: now.Add(DefaultLease)}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	defer client.CloseIdleConnections()
	h, err := New(Options{URL: topicBase + "/websub", Topics: topics, Store: st, Client: client, Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.Run(runCtx) }()
	defer func() { cancel(); <-done }()

	var lasts []time.Duration
	for round := range rounds {
		body[0] = byte('a' + round)
		topics.set(topicNews, string(body))
		mu.Lock()
		notified = time.Now()
		mu.Unlock()
		h.Notify("news")
		for range subscribers {
			select {
			case <-got:
			case <-time.After(time.Minute):
				t.Fatalf("round %d: not every subscriber got the delivery", round)
			}
		}
		lasts = append(lasts, time.Since(notified))
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	slices.Sort(lasts)
	t.Logf("%d subscribers × %d rounds, %d workers, 20 KiB signed body, BadgerStore: Notify→receipt median %v, p99 %v, max %v; all %d delivered in median %v",
		subscribers, rounds, workers, q(0.5).Round(time.Microsecond), q(0.99).Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond),
		subscribers, lasts[len(lasts)/2].Round(time.Microsecond))
}
