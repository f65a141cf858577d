package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dynamo-rss/dynamo/config"
)

// ErrForbiddenAddress is wrapped by dial errors for addresses the SSRF guard
// refuses: any address that is not globally reachable (loopback, private,
// link-local, CGNAT, documentation, multicast… see [Dialer]) and every
// address of this host's own interfaces. The refusal comes before any
// connection: it tells nothing of whether something listens there.
var ErrForbiddenAddress = errors.New("fetch: address not allowed (not globally reachable, or this host's own; poller.allow_private allows it, on a trusted network only)")

// Resolver looks up a host's addresses; *net.Resolver satisfies it. Tests
// inject a fake one so that names resolve to chosen addresses.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// refusedPrefixes are the entries of the IANA special-purpose address
// registries (iana-ipv4-special-registry, iana-ipv6-special-registry)
// that are not globally reachable, and the other blocks no web page is
// served from (multicast, reserved). The IPv4-mapped (::ffff:0:0/96),
// NAT64 (64:ff9b::/96) and 6to4 (2002::/16) forms of an IPv4 address are
// judged as that address (see forbiddenAddr); IPv6 outside 2000::/3, the
// global unicast space, is refused as a whole (globalUnicast6).
var refusedPrefixes = prefixes(
	// IPv4
	"0.0.0.0/8",          // RFC 791 "this network" (and 0.0.0.0/32 "this host")
	"10.0.0.0/8",         // RFC 1918 private-use
	"100.64.0.0/10",      // RFC 6598 shared address space (CGNAT)
	"127.0.0.0/8",        // RFC 1122 loopback
	"169.254.0.0/16",     // RFC 3927 link local (cloud metadata at 169.254.169.254)
	"172.16.0.0/12",      // RFC 1918 private-use
	"192.0.0.0/24",       // RFC 6890 IETF protocol assignments, whole: its two globally reachable entries, 192.0.0.9/32 (PCP anycast) and 192.0.0.10/32 (TURN anycast), answer NAT control and relay protocols of the local network, never a web page
	"192.0.2.0/24",       // RFC 5737 documentation (TEST-NET-1)
	"192.88.99.0/24",     // RFC 7526 deprecated 6to4 relay anycast
	"192.168.0.0/16",     // RFC 1918 private-use
	"198.18.0.0/15",      // RFC 2544 benchmarking
	"198.51.100.0/24",    // RFC 5737 documentation (TEST-NET-2)
	"203.0.113.0/24",     // RFC 5737 documentation (TEST-NET-3)
	"224.0.0.0/4",        // RFC 5771 multicast
	"240.0.0.0/4",        // RFC 1112 reserved
	"255.255.255.255/32", // RFC 8190 limited broadcast (inside 240/4, named for the registry)
	// IPv6
	"::/128",         // RFC 4291 unspecified
	"::1/128",        // RFC 4291 loopback
	"64:ff9b:1::/48", // RFC 8215 local-use IPv4/IPv6 translation
	"100::/64",       // RFC 6666 discard-only
	"100:0:0:1::/64", // RFC 9780 dummy prefix
	"2001::/23",      // RFC 2928 IETF protocol assignments, whole: Teredo 2001::/32 (RFC 4380, a tunnel to whatever IPv4 client it embeds) and benchmarking 2001:2::/48 are not globally reachable; its globally reachable entries (PCP, TURN and DNS-SD anycast 2001:1::1-3, AMT 2001:3::/32, AS112 2001:4:112::/48, ORCHIDv2 2001:20::/28, drone DETs 2001:30::/28) are relays, DNS sinks and identifiers, never a web page
	"2001:db8::/32",  // RFC 3849 documentation
	"3fff::/20",      // RFC 9637 documentation
	"5f00::/16",      // RFC 9602 segment routing (SRv6) SIDs
	"fc00::/7",       // RFC 4193 unique-local
	"fe80::/10",      // RFC 4291 link-local unicast
	"fec0::/10",      // RFC 3879 deprecated site-local
	"ff00::/8",       // RFC 4291 multicast
)

// globalUnicast6 is the IPv6 global unicast space (RFC 4291, IANA IPv6
// address space registry): every IPv6 address outside it is reserved by
// the IETF or special (::/8 with the deprecated IPv4-compatible ::a.b.c.d,
// 100::/8, 5f00::/16, fc00::/7, fe80::/10, ff00::/8…) and refused, but
// for the IPv4-mapped and NAT64 forms judged as their IPv4 address.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052 IPv4/IPv6 translation: the last 32 bits are an IPv4 address
	sixToFour = netip.MustParsePrefix("2002::/16")    // RFC 3056 6to4: bits 16-47 are an IPv4 address
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// embeddedIPv4 is the IPv4 address a NAT64 or 6to4 address leads to.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	a := ip.As16()
	switch {
	case nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(a[12:16])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(a[2:6])), true
	}
	return netip.Addr{}, false
}

