package config

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// TestBoundsBothWays: every bound the configuration checks, tried on both
// sides and at the bound itself, and every pair of bounds tried both ways
// round (min against initial, initial against max, min against max,
// lease_min against lease_default against lease_max), so a check written
// one way only, or with < for ≤, is caught.
func TestBoundsBothWays(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		bad        string // the field named in the error; "" when the file is valid
	}{
		// The smart policy: 0 < min ≤ initial ≤ max.
		{"min = initial = max", "poller:\n  policy: {kind: smart, initial: 5m, min: 5m, max: 5m}\n", ""},
		{"min < initial < max", "poller:\n  policy: {kind: smart, initial: 5m, min: 1m, max: 1h}\n", ""},
		{"min > initial", "poller:\n  policy: {kind: smart, initial: 1m, min: 5m, max: 1h}\n", "poller.policy"},
		{"min just above initial", "poller:\n  policy: {kind: smart, initial: 5m, min: 5m1s, max: 1h}\n", "poller.policy"},
		{"initial > max", "poller:\n  policy: {kind: smart, initial: 2h, min: 1m, max: 1h}\n", "poller.policy"},
		{"initial just above max", "poller:\n  policy: {kind: smart, initial: 1h1s, min: 1m, max: 1h}\n", "poller.policy"},
		{"min > max, initial between", "poller:\n  policy: {kind: smart, initial: 30m, min: 1h, max: 10m}\n", "poller.policy"},
		{"negative min", "poller:\n  policy: {kind: smart, initial: 5m, min: -1m, max: 1h}\n", "poller.policy.min"},
		{"a resource's initial above the default max", "resources:\n  - id: a\n    url: http://x/\n    policy: {initial: 7h}\n", "resources[0].policy"},
		{"a resource's initial at the default max", "resources:\n  - id: a\n    url: http://x/\n    policy: {initial: 6h}\n", ""},
		{"a resource's max below the default initial", "resources:\n  - id: a\n    url: http://x/\n    policy: {max: 9m}\n", "resources[0].policy"},
		{"a resource's min above the default initial", "resources:\n  - id: a\n    url: http://x/\n    policy: {min: 11m}\n", "resources[0].policy"},
		{"alpha 0", "poller:\n  policy: {alpha: 0}\n", ""},
		{"alpha 1", "poller:\n  policy: {alpha: 1}\n", ""},
		{"alpha above 1", "poller:\n  policy: {alpha: 1.01}\n", "poller.policy.alpha"},
		{"alpha below 0", "poller:\n  policy: {alpha: -0.01}\n", "poller.policy.alpha"},
		// The flat policy: interval > 0.
		{"flat interval 1s", "poller:\n  policy: {kind: flat, interval: 1s}\n", ""},
		{"flat negative interval", "poller:\n  policy: {kind: flat, interval: -1s}\n", "poller.policy.interval"},
		// The budget: polls_per_day ≥ 0, max_interval ≥ BudgetFloor, weight > 0.
		{"polls_per_day 0", "poller:\n  budget: {polls_per_day: 0}\n", ""},
		{"polls_per_day below 0", "poller:\n  budget: {polls_per_day: -0.5}\n", "poller.budget.polls_per_day"},
		{"max_interval at the floor", "poller:\n  budget: {max_interval: 10m}\n", ""},
		{"max_interval just under the floor", "poller:\n  budget: {max_interval: 9m59s}\n", "poller.budget.max_interval"},
		{"a small positive weight", "resources:\n  - id: a\n    url: http://x/\n    policy: {kind: budget}\n    weight: 0.001\n", ""},
		{"a negative weight", "resources:\n  - id: a\n    url: http://x/\n    policy: {kind: budget}\n    weight: -0.001\n", "resources[0].weight"},
		// The poller's counts: 1 ≤ workers ≤ 1024, 0 ≤ max_redirects ≤ 20.
		{"poller workers 1", "poller:\n  workers: 1\n", ""},
		{"poller workers 1024", "poller:\n  workers: 1024\n", ""},
		{"poller workers 0", "poller:\n  workers: 0\n", "poller.workers"},
		{"poller workers 1025", "poller:\n  workers: 1025\n", "poller.workers"},
		{"max_redirects 0", "poller:\n  max_redirects: 0\n", ""},
		{"max_redirects 20", "poller:\n  max_redirects: 20\n", ""},
		{"max_redirects -1", "poller:\n  max_redirects: -1\n", "poller.max_redirects"},
		{"max_redirects 21", "poller:\n  max_redirects: 21\n", "poller.max_redirects"},
		{"max_body 1", "poller:\n  max_body: 1\n", ""},
		{"max_body 0", "poller:\n  max_body: 0\n", "poller.max_body"},
		{"timeout 0", "poller:\n  timeout: 0s\n", "poller.timeout"},
		{"lease_min 0", "websub: {lease_min: 0s}\n", "websub.lease_min"},
		{"timeout negative", "poller:\n  timeout: -1s\n", "poller.timeout"},
		{"connect_timeout negative", "poller:\n  connect_timeout: -1s\n", "poller.connect_timeout"},
		{"header_timeout negative", "poller:\n  header_timeout: -1s\n", "poller.header_timeout"},
		// Retention: max_versions ≥ 0.
		{"retention max_versions 0", "poller:\n  retention: {max_versions: 0}\n", ""},
		{"retention max_versions 1", "poller:\n  retention: {max_versions: 1}\n", ""},
		{"retention max_versions -1", "poller:\n  retention: {max_versions: -1}\n", "poller.retention.max_versions"},
		{"a resource's max_versions -1", "resources:\n  - id: a\n    url: http://x/\n    retention: {max_versions: -1}\n", "resources[0].retention.max_versions"},
		{"retention max_age 0 (unbounded)", "poller:\n  retention: {max_age: 0s}\n", ""},
		{"retention max_age negative", "poller:\n  retention: {max_age: -1s}\n", "poller.retention.max_age"},
		// Values with white space around them: refused, not trimmed.
		{"an id with a trailing space", "resources:\n  - id: 'abc '\n    url: http://x/\n", "resources[0].id"},
		{"an id with a leading space", "resources:\n  - id: ' abc'\n    url: http://x/\n", "resources[0].id"},
		{"an id of one character", "resources:\n  - id: a\n    url: http://x/\n", ""},
		{"an id of 128 characters", "resources:\n  - id: " + strings.Repeat("a", 128) + "\n    url: http://x/\n", ""},
		{"an id of 129 characters", "resources:\n  - id: " + strings.Repeat("a", 129) + "\n    url: http://x/\n", "resources[0].id"},
		{"a url with a leading space", "resources:\n  - id: a\n    url: ' http://x/'\n", "resources[0].url"},
		// memory_limit: 0 (automatic) or at least 64 MiB; min_free ≥ 0.
		{"memory_limit 64MiB", "memory_limit: 64MiB\n", ""},
		{"memory_limit just under 64MiB", "memory_limit: 67108863\n", "memory_limit"},
		{"min_free 0", "storage: {min_free: 0}\n", ""},
		{"min_free -1", "storage: {min_free: -1}\n", "storage.min_free"},
		// WebSub: lease_min ≤ lease_default ≤ lease_max, 1 ≤ workers ≤ 1024,
		// 1 ≤ queue ≤ 1048576.
		{"leases all equal", "websub: {lease_min: 24h, lease_default: 24h, lease_max: 24h}\n", ""},
		{"lease_min > lease_max", "websub: {lease_min: 48h, lease_default: 48h, lease_max: 24h}\n", "websub.lease_min"},
		{"lease_default < lease_min", "websub: {lease_min: 2h, lease_default: 1h, lease_max: 24h}\n", "websub.lease_default"},
		{"lease_default > lease_max", "websub: {lease_min: 1h, lease_default: 25h, lease_max: 24h}\n", "websub.lease_default"},
		{"lease_default just under lease_min", "websub: {lease_min: 1h, lease_default: 59m59s, lease_max: 24h}\n", "websub.lease_default"},
		{"lease_default just over lease_max", "websub: {lease_min: 1h, lease_default: 24h1s, lease_max: 24h}\n", "websub.lease_default"},
		{"retry_for negative", "websub: {retry_for: -1h}\n", "websub.retry_for"},
		{"websub workers 1", "websub: {workers: 1}\n", ""},
		{"websub workers 1024", "websub: {workers: 1024}\n", ""},
		{"websub workers 1025", "websub: {workers: 1025}\n", "websub.workers"},
		{"websub queue 1", "websub: {queue: 1}\n", ""},
		{"websub queue 1048576", "websub: {queue: 1048576}\n", ""},
		{"websub queue 0", "websub: {queue: 0}\n", "websub.queue"},
		{"websub queue 1048577", "websub: {queue: 1048577}\n", "websub.queue"},
		// The browser: 1 ≤ max_tabs ≤ 64, timeout > 0, a DevTools URL with
		// a host and a ws, wss, http or https scheme, not beside exec;
		// 1 ≤ full_per_poll ≤ 1000.
		{"max_tabs 1", "poller:\n  browser: {max_tabs: 1}\n", ""},
		{"max_tabs 64", "poller:\n  browser: {max_tabs: 64}\n", ""},
		{"max_tabs 0", "poller:\n  browser: {max_tabs: 0}\n", "poller.browser.max_tabs"},
		{"max_tabs 65", "poller:\n  browser: {max_tabs: 65}\n", "poller.browser.max_tabs"},
		{"browser timeout 1ns", "poller:\n  browser: {timeout: 1ns}\n", ""},
		{"browser timeout negative", "poller:\n  browser: {timeout: -1s}\n", "poller.browser.timeout"},
		{"browser url ws", "poller:\n  browser: {url: 'ws://127.0.0.1:9222/devtools/browser/x'}\n", ""},
		{"browser url wss", "poller:\n  browser: {url: 'wss://pool.example/x'}\n", ""},
		{"browser url http", "poller:\n  browser: {url: 'http://127.0.0.1:9222'}\n", ""},
		{"browser url https", "poller:\n  browser: {url: 'https://pool.example'}\n", ""},
		{"browser url ftp", "poller:\n  browser: {url: 'ftp://pool.example'}\n", "poller.browser.url"},
		{"browser url without host", "poller:\n  browser: {url: 'ws:///x'}\n", "poller.browser.url"},
		{"browser url unparsable", "poller:\n  browser: {url: 'ws://[::1'}\n", "poller.browser.url"},
		{"browser url beside exec", "poller:\n  browser: {url: 'ws://127.0.0.1:9222/x', exec: /usr/bin/chromium}\n", "poller.browser.exec"},
		{"browser exec alone", "poller:\n  browser: {exec: /usr/bin/chromium}\n", ""},
		{"full_per_poll 1", "poller:\n  full_per_poll: 1\n", ""},
		{"full_per_poll 1000", "poller:\n  full_per_poll: 1000\n", ""},
		{"full_per_poll 1001", "poller:\n  full_per_poll: 1001\n", "poller.full_per_poll"},
		{"full_per_poll -1", "poller:\n  full_per_poll: -1\n", "poller.full_per_poll"},
		// feeds.subscribe_max: 1 ≤ n ≤ 10000.
		{"subscribe_max 1", "feeds: {subscribe_max: 1}\n", ""},
		{"subscribe_max 10000", "feeds: {subscribe_max: 10000}\n", ""},
		{"subscribe_max 0", "feeds: {subscribe_max: 0}\n", "feeds.subscribe_max"},
		{"subscribe_max 10001", "feeds: {subscribe_max: 10001}\n", "feeds.subscribe_max"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if tc.bad == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *FieldError naming %s", err, tc.bad)
			}
			if !strings.Contains(err.Error(), tc.bad+":") {
				t.Errorf("error %q does not name %s", err, tc.bad)
			}
		})
	}
}

