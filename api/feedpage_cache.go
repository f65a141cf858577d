package api

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
)

// A feed's page is kept in the render cache like the feed, under a key of
// its own, with one difference: it shows how old the feed is ("updated 3h
// ago"), which changes with the clock and not with the feed. That text is
// never cached: the entry keeps the page without it (rendered with a marker
// in its place, then cut there), and each answer puts it back, made once a
// second. The gzip entry is a gzip member cut at the same place: the
// compressed page before the age (ending with a sync flush, so on a byte
// boundary), then the compressed rest, from a fresh compressor; an answer
// writes the age between them as a stored block and ends with the trailer,
// whose CRC-32 is combined from the two halves' without reading the page.

// pageSplice is what a cached page's answers need besides its body: where
// the age goes and what it is counted from.
type pageSplice struct {
	at      int       // where in the body the age goes
	updated time.Time // the feed's update time; zero: the page shows no age (at = len(body))
	// uncached: the page could not be cut (its content holds the marker), so
	// it was rendered with its age at render time; it answers the requests
	// that waited for that render and is not kept.
	uncached bool
	gzip     *gzipSplice // nil: the body is the page itself
	live     atomic.Pointer[pageLive]
}

// gzipSplice is what the trailer of a cut gzip member is made from.
type gzipSplice struct {
	headCRC, tailCRC uint32 // CRC-32 of the page before and after the age
	// tailShift is x^(8·len(tail)) modulo the CRC-32 polynomial: multiplying
	// a CRC by it moves it past the tail, so that the page's CRC is the
	// product of it and the CRC up to the tail, xor the tail's (crc32Mul).
	tailShift uint32
	size      int // the page's length without the age
}

// pageLive is the part of answers that depends on the clock: the age, as
// written in the body (in a stored deflate block when compressed), the gzip
// trailer and Content-Length. It is kept for the answers of the same second.
type pageLive struct {
	d       time.Duration // the age in seconds, as relativeSeconds gives it
	mid     []byte
	trailer []byte   // gzip only
	length  []string // Content-Length
}

// gzipHeader is the header of the gzip members of pages (RFC 1952): deflate,
// no flags, no time, default compression, unknown OS, as gzip.Writer writes it.
var gzipHeader = [10]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

// storedBlockHeader is the length of a deflate stored block's header once on
// a byte boundary: BFINAL and BTYPE 00 padded to a byte, LEN and NLEN.
const storedBlockHeader = 5

// liveAt returns the clock-dependent part of answering e (a page's entry)
// at now.
func (e *feedEntry) liveAt(now time.Time) *pageLive {
	p := e.page
	var d time.Duration
	if !p.updated.IsZero() {
		d = relativeSeconds(p.updated, now)
	}
	if l := p.live.Load(); l != nil && l.d == d {
		return l
	}
	l := &pageLive{d: d}
	buf := make([]byte, 0, 64)
	start := 0
	if p.gzip != nil {
		start = storedBlockHeader
		buf = buf[:start]
	}
	if !p.updated.IsZero() {
		buf = appendRelative(buf, d)
	}
	rel := buf[start:]
	if g := p.gzip; g != nil {
		n := uint16(len(rel)) //nolint:gosec // an age is a few bytes
		buf[0] = 0            // not final, stored (the stream is on a byte boundary)
		binary.LittleEndian.PutUint16(buf[1:], n)
		binary.LittleEndian.PutUint16(buf[3:], ^n)
		l.mid = buf
		crc := crc32Mul(g.tailShift, crc32.Update(g.headCRC, crc32.IEEETable, rel)) ^ g.tailCRC
		l.trailer = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(make([]byte, 0, 8), crc), uint32(g.size+len(rel))) //nolint:gosec // ISIZE is the size modulo 2^32
	} else {
		l.mid = rel
	}
	l.length = []string{strconv.Itoa(len(e.body) + len(l.mid) + len(l.trailer))}
	p.live.Store(l)
	return l
}

// writePageBody writes the body of an answer of e, with its live part l.
func writePageBody(c echo.Context, e *feedEntry, l *pageLive) {
	w := c.Response()
	at := e.page.at
	// client gone: nothing left to do
	_, _ = w.Write(e.body[:at])
	if len(l.mid) > 0 {
		_, _ = w.Write(l.mid)
	}
	if at < len(e.body) {
		_, _ = w.Write(e.body[at:])
	}
	if len(l.trailer) > 0 {
		_, _ = w.Write(l.trailer)
	}
}

// cutPage removes the one occurrence of mark from a rendered page and
// returns where it was; ok is false when mark does not occur exactly once.
func cutPage(page, mark []byte) (cut []byte, at int, ok bool) {
	at = bytes.Index(page, mark)
	if at < 0 || bytes.Contains(page[at+len(mark):], mark) {
		return page, 0, false
	}
	return append(page[:at], page[at+len(mark):]...), at, true
}

// gzipPage returns the gzip entry's body and splice of a page's plain body
// cut at at: the member's header and the compressed head ending on a byte
// boundary (the first at bytes), then the compressed tail.
func gzipPage(body []byte, at int) ([]byte, *gzipSplice, int, error) {
	head, tail := body[:at], body[at:]
	var buf bytes.Buffer
	buf.Grow(len(body)/3 + 64)
	buf.Write(gzipHeader[:])
	zw, err := flate.NewWriter(&buf, flate.DefaultCompression)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("gzip page: %w", err)
	}
	if _, err := zw.Write(head); err != nil {
		return nil, nil, 0, fmt.Errorf("gzip page: %w", err)
	}
	if err := zw.Flush(); err != nil { // a sync flush: on a byte boundary, not final
		return nil, nil, 0, fmt.Errorf("gzip page: %w", err)
	}
	cut := buf.Len()
	zw.Reset(&buf) // the tail refers to nothing before it: the age between them varies
	if _, err := zw.Write(tail); err != nil {
		return nil, nil, 0, fmt.Errorf("gzip page: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, nil, 0, fmt.Errorf("gzip page: %w", err)
	}
	g := &gzipSplice{
		headCRC:   crc32.ChecksumIEEE(head),
		tailCRC:   crc32.ChecksumIEEE(tail),
		tailShift: crc32Shift(len(tail)),
		size:      len(body),
	}
	return buf.Bytes(), g, cut, nil
}

// crc32Shift returns x^(8n) modulo the CRC-32 (IEEE) polynomial, in the
// reflected bit order of hash/crc32 (bit 31 is x^0): multiplying a CRC by
// it with crc32Mul appends n bytes' worth of shift, so that for any a and b,
// crc(a‖b) = crc32Mul(crc32Shift(len(b)), crc(a)) ^ crc(b) (the register's
// initial and final inversions cancel out).
func crc32Shift(n int) uint32 {
	r := uint32(1) << 31  // x^0
	sq := uint32(1) << 23 // x^8
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			r = crc32Mul(r, sq)
		}
		sq = crc32Mul(sq, sq)
	}
	return r
}

// crc32Mul returns a·b modulo the CRC-32 (IEEE) polynomial, both in the
// reflected bit order of hash/crc32.
func crc32Mul(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 { // a's terms, from x^0 up
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 { // b·x: x^31 overflows into the polynomial's low terms
			b = b>>1 ^ crc32.IEEE
		} else {
			b >>= 1
		}
	}
	return p
}
