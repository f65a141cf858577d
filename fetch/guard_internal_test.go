package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
)

// TestSSRFGuardDecision: the addresses the guard refuses when private
// targets are not allowed, IPv4-mapped IPv6 judged as IPv4.
func TestSSRFGuardDecision(t *testing.T) {
	guardControl := guard{host: newHostAddrs(func() ([]netip.Addr, error) { return nil, nil }, nil)}.control
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
	if c := newClient(clientSettings{Timeout: time.Second, ConnectTimeout: time.Second}, nil, nil, nil); c.transport == nil || c.transport.Proxy != nil {
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

// TestSSRFGuardSpecialPurpose: every range of the IANA IPv4 and IPv6
// special-purpose registries that is not globally reachable is refused,
// and the IPv4-mapped, NAT64 and 6to4 forms of a refused IPv4 address
// too; addresses just outside them are allowed.
func TestSSRFGuardSpecialPurpose(t *testing.T) {
	for _, tc := range []struct {
		ip        string
		forbidden bool
	}{
		// IPv4
		{"0.255.255.255", true}, {"100.64.0.0", true}, {"100.127.255.255", true},
		{"192.0.0.1", true}, {"192.0.0.8", true}, {"192.0.0.9", true}, {"192.0.0.10", true}, {"192.0.0.170", true}, {"192.0.0.255", true},
		{"192.0.2.1", true}, {"198.51.100.7", true}, {"203.0.113.7", true}, // documentation
		{"198.18.0.1", true}, {"198.19.255.255", true}, // benchmarking
		{"192.88.99.1", true},                                               // 6to4 relay anycast
		{"240.0.0.1", true}, {"254.1.2.3", true}, {"255.255.255.254", true}, // reserved
		{"255.255.255.255", true}, {"224.0.0.251", true}, {"233.252.0.1", true}, // broadcast, multicast
		{"192.0.1.255", false}, {"192.0.3.0", false}, {"198.17.255.255", false}, {"198.20.0.0", false},
		{"198.51.99.255", false}, {"203.0.112.255", false}, {"192.88.98.255", false}, {"223.255.255.254", false},
		{"192.31.196.1", false}, {"192.52.193.1", false}, {"192.175.48.1", false}, // AS112, AMT: globally reachable
		// IPv6
		{"::ffff:192.0.2.1", true}, {"::ffff:203.0.113.9", true}, {"::ffff:255.255.255.255", true},
		{"64:ff9b::7f00:1", true}, {"64:ff9b::a00:1", true}, {"64:ff9b::c000:201", true}, // NAT64 of refused IPv4
		{"64:ff9b::808:808", false}, // NAT64 of 8.8.8.8
		{"64:ff9b:1::1", true}, {"100::1", true}, {"100::1:0:0:1", true}, {"100:0:0:1::1", true},
		{"2001::1", true}, {"2001:0:4136:e378:8000:63bf:80ff:fffe", true}, // Teredo (client 127.0.0.1)
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", true}, // Teredo (client 8.8.8.8): all Teredo refused
		{"2001:1::1", true}, {"2001:2::1", true}, {"2001:3::1", true}, {"2001:10::1", true}, {"2001:20::1", true}, {"2001:1ff:ffff::1", true},
		{"2001:200::1", false}, // just past 2001::/23
		{"2001:db8::1", true}, {"2001:db8:ffff::1", true},
		{"2002:7f00:1::1", true}, {"2002:a00:1::1", true}, {"2002:c000:201::1", true}, // 6to4 of refused IPv4
		{"2002:808:808::1", false}, // 6to4 of 8.8.8.8
		{"3fff::1", true}, {"3fff:fff::1", true}, {"3fff:1000::1", false},
		{"5f00::1", true}, {"fec0::1", true}, {"feff::1", true}, {"ff0e::1", true},
		{"::2", true}, {"::127.0.0.1", true}, {"::8.8.8.8", true}, {"4000::1", true}, {"1::1", true}, // outside global unicast 2000::/3
		{"2a00:1450:4001::1", false}, {"2620:4f:8000::1", false},
		{"fe80::1%eth0", true}, {"2a00:1450:4001::1%eth0", true}, // a zone is for scoped addresses only
	} {
		t.Run(tc.ip, func(t *testing.T) {
			ip, err := netip.ParseAddr(tc.ip)
			if err != nil {
				t.Fatal(err)
			}
			if got := forbiddenAddr(ip); got != tc.forbidden {
				t.Fatalf("forbiddenAddr(%s) = %v, want %v", tc.ip, got, tc.forbidden)
			}
		})
	}
}

// errWouldConnect is what a test's dial hook answers in place of
// connecting: a guard that lets an address through gets it instead of a
// connection, and no packet leaves.
var errWouldConnect = errors.New("test: the guard let the address through")

// neverConnect chains dl's guard with a refusal of everything it lets
// through, so that a test of a public-looking address cannot reach it.
func neverConnect(dl *Dialer) {
	guard := dl.d.Control
	dl.d.Control = func(network, address string, c syscall.RawConn) error {
		if guard != nil {
			if err := guard(network, address, c); err != nil {
				return err
			}
		}
		return errWouldConnect
	}
}

// TestGuardRefusesHostAddresses: an address of this host's own interfaces
// is refused even when it looks public (a server's own public address
// reaches its admin port), before any connection; the list is read again
// once older than hostAddrsTTL, so a new interface is covered.
func TestGuardRefusesHostAddresses(t *testing.T) {
	clk := &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	addrs := []netip.Addr{netip.MustParseAddr("8.8.4.4")}
	var reads int
	src := func() ([]netip.Addr, error) { reads++; return addrs, nil }
	r := fakeResolver{"self.test": {"8.8.4.4"}, "other.test": {"9.9.9.9"}, "mapped.test": {"::ffff:8.8.4.4"}}
	dl := newDialer(false, time.Second, r, newHostAddrs(src, clk))
	neverConnect(dl)
	for _, host := range []string{"self.test", "8.8.4.4", "mapped.test", "2002:808:404::1"} {
		if _, err := dl.DialContext(t.Context(), "tcp", net.JoinHostPort(host, "443")); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("dial %s (this host's address): %v, want ErrForbiddenAddress", host, err)
		} else if !strings.Contains(err.Error(), "this host") {
			t.Errorf("dial %s: %q does not say the address is this host's", host, err)
		}
	}
	if _, err := dl.DialContext(t.Context(), "tcp", "other.test:443"); !errors.Is(err, errWouldConnect) {
		t.Errorf("dial another public address: %v, want it let through", err)
	}
	// A new interface: seen once the list is older than hostAddrsTTL.
	addrs = append(addrs, netip.MustParseAddr("9.9.9.9"))
	clk.now = clk.now.Add(hostAddrsTTL - time.Second)
	if _, err := dl.DialContext(t.Context(), "tcp", "other.test:443"); !errors.Is(err, errWouldConnect) {
		t.Errorf("dial within the TTL: %v, want the old list still used", err)
	}
	clk.now = clk.now.Add(2 * time.Second)
	if _, err := dl.DialContext(t.Context(), "tcp", "other.test:443"); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("dial an address of a new interface: %v, want ErrForbiddenAddress", err)
	}
	if reads != 2 {
		t.Errorf("the host's addresses were read %d times, want 2 (once, then after the TTL)", reads)
	}
	// allow_private allows the host's own addresses too.
	open := newDialer(true, time.Second, r, newHostAddrs(src, clk))
	neverConnect(open)
	if _, err := open.DialContext(t.Context(), "tcp", "self.test:443"); !errors.Is(err, errWouldConnect) {
		t.Errorf("dial this host's address with allow_private: %v, want it let through", err)
	}
}

