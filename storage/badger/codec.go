package badger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cespare/xxhash/v2"
	bdg "github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/s2"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// Record format versions, the first byte of every m, v, x, f and s value
// (m also has a formatV2, see metaInline), so a later release can read what
// an older one wrote.
const formatV1 byte = 1

var errShort = errors.New("truncated record")

// enc appends fields to a record.
type enc struct{ b []byte }

func (e *enc) byte1(v byte)     { e.b = append(e.b, v) }
func (e *enc) u64(v uint64)     { e.b = binary.BigEndian.AppendUint64(e.b, v) }
func (e *enc) uvar(v uint64)    { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) time(t time.Time) { e.b = appendTime(e.b, t) }
func (e *enc) raw(p []byte)     { e.b = append(e.b, p...) }
func (e *enc) str(s string) {
	e.uvar(uint64(len(s)))
	e.b = append(e.b, s...)
}

// dec reads fields of a record; the first error sticks and later reads return zero values.
type dec struct {
	b   []byte
	err error
}

func (d *dec) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.b) < n {
		d.err = errShort
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *dec) byte1() byte {
	if p := d.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (d *dec) u64() uint64 {
	if p := d.take(8); p != nil {
		return binary.BigEndian.Uint64(p)
	}
	return 0
}

func (d *dec) uvar() uint64 { return readVarint(d, binary.Uvarint) }
func (d *dec) svar() int64  { return readVarint(d, binary.Varint) }

// readVarint reads a varint with read (binary.Uvarint or binary.Varint).
func readVarint[T int64 | uint64](d *dec, read func([]byte) (T, int)) T {
	if d.err != nil {
		return 0
	}
	v, n := read(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) time() time.Time {
	if p := d.take(timeLen); p != nil {
		return readTime(p)
	}
	return time.Time{}
}

// bytes returns a length-prefixed field without copying it.
func (d *dec) bytes() []byte {
	n := d.uvar()
	if n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	return d.take(int(n))
}

func (d *dec) str() string { return string(d.bytes()) }

func (d *dec) format(what string) {
	if f := d.byte1(); d.err == nil && f != formatV1 {
		d.err = fmt.Errorf("%s record format %d unknown", what, f)
	}
}

// meta is the m record of a resource.
type meta struct {
	URL         string
	Created     time.Time
	Updated     time.Time
	Latest      uint64 // seq of the newest version
	Oldest      uint64 // seq of the oldest kept version
	Count       uint64 // versions kept; Latest-Oldest+1
	Hash        schema.Hash
	Title       string
	Description string
	Present     []present // the latest version's items, in page order

	byID map[string]int // Present's indexes by id, built by presentIndex

	chunks []chunkRef // formatV2: the l chunks holding Present; nil: Present is in the record
	items  uint64     // formatV2: the items in those chunks
}

// presentIndex returns the latest index of a present item (0 if absent).
// Not safe for concurrent use: a meta belongs to one call.
func (m *meta) presentIndex(id string) int {
	if m.byID == nil {
		m.byID = make(map[string]int, len(m.Present))
		for _, p := range m.Present {
			m.byID[p.ID] = p.Index
		}
	}
	return m.byID[id]
}

// present is an item of the latest version. Its last seen and seq are the
// resource's Updated and Latest, so a save that sees it again writes nothing
// for it unless its content changed.
type present struct {
	ID     string
	Slot   []byte
	Index  int             // its index in the latest version
	Digest [digestLen]byte // of its f record
}

// A metadata record holds the latest version's items (the present list)
// while it stays under metaInline bytes: below Badger's value threshold
// (2 KiB), so it lives in the LSM tree, where compaction drops the copies
// each save supersedes. A longer one (a page of more than about 25 items)
// would go to the value log, where superseded copies are reclaimed only once
// half of their file is garbage, which never happens while every version is
// kept. So its present list goes to l chunks instead (formatV2), and the
// record lists them.
//
// A chunk is a run of consecutive items, at most presentChunk bytes, keyed
// by a hash of its bytes. Its boundaries fall after the items whose id
// hashes to 0 modulo chunkEvery (or where a chunk would grow too long), and
// an item's index is written as the difference from the previous item's
// (the chunk's first index is in the record), so a chunk's bytes do not
// depend on where it lies in the list: when new items arrive on top and old
// ones fall off the bottom, only the chunks at the two ends change, and a
// save writes those alone.
const (
	metaInline   = 1900
	presentChunk = 1800
	chunkEvery   = 16
	formatV2     = 2 // metadata whose present list is in l chunks
)

// chunkRef is a chunk as its metadata record names it.
type chunkRef struct {
	sum   uint64 // xxhash of the chunk's bytes: its key
	first int    // the index of its first item
}

// encode returns m's record and, when the present list does not fit in it,
// the chunks holding that list, in order (refs[i] names chunks[i]). The
// chunks depend on the list alone: [metaOps] writes those not stored yet.
func (m *meta) encode() (rec []byte, refs []chunkRef, chunks [][]byte) {
	return m.encodeWithin(metaInline)
}

// encodeWithin is encode with the present list kept in the record up to
// inline bytes (tests write what releases before formatV2 wrote).
func (m *meta) encodeWithin(inline int) (rec []byte, refs []chunkRef, chunks [][]byte) {
	e := enc{b: make([]byte, 0, 128+len(m.URL)+len(m.Title)+len(m.Description)+len(m.Present)*(64+slotLen+digestLen))}
	e.byte1(formatV1)
	e.str(m.URL)
	e.time(m.Created)
	e.time(m.Updated)
	e.u64(m.Latest)
	e.u64(m.Oldest)
	e.u64(m.Count)
	e.raw(m.Hash[:])
	e.str(m.Title)
	e.str(m.Description)
	header := len(e.b)
	e.uvar(uint64(len(m.Present)))
	for i := range m.Present {
		m.Present[i].appendTo(&e)
	}
	if len(e.b) <= inline {
		return e.b, nil, nil
	}
	if refs, chunks = m.chunked(); refs == nil { // two chunks with one hash: keep the list in the record
		return e.b, nil, nil
	}
	e.b = e.b[:header]
	e.b[0] = formatV2
	e.uvar(uint64(len(m.Present)))
	e.uvar(uint64(len(refs)))
	for _, r := range refs {
		e.u64(r.sum)
		e.uvar(uint64(r.first))
	}
	return e.b, refs, chunks
}

// chunked cuts the present list into chunks (see metaInline); nil if two
// chunks hash alike, which their keys cannot tell apart.
func (m *meta) chunked() ([]chunkRef, [][]byte) {
	var (
		refs        []chunkRef
		chunks      [][]byte
		c           enc
		n           int // items in c
		first, prev int // indexes of c's first item and of the last one written
	)
	flush := func() {
		b := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(c.b)), uint64(n))
		b = append(b, c.b...)
		refs = append(refs, chunkRef{sum: xxhash.Sum64(b), first: first})
		chunks = append(chunks, b)
		c.b, n = c.b[:0], 0
	}
	for i := range m.Present {
		p := &m.Present[i]
		if n == 0 {
			first, prev = p.Index, p.Index
		}
		before := len(c.b)
		p.appendChunked(&c, prev)
		if n > 0 && len(c.b) > presentChunk-binary.MaxVarintLen64 {
			c.b = c.b[:before]
			flush()
			first, prev = p.Index, p.Index
			p.appendChunked(&c, prev)
		}
		n++
		prev = p.Index
		if xxhash.Sum64String(p.ID)%chunkEvery == 0 {
			flush()
		}
	}
	if n > 0 {
		flush()
	}
	seen := make(map[uint64]bool, len(refs))
	for _, r := range refs {
		if seen[r.sum] {
			return nil, nil
		}
		seen[r.sum] = true
	}
	return refs, chunks
}