// TestPolicyValidateBothWays checks [Policy.Validate] itself at each bound,
// from both sides, for each kind.
func TestPolicyValidateBothWays(t *testing.T) {
	smart := func(min, initial, max time.Duration, alpha float64) Policy {
		return Policy{Kind: KindSmart, Min: min, Initial: initial, Max: max, Alpha: alpha}
	}
	for _, tc := range []struct {
		name string
		p    Policy
		ok   bool
	}{
		{"smart min = initial = max", smart(time.Minute, time.Minute, time.Minute, 0.5), true},
		{"smart min > initial", smart(2*time.Minute, time.Minute, time.Hour, 0.5), false},
		{"smart initial > max", smart(time.Minute, 2*time.Hour, time.Hour, 0.5), false},
		{"smart initial one ns over max", smart(time.Minute, time.Hour+1, time.Hour, 0.5), false},
		{"smart min one ns over initial", smart(time.Minute+1, time.Minute, time.Hour, 0.5), false},
		{"smart min 1ns", smart(1, 1, 1, 0.5), true},
		{"smart min 0", smart(0, time.Minute, time.Hour, 0.5), false},
		{"smart alpha 0", smart(time.Minute, time.Minute, time.Hour, 0), true},
		{"smart alpha 1", smart(time.Minute, time.Minute, time.Hour, 1), true},
		{"smart alpha just over 1", smart(time.Minute, time.Minute, time.Hour, math.Nextafter(1, 2)), false},
		{"smart alpha just under 0", smart(time.Minute, time.Minute, time.Hour, math.Nextafter(0, -1)), false},
		{"smart alpha out of range but auto", Policy{Kind: KindSmart, Min: time.Minute, Initial: time.Minute, Max: time.Hour, Alpha: 2, AlphaAuto: true}, true},
		{"flat interval 1ns", Policy{Kind: KindFlat, Interval: 1}, true},
		{"flat interval 0", Policy{Kind: KindFlat}, false},
		{"budget weight tiny", Policy{Kind: KindBudget, Weight: math.SmallestNonzeroFloat64}, true},
		{"budget weight largest", Policy{Kind: KindBudget, Weight: math.MaxFloat64}, true},
		{"budget weight 0", Policy{Kind: KindBudget}, false},
		{"budget weight negative", Policy{Kind: KindBudget, Weight: -1}, false},
		{"budget weight +Inf", Policy{Kind: KindBudget, Weight: math.Inf(1)}, false},
		{"budget weight NaN", Policy{Kind: KindBudget, Weight: math.NaN()}, false},
		{"unknown kind", Policy{Kind: "eager", Interval: time.Minute}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.p.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate(%+v) = %v, want ok %v", tc.p, err, tc.ok)
			}
		})
	}
}

