package fetch

import (
	"errors"
	"net"
	"testing"
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
		{"93.184.216.34", false}, {"100.128.0.1", false}, {"2606:4700::1111", false}, {"::ffff:8.8.8.8", false},
	} {
		t.Run(tc.ip, func(t *testing.T) {
			err := guardControl("tcp", net.JoinHostPort(tc.ip, "80"), nil)
			if got := errors.Is(err, ErrForbiddenAddress); got != tc.forbidden {
				t.Fatalf("guard(%s) = %v, want forbidden=%v", tc.ip, err, tc.forbidden)
			}
		})
	}
}