// TestGuardHostAddrsUnreadable: when this host's addresses cannot be read
// at all, the guard refuses rather than guess; a list read once is kept
// when a later read fails.
func TestGuardHostAddrsUnreadable(t *testing.T) {
	clk := &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	fail := true
	src := func() ([]netip.Addr, error) {
		if fail {
			return nil, errors.New("netlink: permission denied")
		}
		return []netip.Addr{netip.MustParseAddr("8.8.4.4")}, nil
	}
	dl := newDialer(false, time.Second, fakeResolver{}, newHostAddrs(src, clk))
	neverConnect(dl)
	_, err := dl.DialContext(t.Context(), "tcp", "9.9.9.9:443")
	if !errors.Is(err, ErrForbiddenAddress) || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("dial with the host's addresses unreadable: %v, want ErrForbiddenAddress saying why", err)
	}
	fail = false
	clk.now = clk.now.Add(hostAddrsTTL)
	if _, err := dl.DialContext(t.Context(), "tcp", "9.9.9.9:443"); !errors.Is(err, errWouldConnect) {
		t.Errorf("dial once they are read: %v, want it let through", err)
	}
	fail = true
	clk.now = clk.now.Add(hostAddrsTTL)
	if _, err := dl.DialContext(t.Context(), "tcp", "8.8.4.4:443"); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("dial a known host address after a failed read: %v, want the last list kept", err)
	}
}