// appendTo writes p as a formatV1 record holds it.
func (p *present) appendTo(e *enc) {
	e.str(p.ID)
	e.raw(p.Slot)
	e.uvar(uint64(p.Index))
	e.raw(p.Digest[:])
}

func (p *present) readFrom(d *dec) {
	p.ID = d.str()
	p.Slot = append([]byte(nil), d.take(slotLen)...)
	p.Index = int(d.uvar())
	copy(p.Digest[:], d.take(digestLen))
}

// appendChunked writes p as a chunk holds it: its index as the difference
// from the previous item's, prev.
func (p *present) appendChunked(e *enc, prev int) {
	e.str(p.ID)
	e.raw(p.Slot)
	e.b = binary.AppendVarint(e.b, int64(p.Index-prev))
	e.raw(p.Digest[:])
}

func (p *present) readChunked(d *dec, prev int) {
	p.ID = d.str()
	p.Slot = append([]byte(nil), d.take(slotLen)...)
	p.Index = prev + int(d.svar())
	copy(p.Digest[:], d.take(digestLen))
}

// decodeMeta decodes a metadata record. For a formatV2 record the present
// list is in chunks: Present is left nil and m.chunks names them (see
// [loadPresent]).
func decodeMeta(b []byte) (meta, error) {
	d := dec{b: b}
	var m meta
	format := d.byte1()
	if d.err == nil && format != formatV1 && format != formatV2 {
		return meta{}, fmt.Errorf("decode metadata: metadata record format %d unknown", format)
	}
	m.URL = d.str()
	m.Created = d.time()
	m.Updated = d.time()
	m.Latest = d.u64()
	m.Oldest = d.u64()
	m.Count = d.u64()
	copy(m.Hash[:], d.take(len(m.Hash)))
	m.Title = d.str()
	m.Description = d.str()
	n := d.uvar()
	switch {
	case format == formatV2:
		m.items = n
		if k := d.uvar(); k <= uint64(len(d.b)) {
			m.chunks = make([]chunkRef, k)
			for i := range m.chunks {
				m.chunks[i] = chunkRef{sum: d.u64(), first: int(d.uvar())}
			}
		} else {
			d.err = errShort
		}
	case n <= uint64(len(d.b)):
		m.Present = make([]present, n)
		for i := range m.Present {
			m.Present[i].readFrom(&d)
		}
	default:
		d.err = errShort
	}
	if d.err != nil {
		return meta{}, fmt.Errorf("decode metadata: %w", d.err)
	}
	return m, nil
}

