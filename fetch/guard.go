package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/dynamo-rss/dynamo/config"
)

// ErrForbiddenAddress is wrapped by dial errors for addresses the SSRF guard
// refuses (loopback, private, link-local, CGNAT, unspecified, multicast…).
var ErrForbiddenAddress = errors.New("fetch: address not allowed (private, loopback or link-local; set poller.allow_private to allow)")

// Resolver looks up a host's addresses; *net.Resolver satisfies it. Tests
// inject a fake one so that names resolve to chosen addresses.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// forbiddenAddr reports whether the SSRF guard refuses ip when private
// targets are not allowed. IPv4-mapped IPv6 addresses are judged as IPv4.
func forbiddenAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !ip.IsValid() ||
		ip.IsLoopback() ||
		ip.IsPrivate() || // 10/8, 172.16/12, 192.168/16, fc00::/7
		ip.IsLinkLocalUnicast() || // 169.254/16, fe80::/10
		ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() ||
		ip.IsMulticast() ||
		ip.IsUnspecified() || // 0.0.0.0, ::
		cgnat.Contains(ip) ||
		(ip.Is4() && ip.As4()[0] == 0) // 0/8 "this network"
}

// guardControl is a net.Dialer Control function: it runs after DNS
// resolution, on the very address about to be connected, so DNS rebinding
// (a name that resolved to a public address a moment ago) cannot bypass it.
func guardControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, ErrForbiddenAddress)
	}
	if forbiddenAddr(ap.Addr()) {
		return fmt.Errorf("dial %s: %w", address, ErrForbiddenAddress)
	}
	return nil
}

// Dialer dials through an optional injected resolver and the SSRF guard:
// a [Fetcher]'s client (its GETs, articles and the browser's requests) and
// [NewGuardedClient]'s clients (WebSub callbacks) all dial with one.
type Dialer struct {
	d        net.Dialer
	resolver Resolver // nil: the dialer's own resolution
}

// NewDialer returns a dialer with the guard unless allowPrivate, r (nil:
// the system's) resolving names.
func NewDialer(allowPrivate bool, connectTimeout time.Duration, r Resolver) *Dialer {
	dl := &Dialer{d: net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}, resolver: r}
	if !allowPrivate {
		dl.d.Control = guardControl
	}
	return dl
}

// DialContext resolves addr's host (through the injected resolver if any),
// then dials the addresses in order; the guard checks each one at dial time.
func (dl *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if dl.resolver == nil {
		return dl.d.DialContext(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return dl.d.DialContext(ctx, network, addr)
	}
	ips, err := dl.resolver.LookupIPAddr(ctx, host)
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

// NewGuardedClient returns an HTTP client that dials through the same SSRF
// guard as a [Fetcher]'s (no loopback, private, link-local or
// CGNAT address unless p.AllowPrivate, checked at dial time after DNS),
// with p's connect, header and request timeouts and no proxy: for other
// outgoing requests, such as WebSub callbacks. r nil is the system resolver.
func NewGuardedClient(p config.PollerConfig, r Resolver) *http.Client {
	dl := NewDialer(p.AllowPrivate, p.ConnectTimeout.D(), r)
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
