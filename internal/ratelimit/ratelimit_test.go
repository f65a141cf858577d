package ratelimit

import (
	"fmt"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestBurstThenRefill(t *testing.T) {
	l := New(10*time.Second, 3)
	for i := range 3 {
		if ok, _, _ := l.Take("a", t0); !ok {
			t.Fatalf("take %d of the burst refused", i+1)
		}
	}
	ok, wait, back := l.Take("a", t0)
	if ok || wait != 10*time.Second || back != nil {
		t.Fatalf("past the burst: ok %v, wait %v, giveBack %v; want refused, 10s", ok, wait, back != nil)
	}
	if ok, _, _ := l.Take("b", t0); !ok {
		t.Error("another key is limited by the first one's use")
	}
	if ok, wait, _ := l.Take("a", t0.Add(4*time.Second)); ok || wait <= 5900*time.Millisecond || wait > 6*time.Second {
		t.Errorf("4s later: ok %v, wait %v; want refused, 6s", ok, wait)
	}
	if ok, _, _ := l.Take("a", t0.Add(10*time.Second)); !ok {
		t.Error("one interval later: refused")
	}
	if ok, _, _ := l.Take("a", t0.Add(10*time.Second)); ok {
		t.Error("one interval later: two tokens")
	}
}

func TestGiveBack(t *testing.T) {
	l := New(time.Minute, 1)
	ok, _, back := l.Take("a", t0)
	if !ok {
		t.Fatal("first take refused")
	}
	back()
	if ok, _, _ := l.Take("a", t0); !ok {
		t.Error("a token given back cannot be taken again")
	}
	if ok, _, _ := l.Take("a", t0); ok {
		t.Error("more than the burst after a give-back")
	}
}

func TestKeysBounded(t *testing.T) {
	l := New(time.Minute, 1)
	for i := range MaxKeys {
		l.Take(fmt.Sprint(i), t0)
	}
	l.Take("late", t0.Add(Idle+time.Second)) // every earlier key is idle
	if n := len(l.keys); n > MaxKeys/2 || l.keys["late"] == nil {
		t.Errorf("%d keys after the idle ones were dropped (late kept: %v), want at most %d", n, l.keys["late"] != nil, MaxKeys/2)
	}
	for i := range MaxKeys {
		l.Take(fmt.Sprint(i), t0.Add(2*Idle))
	}
	if n := len(l.keys); n > MaxKeys {
		t.Errorf("%d keys, bound %d", n, MaxKeys)
	}
}