// forbiddenAddr reports whether the SSRF guard refuses ip, whatever host
// it runs on, when private targets are not allowed: not an address, an
// address with a zone (only scoped addresses, all refused, take one), one
// of refusedPrefixes, IPv6 outside global unicast; IPv4-mapped, NAT64 and
// 6to4 addresses are judged as the IPv4 address they lead to.
func forbiddenAddr(ip netip.Addr) bool {
	if !ip.IsValid() || ip.Zone() != "" {
		return true
	}
	ip = ip.Unmap()
	if v4, ok := embeddedIPv4(ip); ok {
		return forbiddenAddr(v4)
	}
	for _, p := range refusedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return ip.Is6() && !globalUnicast6.Contains(ip)
}

// hostAddrsTTL is how long this host's interface addresses are trusted
// before they are read again, so that an interface added later is covered.
const hostAddrsTTL = 30 * time.Second

// hostAddrs is this host's own addresses, read from source (the
// interfaces) when older than hostAddrsTTL by clock. Safe for concurrent use.
type hostAddrs struct {
	source func() ([]netip.Addr, error)
	clock  Clock

	mu   sync.Mutex
	set  map[netip.Addr]bool // nil: never read
	read time.Time
	err  error // the last read's, when it failed
}

func newHostAddrs(source func() ([]netip.Addr, error), clock Clock) *hostAddrs {
	if source == nil {
		source = interfaceAddrs
	}
	if clock == nil {
		clock = realClock{}
	}
	return &hostAddrs{source: source, clock: clock}
}

// defaultHostAddrs are this host's interface addresses on the real clock:
// [NewGuardedClient]'s and [NewDialer]'s.
var defaultHostAddrs = newHostAddrs(interfaceAddrs, realClock{})

// interfaceAddrs reads the addresses of this host's interfaces.
func interfaceAddrs() ([]netip.Addr, error) {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(as))
	for _, a := range as {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out, nil
}

// has reports whether ip is one of this host's addresses, reading them
// again when older than hostAddrsTTL. A failed read keeps the last list;
// with none ever read, the error is returned (the guard then refuses).
func (h *hostAddrs) has(ip netip.Addr) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock.Now()
	if h.set == nil || now.Sub(h.read) >= hostAddrsTTL {
		addrs, err := h.source()
		h.read = now // a failing source is not asked again at every dial
		if err != nil {
			h.err = fmt.Errorf("read this host's addresses: %w", err)
		} else {
			h.err = nil
			h.set = make(map[netip.Addr]bool, len(addrs))
			for _, a := range addrs {
				h.set[a.WithZone("").Unmap()] = true
			}
		}
	}
	if h.set == nil {
		return false, h.err
	}
	return h.set[ip.WithZone("").Unmap()], nil
}

// guard judges the address a guarded dialer is about to connect.
type guard struct{ host *hostAddrs }

// control is a net.Dialer Control function: it runs after DNS resolution,
// on the very address about to be connected and before any packet is
// sent, so DNS rebinding (a name that resolved to a public address a
// moment ago) cannot bypass it, and a refusal says nothing of the port.
func (g guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: not an address: %w", address, ErrForbiddenAddress)
	}
	ip := ap.Addr()
	if forbiddenAddr(ip) {
		return fmt.Errorf("dial %s: %w", address, ErrForbiddenAddress)
	}
	ip = ip.Unmap()
	forms := []netip.Addr{ip}
	if v4, ok := embeddedIPv4(ip); ok {
		forms = append(forms, v4)
	}
	for _, a := range forms {
		own, err := g.host.has(a)
		if err != nil {
			return fmt.Errorf("dial %s: %w: %w", address, err, ErrForbiddenAddress)
		}
		if own {
			return fmt.Errorf("dial %s: an address of this host: %w", address, ErrForbiddenAddress)
		}
	}
	return nil
}

// Dialer dials through an optional injected resolver and the SSRF guard:
// a [Fetcher]'s client (its GETs, robots.txt, articles and the browser's
// requests) and [NewGuardedClient]'s clients (WebSub callbacks) all dial
// with one. Unless private targets are allowed, the guard refuses, in the
// dialer's Control function (after DNS, before connecting), every address
// of forbiddenAddr and every address of this host's own interfaces.
type Dialer struct {
	d        net.Dialer
	resolver Resolver // nil: the dialer's own resolution
}

