package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
)

// TestSSRFGuardDecision: the addresses the guard refuses when private
// targets are not allowed, IPv4-mapped IPv6 judged as IPv4.
func TestSSRFGuardDecision(t *testing.T) {
	for _, tc := range []struct {
		ip        string
		forbidden bool
	}{
		{"127.0.0.1", true}, {"127.8.9.10", true}, {"10.1.2.3", true}, {"172.16.0.1", true},
		{"192.168.1.1", true}, {"169.254.169.254", true}, {"100.64.0.1", true}, {"100.127.255.254", true},
		{"0.0.0.0", true}, {"0.1.2.3", true}, {"224.0.0.1", true}, {"::1", true}, {"::", true},
		{"fe80::1", true}, {"fc00::1", true}, {"fd12::1", true}, {"::ffff:127.0.0.1", true},
		{"::ffff:10.0.0.1", true}, {"::ffff:169.254.1.1", true},
		{"::ffff:100.64.0.1", true}, {"::ffff:0.1.2.3", true}, // the checks netip does not unmap by itself
		{"239.255.255.250", true}, {"ff05::1:3", true}, {"ff02::1", true}, {"ff01::1", true}, // multicast, link- and interface-local too
		{"172.15.255.255", false}, {"172.32.0.1", false}, {"100.63.255.255", false}, {"1.0.0.1", false}, // just outside the ranges
		{"93.184.216.34", false}, {"100.128.0.1", false}, {"2606:4700::1111", false}, {"::ffff:8.8.8.8", false},
	} {
		t.Run(tc.ip, func(t *testing.T) {
			err := guardControl("tcp", net.JoinHostPort(tc.ip, "80"), nil)
			if got := errors.Is(err, ErrForbiddenAddress); got != tc.forbidden {
				t.Fatalf("guard(%s) = %v, want forbidden=%v", tc.ip, err, tc.forbidden)
			}
		})
	}
	if !forbiddenAddr(netip.Addr{}) {
		t.Error("the zero address (no address at all) allowed")
	}
	if err := guardControl("tcp", "not an address", nil); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("guard of an unreadable address: %v, want ErrForbiddenAddress", err)
	}
}

// TestClientsUseNoProxy: neither the fetcher's client nor the guarded
// client (WebSub callbacks) takes a proxy from the environment: a proxy
// would dial the target for us, past the guard.
func TestClientsUseNoProxy(t *testing.T) {
	if c := newClient(clientSettings{Timeout: time.Second, ConnectTimeout: time.Second}, nil, nil); c.transport == nil || c.transport.Proxy != nil {
		t.Error("the fetcher's transport has a proxy function")
	}
	gc := NewGuardedClient(config.PollerConfig{}, nil)
	if tr, ok := gc.Transport.(*http.Transport); !ok || tr.Proxy != nil {
		t.Errorf("the guarded client's transport %T has a proxy function", gc.Transport)
	}
}

// fakeResolver resolves the names it has, and fails on any other.
type fakeResolver map[string][]string

func (r fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	addrs, ok := r[host]
	if !ok {
		return nil, fmt.Errorf("no such host %s", host)
	}
	var out []net.IPAddr
	for _, a := range addrs {
		out = append(out, net.IPAddr{IP: net.ParseIP(a)})
	}
	return out, nil
}

// TestDialerResolves: with a resolver, a name is dialed at its addresses
// in order (the next when one refuses), a literal address without asking
// the resolver, a name without addresses is an error, and the guard judges
// every address the name gives.
func TestDialerResolves(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	r := fakeResolver{
		"two.test":   {"127.0.0.2", "127.0.0.1"}, // nothing listens on 127.0.0.2
		"none.test":  {},
		"local.test": {"127.0.0.1"},
	}
	open := NewDialer(true, time.Second, r)
	for _, host := range []string{"two.test", "127.0.0.1"} {
		c, err := open.DialContext(t.Context(), "tcp", net.JoinHostPort(host, port))
		if err != nil || c == nil {
			t.Fatalf("dial %s: %v, %v", host, c, err)
		}
		c.Close()
	}
	if c, err := open.DialContext(t.Context(), "tcp", net.JoinHostPort("none.test", port)); err == nil || !strings.Contains(err.Error(), "no addresses") {
		t.Errorf("dial a name without addresses: %v, %v; want an error saying so", c, err)
	}
	guarded := NewDialer(false, time.Second, r)
	if c, err := guarded.DialContext(t.Context(), "tcp", net.JoinHostPort("local.test", port)); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("guarded dial of a name on loopback: %v, %v; want ErrForbiddenAddress", c, err)
	}
}
