package badger

import (
	"encoding/binary"
	"math"
	"time"
)

// Key family prefixes; see the package documentation for the layout.
const (
	prefixMeta    byte = 'm'
	prefixPresent byte = 'l' // the latest version's items, when m cannot hold them: l | id | 0 | hash
	prefixVersion byte = 'v'
	prefixItem    byte = 'x'
	prefixContent byte = 'f'
	prefixSearch  byte = 's'
	prefixPoll    byte = 'p'
	prefixPollRec byte = 'q' // poll-history records: q | id | 0 | seq
	prefixPollPro byte = 'o' // poll-state progress: o | id
	prefixReg     byte = 'r'
	prefixGone    byte = 'g'
	prefixRecord  byte = 'c' // records of other features: c | kind | 0 | key
	prefixRegRev  byte = 'R' // the registry's revision: R alone, a uint64 BE
	prefixSession byte = 'e' // sessions ended by a logout: e | session id
)

// familiesOfMeta are the families of a resource's keys that only its
// metadata (m) makes reachable: Unregister deletes m first, then these.
var familiesOfMeta = [...]byte{prefixVersion, prefixItem, prefixContent, prefixSearch, prefixPresent}

const (
	timeLen   = 12                 // sec(8) with the sign bit flipped, nsec(4)
	pageIDLen = timeLen + 8        // ^firstSeen, ^firstSeq: a search page
	slotLen   = pageIDLen + 4      // page id, position
	seqLen    = 8                  // version sequence number
	maxSeq    = math.MaxUint64 - 1 // never reached; keeps latest+1 from wrapping
)

func metaKey(id string) []byte {
	return append([]byte{prefixMeta}, id...)
}

// chunkKey is the key of the chunk of id's present list whose bytes hash
// to sum (see [metaInline]).
func chunkKey(id string, sum uint64) []byte {
	return binary.BigEndian.AppendUint64(familyPrefix(prefixPresent, id), sum)
}

func regKey(id string) []byte {
	return append([]byte{prefixReg}, id...)
}

func goneKey(id string) []byte {
	return append([]byte{prefixGone}, id...)
}

func pollKey(id string) []byte {
	return append([]byte{prefixPoll}, id...)
}

func pollProgressKey(id string) []byte {
	return append([]byte{prefixPollPro}, id...)
}

func pollRecordKey(id string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(familyPrefix(prefixPollRec, id), seq)
}

// familyPrefix is p | id | 0x00, the prefix of all of one resource's keys of a family.
func familyPrefix(p byte, id string) []byte {
	k := make([]byte, 0, 2+len(id)+slotLen)
	k = append(k, p)
	k = append(k, id...)
	return append(k, 0)
}

func versionKey(id string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(familyPrefix(prefixVersion, id), seq)
}

func itemKey(id, itemID string) []byte {
	return append(familyPrefix(prefixItem, id), itemID...)
}

func slotKey(p byte, id string, slot []byte) []byte {
	return append(familyPrefix(p, id), slot...)
}

// idOf splits a family key (p | id | 0x00 | rest) into id and rest.
func idOf(key []byte) (string, []byte, bool) {
	for i := 1; i < len(key); i++ {
		if key[i] == 0 {
			return string(key[1:i]), key[i+1:], true
		}
	}
	return "", nil, false
}

func appendTime(b []byte, t time.Time) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(t.Unix())^(1<<63))
	return binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
}

func readTime(b []byte) time.Time {
	sec := int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
	return time.Unix(sec, int64(binary.BigEndian.Uint32(b[8:]))).UTC()
}

// makeSlot returns an item's slot: ^firstSeen | ^firstSeq | position, every
// byte of the time and seq inverted so that a forward scan meets the newest
// first (see the package documentation).
func makeSlot(firstSeen time.Time, firstSeq uint64, position int) []byte {
	b := make([]byte, 0, slotLen)
	b = appendTime(b, firstSeen)
	b = binary.BigEndian.AppendUint64(b, firstSeq)
	for i := range b {
		b[i] = ^b[i]
	}
	return binary.BigEndian.AppendUint32(b, uint32(position))
}

func slotFirstSeen(slot []byte) time.Time {
	var t [timeLen]byte
	for i := range t {
		t[i] = ^slot[i]
	}
	return readTime(t[:])
}

func slotFirstSeq(slot []byte) uint64 { return ^binary.BigEndian.Uint64(slot[timeLen:]) }