// NewDialer returns a dialer with the guard unless allowPrivate, r (nil:
// the system's) resolving names, this host's addresses read from its
// interfaces.
func NewDialer(allowPrivate bool, connectTimeout time.Duration, r Resolver) *Dialer {
	return newDialer(allowPrivate, connectTimeout, r, defaultHostAddrs)
}

// newDialer is NewDialer with this host's addresses read from host (nil:
// defaultHostAddrs).
func newDialer(allowPrivate bool, connectTimeout time.Duration, r Resolver, host *hostAddrs) *Dialer {
	if host == nil {
		host = defaultHostAddrs
	}
	dl := &Dialer{d: net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}, resolver: r}
	if !allowPrivate {
		dl.d.Control = guard{host: host}.control
	}
	return dl
}

// DialContext resolves addr's host (through the injected resolver if any),
// then dials the addresses in order; the guard checks each one at dial
// time. A host that reads as an IPv4 address in a URL's loose forms
// (2130706433, 0177.0.0.1, 0x7f.1, 127.1: what a browser and the C
// library take for an address) is that address, never a name to resolve.
func (dl *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return dl.d.DialContext(ctx, network, addr)
	}
	if ip, numeric, err := looseIPv4(host); numeric {
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", addr, err)
		}
		return dl.d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
	}
	if dl.resolver == nil {
		return dl.d.DialContext(ctx, network, addr)
	}
	ips, err := dl.resolver.LookupIPAddr(ctx, strings.ToLower(host))
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	var errs []error
	for _, ip := range ips {
		c, err := dl.d.DialContext(ctx, network, net.JoinHostPort(ip.IP.String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// looseIPv4 reads host as the WHATWG URL Standard's IPv4 parser does: a
// host whose last dot-separated label is a number (decimal, 0x hex, or
// octal with a leading 0), one trailing dot allowed, is an IPv4 address
// of one to four numbers, the last filling the remaining bytes. numeric
// reports whether host is such a host at all; err, when it is but no
// address (a number out of range).
func looseIPv4(host string) (ip netip.Addr, numeric bool, err error) {
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	last := labels[len(labels)-1]
	if _, ok := ipv4Number(last); !ok && (last == "" || strings.Trim(last, "0123456789") != "") {
		return netip.Addr{}, false, nil
	}
	bad := fmt.Errorf("host %q reads as an IPv4 address but is none", host)
	if len(labels) > 4 {
		return netip.Addr{}, true, bad
	}
	var v uint64
	for i, l := range labels {
		n, ok := ipv4Number(l)
		switch {
		case !ok:
			return netip.Addr{}, true, bad
		case i < len(labels)-1 && n > 255:
			return netip.Addr{}, true, bad
		case i < len(labels)-1:
			v |= n << (8 * (3 - i))
		case n >= 1<<(8*(5-len(labels))):
			return netip.Addr{}, true, bad
		default:
			v |= n
		}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

// ipv4Number reads one label of a loose IPv4 address: 0x hex, octal with
// a leading 0, or decimal; a number too large for any address reads as
// 1<<32.
func ipv4Number(s string) (uint64, bool) {
	digits, base := "0123456789", 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		s, digits, base = s[2:], "0123456789abcdefABCDEF", 16
		if s == "" {
			return 0, true // "0x" is 0
		}
	case len(s) >= 2 && s[0] == '0':
		s, digits, base = s[1:], "01234567", 8
	}
	if s == "" || strings.Trim(s, digits) != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil || n > 1<<32 {
		return 1 << 32, true
	}
	return n, true
}

// NewGuardedClient returns an HTTP client that dials through the same SSRF
// guard as a [Fetcher]'s (see [Dialer]: no address that is not globally
// reachable, nor any of this host's, unless p.AllowPrivate; checked at
// dial time after DNS), with p's connect, header and request timeouts and
// no proxy: for other outgoing requests, such as WebSub callbacks. r nil
// is the system resolver.
func NewGuardedClient(p config.PollerConfig, r Resolver) *http.Client {
	return newGuardedClient(p, newDialer(p.AllowPrivate, p.ConnectTimeout.D(), r, defaultHostAddrs))
}

func newGuardedClient(p config.PollerConfig, dl *Dialer) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil, // a proxy would dial for us and bypass the guard
			DialContext:           dl.DialContext,
			TLSHandshakeTimeout:   p.ConnectTimeout.D(),
			ResponseHeaderTimeout: p.HeaderTimeout.D(),
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		},
		Timeout: p.Timeout.D(),
	}
}