// TestResolveFlatUnderSmartDefault: a flat resource under a smart default
// with no interval polls at the default's initial estimate; a smart one
// keeps no interval (it has none to use).
func TestResolveFlatUnderSmartDefault(t *testing.T) {
	cfg, err := Parse([]byte("poller:\n  policy: {kind: smart, interval: 0s, initial: 7m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Poller
	if got := p.ResolvePolicy(PolicySpec{Kind: KindFlat}); got.Interval != 7*time.Minute {
		t.Errorf("flat under a smart default: interval %v, want the initial 7m", got.Interval)
	}
	if got := p.ResolvePolicy(PolicySpec{Kind: KindFlat, Interval: Duration(time.Hour)}); got.Interval != time.Hour {
		t.Errorf("flat with its own interval: %v, want 1h", got.Interval)
	}
	if got := p.ResolvePolicy(PolicySpec{}); got.Kind != KindSmart || got.Interval != 0 {
		t.Errorf("smart: %+v, want no interval", got)
	}
}

// TestResolveRetentionEachField: each field of a resource's retention
// overrides the default on its own; an unset field inherits it.
func TestResolveRetentionEachField(t *testing.T) {
	p := PollerConfig{Retention: RetentionConfig{MaxVersions: 100, MaxAge: Duration(720 * time.Hour)}}
	for _, tc := range []struct {
		r, want RetentionConfig
	}{
		{RetentionConfig{}, RetentionConfig{MaxVersions: 100, MaxAge: Duration(720 * time.Hour)}},
		{RetentionConfig{MaxVersions: 1}, RetentionConfig{MaxVersions: 1, MaxAge: Duration(720 * time.Hour)}},
		{RetentionConfig{MaxAge: Duration(time.Hour)}, RetentionConfig{MaxVersions: 100, MaxAge: Duration(time.Hour)}},
		{RetentionConfig{MaxVersions: 500, MaxAge: Duration(time.Minute)}, RetentionConfig{MaxVersions: 500, MaxAge: Duration(time.Minute)}},
	} {
		if got := p.ResolveRetention(tc.r); got != tc.want {
			t.Errorf("ResolveRetention(%+v) = %+v, want %+v", tc.r, got, tc.want)
		}
	}
	if got := (PollerConfig{}).ResolveRetention(RetentionConfig{MaxAge: Duration(time.Hour)}); got != (RetentionConfig{MaxAge: Duration(time.Hour)}) {
		t.Errorf("over an unbounded default: %+v", got)
	}
}