// TestFetcherGuardsHostAddresses: the fetcher's one client (pages,
// robots.txt, articles and renders' requests alike) refuses the host's
// addresses given by Options.HostAddrs; NewGuardedClient (WebSub
// callbacks) refuses the host's real interface addresses.
func TestFetcherGuardsHostAddresses(t *testing.T) {
	p := config.Default().Poller
	p.AllowPrivate = false
	p.Robots = false
	f, err := New(p, Options{
		Resolver:  fakeResolver{"self.test": {"8.8.4.4"}},
		HostAddrs: func() ([]netip.Addr, error) { return []netip.Addr{netip.MustParseAddr("8.8.4.4")}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // Close reports nothing
	neverConnect(f.client().dialer)
	if _, err := f.Get(t.Context(), Request{URL: "http://self.test/"}); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("Get of this host's address: %v, want ErrForbiddenAddress", err)
	}
	if _, err := f.Article(t.Context(), "http://self.test/a", nil); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("Article on this host's address: %v, want ErrForbiddenAddress", err)
	}

	if defaultHostAddrs.source == nil {
		t.Fatal("no default source of this host's addresses")
	}
	own, err := defaultHostAddrs.source()
	if err != nil {
		t.Fatal(err)
	}
	gc := NewGuardedClient(p, nil)
	dl := gc.Transport.(*http.Transport).DialContext
	for _, ip := range own {
		if _, err := dl(t.Context(), "tcp", net.JoinHostPort(ip.String(), "1")); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("guarded client dialing this host's %s: %v, want ErrForbiddenAddress", ip, err)
		}
	}
}

// TestGuardAddressSpellings: the spellings of a refused address a URL can
// hold (decimal, octal, hex, short forms, IPv6 forms of IPv4, zones) are
// all refused, before any connection and without asking a resolver.
func TestGuardAddressSpellings(t *testing.T) {
	p := config.Default().Poller
	p.AllowPrivate = false
	p.Robots = false
	f, err := New(p, Options{Resolver: fakeResolver{"localhost": {"127.0.0.1", "::1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // Close reports nothing
	neverConnect(f.client().dialer)
	for _, host := range []string{
		"127.0.0.1", "2130706433", "0177.0.0.1", "0x7f.1", "0x7f000001", "127.1", "127.0.1", "017700000001",
		"0x7F.0.0.1", "127.0.0.1.", "0", "0.0.0.0", "0x0", "10.1", "0xa9.0xfe.0xa9.0xfe", "3232235777",
		"[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:7f00:1]", "[::127.0.0.1]",
		"[fe80::1%25lo]", "[::1%25lo]", "[64:ff9b::7f00:1]", "[2002:7f00:1::]", "localhost", "LOCALHOST",
	} {
		u := "http://" + host + ":8080/"
		_, err := f.Get(t.Context(), Request{URL: u})
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("Get %s: %v, want ErrForbiddenAddress", u, err)
		}
	}
}

// manualClock is a Clock the test moves by hand.
type manualClock struct{ now time.Time }

func (c *manualClock) Now() time.Time                 { return c.now }
func (c *manualClock) NewTimer(d time.Duration) Timer { return realClock{}.NewTimer(d) }

// TestLooseIPv4: hosts a URL parser reads as IPv4 addresses, as the WHATWG
// URL Standard does; names stay names.
func TestLooseIPv4(t *testing.T) {
	for _, tc := range []struct {
		host, want string // want "": not numeric; "bad": numeric but no address
	}{
		{"2130706433", "127.0.0.1"}, {"0177.0.0.1", "127.0.0.1"}, {"0x7f.1", "127.0.0.1"}, {"127.1", "127.0.0.1"},
		{"1.2.3", "1.2.0.3"}, {"1.2.3.4.", "1.2.3.4"}, {"0x", "0.0.0.0"}, {"0X0A.0", "10.0.0.0"}, {"4294967295", "255.255.255.255"},
		{"4294967296", "bad"}, {"1.2.3.256", "bad"}, {"1.2.65536", "bad"}, {"256.1", "bad"}, {"1.2.3.4.5", "bad"}, {"08", "bad"}, {"0x1g.1", "bad"},
		{"a.1", "bad"}, {"99999999999999999999999", "bad"},
		{"example.com", ""}, {"1.2.3.example", ""}, {"0x1g", ""}, {"localhost", ""}, {"1e3", ""},
	} {
		ip, numeric, err := looseIPv4(tc.host)
		var got string
		switch {
		case !numeric:
		case err != nil:
			got = "bad"
		default:
			got = ip.String()
		}
		if got != tc.want {
			t.Errorf("looseIPv4(%q) = %v, %v, %v; want %q", tc.host, ip, numeric, err, tc.want)
		}
	}
}