// loadPresent reads the present list of a formatV2 record from its chunks,
// each checked against its hash.
func loadPresent(txn *bdg.Txn, id string, m *meta) error {
	if m.chunks == nil {
		return nil
	}
	m.Present = make([]present, 0, min(m.items, 1<<16))
	for k, r := range m.chunks {
		it, err := txn.Get(chunkKey(id, r.sum))
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return fmt.Errorf("metadata of %q: present-list chunk %d of %d missing: %w", id, k+1, len(m.chunks), storage.ErrInconsistent)
		}
		if err != nil {
			return fmt.Errorf("metadata of %q: %w", id, err)
		}
		err = it.Value(func(v []byte) error { // decoded in place: the fields are copies
			var err error
			m.Present, err = appendChunk(m.Present, v, r)
			return err
		})
		if err != nil {
			return fmt.Errorf("metadata of %q: present-list chunk %d of %d: %w", id, k+1, len(m.chunks), err)
		}
	}
	if uint64(len(m.Present)) != m.items {
		return fmt.Errorf("metadata of %q: %d present items in %d chunks, the record says %d: %w", id, len(m.Present), len(m.chunks), m.items, storage.ErrInconsistent)
	}
	return nil
}

// appendChunk decodes the chunk v, which r names, onto ps.
func appendChunk(ps []present, v []byte, r chunkRef) ([]present, error) {
	if xxhash.Sum64(v) != r.sum {
		return ps, fmt.Errorf("damaged: %w", storage.ErrInconsistent)
	}
	d := dec{b: v}
	prev := r.first
	for n := d.uvar(); n > 0 && d.err == nil; n-- {
		var p present
		p.readChunked(&d, prev)
		prev = p.Index
		ps = append(ps, p)
	}
	if d.err == nil && len(d.b) > 0 {
		d.err = errors.New("bytes after its items")
	}
	return ps, d.err
}

