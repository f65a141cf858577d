// Package humantime writes times and durations the way people read them
// on dynamo's pages: "1h30m", "3m20s ago", "in 2m", with the absolute time
// beside. Package api dates a feed's page with it (and caches the page
// while its age reads the same); package ui every other page.
package humantime

import (
	"strconv"
	"time"
)

// Time is a moment shown both absolutely and relatively to now.
type Time struct {
	Set      bool
	ISO      string // datetime attribute
	Absolute string
	Relative string // "3m ago", "in 2m"
}

// New is t as the pages show it, relative to now; the zero time is
// not Set.
func New(t, now time.Time) Time {
	if t.IsZero() {
		return Time{}
	}
	t = t.UTC()
	rel := string(AppendRelative(nil, RelativeSeconds(t, now)))
	return Time{Set: true, ISO: t.Format(time.RFC3339), Absolute: t.Format("2006-01-02 15:04:05 UTC"), Relative: rel}
}

// RelativeSeconds is how far t is from now, as Time's Relative reads
// it: rounded to the second.
func RelativeSeconds(t, now time.Time) time.Duration { return t.Sub(now).Round(time.Second) }

// AppendRelative appends Time's Relative for a time d (whole seconds)
// from now: "now", "in 2m", "4m10s ago", "2h5m ago", "3d4h ago". Past an
// hour it shows no seconds, past a day no minutes (the absolute time is
// beside it): nobody reads the seconds of a time hours away, and a cached
// feed page, which is rendered again when its age reads otherwise
// (api's pageCurrent), then changes once a minute or an hour, not every second.
// It allocates nothing when dst has room.
func AppendRelative(dst []byte, d time.Duration) []byte {
	switch {
	case d > 0:
		return appendDuration(append(dst, "in "...), coarse(d))
	case d < 0:
		return append(appendDuration(dst, coarse(-d)), " ago"...)
	}
	return append(dst, "now"...)
}

// coarse truncates a positive d to its two largest units of days, hours,
// minutes and seconds (2d3h, 1h30m, 4m10s).
func coarse(d time.Duration) time.Duration {
	switch {
	case d >= 24*time.Hour:
		return d.Truncate(time.Hour)
	case d >= time.Hour:
		return d.Truncate(time.Minute)
	}
	return d
}

// Duration prints a duration the way people read it: 1h30m, 45s, 2d3h.
func Duration(d time.Duration) string { return string(appendDuration(nil, d)) }

// appendDuration appends Duration(d) to dst.
func appendDuration(dst []byte, d time.Duration) []byte {
	if d <= 0 {
		return append(dst, "0s"...)
	}
	if d < time.Second {
		return append(dst, d.Round(time.Millisecond).String()...)
	}
	d = d.Round(time.Second)
	days := d / (24 * time.Hour)
	d -= days * 24 * time.Hour
	h, m, sec := d/time.Hour, (d%time.Hour)/time.Minute, (d%time.Minute)/time.Second
	for _, p := range [...]struct {
		n    time.Duration
		unit byte
	}{{days, 'd'}, {h, 'h'}, {m, 'm'}, {sec, 's'}} {
		if p.n > 0 {
			dst = append(strconv.AppendInt(dst, int64(p.n), 10), p.unit)
		}
	}
	return dst
}
