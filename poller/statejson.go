package poller

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendState appends p as JSON, without its history: the object
// json.Marshal writes (the same names, omitempty and omitzero), built by
// hand because every poll encodes its state (encoding/json's reflection took
// 8–9 % of the CPU of a poll that found the same bytes).
// TestAppendStateAsEncodingJSON checks that both decode to the same state.
func appendState(b []byte, p *persisted) ([]byte, error) {
	var err error
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, stateVersion, 10)
	b = append(b, `,"url":`...)
	b = appendJSONString(b, p.URL)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, p.Kind)
	b = append(b, `,"policy":`...)
	if b, err = appendPolicyState(b, &p.Policy); err != nil {
		return nil, err
	}
	b = append(b, `,"validators":{`...)
	sep := ""
	if p.Validators.ETag != "" {
		b = append(b, `"etag":`...)
		b = appendJSONString(b, p.Validators.ETag)
		sep = ","
	}
	if p.Validators.LastModified != "" {
		b = append(b, sep+`"last_modified":`...)
		b = appendJSONString(b, p.Validators.LastModified)
	}
	b = append(b, '}')
	if b, err = appendTimeField(b, `,"last_poll":`, p.LastPoll); err != nil {
		return nil, err
	}
	if b, err = appendTimeField(b, `,"next_poll":`, p.NextPoll); err != nil {
		return nil, err
	}
	if p.LastOutcome != "" {
		b = append(b, `,"last_outcome":`...)
		b = appendJSONString(b, p.LastOutcome)
	}
	if p.LastError != "" {
		b = append(b, `,"last_error":`...)
		b = appendJSONString(b, p.LastError)
	}
	b = append(b, `,"polls":`...)
	b = strconv.AppendInt(b, p.Polls, 10)
	b = append(b, `,"changes":`...)
	b = strconv.AppendInt(b, p.Changes, 10)
	b = append(b, `,"errors":`...)
	b = strconv.AppendInt(b, p.Errors, 10)
	if p.Failures != 0 {
		b = append(b, `,"failures":`...)
		b = strconv.AppendInt(b, int64(p.Failures), 10)
	}
	if p.BodyHash != 0 {
		b = append(b, `,"body_hash":`...)
		b = strconv.AppendUint(b, p.BodyHash, 10)
	}
	if p.Extraction != 0 {
		b = append(b, `,"extraction":`...)
		b = strconv.AppendUint(b, p.Extraction, 10)
	}
	if p.PolicyKey != 0 {
		b = append(b, `,"policy_key":`...)
		b = strconv.AppendUint(b, p.PolicyKey, 10)
	}
	if b, err = appendTimeField(b, `,"since":`, p.Since); err != nil {
		return nil, err
	}
	if len(p.Diagnostics) > 0 {
		b = append(b, `,"diagnostics":[`...)
		for i, d := range p.Diagnostics {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, d)
		}
		b = append(b, ']')
	}
	if p.Last != nil {
		b = append(b, `,"last_version":{`...)
		sep := ""
		if len(p.Last.Items) > 0 {
			// Base64 of the hashes (see lastVersion.UnmarshalJSON).
			var raw [8 * maxItemIDs]byte
			n := 0
			for _, h := range p.Last.Items {
				binary.BigEndian.PutUint64(raw[n:], h)
				n += 8
			}
			b = append(b, `"ids":"`...)
			b = base64.StdEncoding.AppendEncode(b, raw[:n])
			b = append(b, '"')
			sep = ","
		}
		if !p.Last.Newest.IsZero() {
			if b, err = appendTimeField(b, sep+`"newest":`, p.Last.Newest); err != nil {
				return nil, err
			}
		}
		b = append(b, '}')
	}
	if p.HistorySeq != 0 {
		b = append(b, `,"history_seq":`...)
		b = strconv.AppendUint(b, p.HistorySeq, 10)
	}
	if p.HistoryVersions != 0 {
		b = append(b, `,"history_versions":`...)
		b = strconv.AppendInt(b, int64(p.HistoryVersions), 10)
	}
	if p.Progress {
		b = append(b, `,"progress":true`...)
	}
	return append(b, '}'), nil
}

func appendPolicyState(b []byte, s *PolicyState) ([]byte, error) {
	var err error
	b = append(b, `{"tau":`...)
	b = strconv.AppendInt(b, int64(s.Tau), 10)
	b = append(b, `,"alpha":`...)
	if b, err = appendJSONFloat(b, s.Alpha); err != nil {
		return nil, err
	}
	if b, err = appendTimeField(b, `,"last_update":`, s.LastUpdate); err != nil {
		return nil, err
	}
	if s.Published {
		b = append(b, `,"published":true`...)
	}
	if len(s.Intervals) > 0 {
		b = append(b, `,"intervals":[`...)
		for i, d := range s.Intervals {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(d), 10)
		}
		b = append(b, ']')
	}
	b = append(b, `,"wait":`...)
	b = strconv.AppendInt(b, int64(s.Wait), 10)
	if s.Unchanged != 0 {
		b = append(b, `,"unchanged":`...)
		b = strconv.AppendInt(b, int64(s.Unchanged), 10)
	}
	if s.Kind != "" {
		b = append(b, `,"kind":`...)
		b = appendJSONString(b, s.Kind)
	}
	if s.Rate != nil {
		// The budget policy's weekly profile: rare, and large enough that
		// the reflection does not matter.
		r, err := json.Marshal(s.Rate)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"rate":`...)
		b = append(b, r...)
	}
	return append(b, '}'), nil
}

// appendTimeField appends name and t as time.Time.MarshalJSON writes it,
// unless t is zero (omitzero).
func appendTimeField(b []byte, name string, t time.Time) ([]byte, error) {
	if t.IsZero() {
		return b, nil
	}
	if y := t.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("encode poll state: year %d outside [0,9999]", y)
	}
	b = append(b, name...)
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

// appendJSONFloat writes f as encoding/json does; NaN and infinities have no
// JSON form.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("encode poll state: unsupported value %v", f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(b, f, format, -1, 64), nil
}

// appendJSONString writes s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD (as
// encoding/json does).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