// metaOps appends the writes that store m for id over the metadata read
// before (whose chunks m.chunks still names): the chunks it did not have,
// its record, then deletions of the chunks it no longer has. In that order
// a write split into several transactions (a prune, see [DB.writeAll])
// never leaves a record naming a chunk not yet written or already deleted.
func metaOps(ops []kv, id string, m *meta) []kv {
	rec, refs, chunks := m.encode()
	if refs == nil && m.chunks == nil { // the list is in the record, before and now
		return append(ops, kv{key: metaKey(id), value: rec})
	}
	had := make(map[uint64]bool, len(m.chunks))
	for _, r := range m.chunks {
		had[r.sum] = true
	}
	for i, r := range refs {
		if had[r.sum] {
			delete(had, r.sum) // stored already: a key is the hash of its bytes
			continue
		}
		ops = append(ops, kv{key: chunkKey(id, r.sum), value: chunks[i]})
	}
	ops = append(ops, kv{key: metaKey(id), value: rec})
	for _, r := range m.chunks {
		if had[r.sum] {
			ops = append(ops, kv{key: chunkKey(id, r.sum)})
		}
	}
	m.chunks, m.items = refs, uint64(len(m.Present))
	return ops
}

// namesChunk reports whether m names the chunk whose key ends with suffix.
func (m *meta) namesChunk(suffix []byte) bool {
	if len(suffix) != 8 {
		return false
	}
	sum := binary.BigEndian.Uint64(suffix)
	for _, r := range m.chunks {
		if r.sum == sum {
			return true
		}
	}
	return false
}

func (m *meta) info(id string) storage.ResourceInfo {
	return storage.ResourceInfo{
		ID: id, URL: m.URL, Created: m.Created, Updated: m.Updated,
		Versions: int(m.Count), LatestSeq: m.Latest,
		Title: m.Title, Description: m.Description, Hash: m.Hash,
	}
}

// encodeVersion builds a v value: a header describing the version, then the
// XMLData compressed with S2 (Snappy's faster, denser successor: see
// BenchmarkCompression; zstd packs ~25% tighter at 5–9× the CPU, and ingest
// is CPU-bound).
func encodeVersion(doc *schema.Document, xmlData []byte) []byte {
	e := enc{b: make([]byte, 0, 64+len(doc.Channel.Title)+len(doc.Channel.Description)+s2.MaxEncodedLen(len(xmlData)))}
	e.byte1(formatV1)
	e.time(doc.Timestamp)
	e.str(doc.Channel.Title)
	e.str(doc.Channel.Description)
	e.uvar(uint64(len(doc.Items)))
	// Compressed in place after the header: no second buffer.
	z := s2.Encode(e.b[len(e.b):cap(e.b)], xmlData)
	return e.b[:len(e.b)+len(z)]
}

// decodeVersionHeader returns the header of a v value and the compressed document after it.
func decodeVersionHeader(seq uint64, b []byte) (storage.VersionInfo, []byte, error) {
	d := dec{b: b}
	d.format("version")
	vi := storage.VersionInfo{Seq: seq}
	vi.Timestamp = d.time()
	vi.Title = d.str()
	vi.Description = d.str()
	vi.Items = int(d.uvar())
	if d.err != nil {
		return storage.VersionInfo{}, nil, fmt.Errorf("decode version %d: %w", seq, d.err)
	}
	return vi, d.b, nil
}

func decodeVersion(seq uint64, b []byte) (*schema.Document, storage.VersionInfo, error) {
	vi, z, err := decodeVersionHeader(seq, b)
	if err != nil {
		return nil, storage.VersionInfo{}, err
	}
	xmlData, err := s2.Decode(nil, z)
	if err != nil {
		return nil, storage.VersionInfo{}, fmt.Errorf("decompress version %d: %w", seq, err)
	}
	doc, err := schema.Unmarshal(xmlData)
	if err != nil {
		return nil, storage.VersionInfo{}, fmt.Errorf("version %d: %w", seq, err)
	}
	return doc, vi, nil
}

// digestLen is the size of an item content digest kept in x: enough to tell
// edits apart, short enough to keep x small.
const digestLen = 8

