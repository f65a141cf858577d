package session

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)

func TestCodec(t *testing.T) {
	c, err := NewCodec("dynamo_session", "admin-token", 12*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	s := New(t0)
	v, err := c.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewCodec("dynamo_session", "rotated-token", 12*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	renamed, err := NewCodec("other_cookie", "admin-token", 12*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p, m, _ := strings.Cut(v, ".")
	flipped := []byte(p)
	flipped[3] ^= 1
	cases := []struct {
		name  string
		codec *Codec
		value string
		now   time.Time
		want  error
	}{
		{"fresh", c, v, t0, nil},
		{"an hour before expiry", c, v, t0.Add(11 * time.Hour), nil},
		{"at expiry", c, v, t0.Add(12 * time.Hour), ErrExpired},
		{"issued far in the future", c, v, t0.Add(-2 * time.Minute), ErrExpired},
		{"another secret", other, v, t0, ErrInvalid},
		{"another cookie name", renamed, v, t0, ErrInvalid},
		{"payload changed", c, string(flipped) + "." + m, t0, ErrInvalid},
		{"no signature", c, p, t0, ErrInvalid},
		{"empty", c, "", t0, ErrInvalid},
		{"garbage", c, "!!.??", t0, ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.codec.Decode(tc.value, tc.now)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode: %v, want %v", err, tc.want)
			}
			if err == nil && (got.ID != s.ID || !got.Issued.Equal(s.Issued)) {
				t.Errorf("Decode = %+v, want %+v", got, s)
			}
		})
	}
	if _, err := NewCodec("x", "", time.Hour); err == nil {
		t.Error("NewCodec with an empty secret: no error")
	}
	if New(t0).ID == New(t0).ID {
		t.Error("two sessions share an id")
	}
}

func TestToken(t *testing.T) {
	seed, seed2 := NewSeed(), NewSeed()
	tok := Token(seed, "sid")
	cases := []struct {
		name, seed, sid, token string
		want                   bool
	}{
		{"same seed and session", seed, "sid", tok, true},
		{"another session", seed, "sid2", tok, false},
		{"before login", seed, "", tok, false},
		{"another seed", seed2, "sid", tok, false},
		{"empty token", seed, "sid", "", false},
		{"token one byte short", seed, "sid", tok[:len(tok)-1], false},
		{"empty seed", "", "sid", Token("", "sid"), false},
		{"seed not ours", "short", "sid", Token("short", "sid"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := CheckToken(tc.seed, tc.sid, tc.token); got != tc.want {
				t.Errorf("CheckToken = %v, want %v", got, tc.want)
			}
		})
	}
}