// itemEntry is the x record of an item. While the item is in the latest
// version (Present), its last seen, seq and digest are the metadata's, and
// the fields here are not kept up to date.
type itemEntry struct {
	Slot     []byte // slotLen bytes
	Present  bool
	LastSeen time.Time
	LastSeq  uint64
	Index    int             // its index in the last version it was in
	Digest   [digestLen]byte // of the f record
}

func (x *itemEntry) encode() []byte {
	e := enc{b: make([]byte, 0, 2+slotLen+timeLen+8+digestLen)}
	e.byte1(formatV1)
	e.raw(x.Slot)
	if x.Present {
		e.byte1(1)
	} else {
		e.byte1(0)
	}
	e.time(x.LastSeen)
	e.u64(x.LastSeq)
	e.uvar(uint64(x.Index))
	e.raw(x.Digest[:])
	return e.b
}

func decodeItemEntry(b []byte) (itemEntry, error) {
	d := dec{b: b}
	var x itemEntry
	d.format("item")
	x.Slot = append([]byte(nil), d.take(slotLen)...)
	x.Present = d.byte1() == 1
	x.LastSeen = d.time()
	x.LastSeq = d.u64()
	x.Index = int(d.uvar())
	copy(x.Digest[:], d.take(digestLen))
	if d.err != nil {
		return itemEntry{}, fmt.Errorf("decode item entry: %w", d.err)
	}
	return x, nil
}

// encodeContent builds the f record: the whole item but its index (its page
// position, which moves whenever items are added above it: kept in m and x
// so that moving does not rewrite the content).
func encodeContent(it *schema.Item) []byte {
	n := 32 + len(it.ID) + len(it.Title) + len(it.Link) + len(it.Description)
	if im := it.Image; im != nil {
		n += 3 + len(im.Title) + len(im.Link) + len(im.URL)
	}
	for _, x := range it.Extensions {
		n += 4 + len(x.URI) + len(x.Prefix) + len(x.LocalName) + len(x.Value)
	}
	return appendContent(make([]byte, 0, n), it)
}

// appendContent appends the f record of it to dst.
func appendContent(dst []byte, it *schema.Item) []byte {
	e := enc{b: dst}
	e.byte1(formatV1)
	e.str(it.ID)
	e.str(it.Title)
	e.str(it.Link)
	e.str(it.Description)
	if it.Image == nil {
		e.byte1(0)
	} else {
		e.byte1(1)
		e.str(it.Image.Title)
		e.str(it.Image.Link)
		e.str(it.Image.URL)
	}
	e.uvar(uint64(len(it.Extensions)))
	for _, x := range it.Extensions {
		e.str(x.URI)
		e.str(x.Prefix)
		e.str(x.LocalName)
		e.str(x.Value)
	}
	return e.b
}

func decodeContent(b []byte) (schema.Item, error) {
	d := dec{b: b}
	var it schema.Item
	d.format("item content")
	it.ID = d.str()
	it.Title = d.str()
	it.Link = d.str()
	it.Description = d.str()
	if d.byte1() == 1 {
		it.Image = &schema.Image{Title: d.str(), Link: d.str(), URL: d.str()}
	}
	if n := d.uvar(); n > 0 && n <= uint64(len(d.b)) {
		it.Extensions = make(schema.Extensions, 0, n)
		for range n {
			it.Extensions = append(it.Extensions, schema.Extension{URI: d.str(), Prefix: d.str(), LocalName: d.str(), Value: d.str()})
		}
	} else if n > 0 {
		d.err = errShort
	}
	if d.err != nil {
		return schema.Item{}, fmt.Errorf("decode item content: %w", d.err)
	}
	return it, nil
}

// digest tells an item's stored content from an edited one: xxhash64 (a
// collision, 1 in 2^64, would only keep an edit out of the index until the
// item changes again; SHA-256 cost 6 % of a save).
func digest(content []byte) [digestLen]byte {
	var d [digestLen]byte
	binary.BigEndian.PutUint64(d[:], xxhash.Sum64(content))
	return d
}
