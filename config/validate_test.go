package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestValidateReportsEveryProblem(t *testing.T) {
	y := `storage: {driver: cassandra}
log: {level: loud, format: xml}
registration: maybe
poller:
  workers: 0
resources:
  - {id: "a b", url: "/rel"}
  - {id: ok, url: "http://x/", timezone: Mars/Olympus, date_format: "dd.mm.yyyy"}
`
	_, err := Parse([]byte(y))
	if err == nil {
		t.Fatal("accepted")
	}
	want := []string{"line 1, column 19: storage.driver", "line 2, column 14: log.level", "line 2, column 28: log.format", "line 3, column 15: registration",
		"line 5, column 12: poller.workers", "resources[0].id", "resources[0].url", "line 8, column 42: resources[1].timezone", "resources[1].date_format"}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in:\n%v", w, err)
		}
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Line == 0 {
		t.Errorf("errors.As finds no *FieldError with a line: %v", err)
	}
}

func TestNewFieldsDefaultsAndValues(t *testing.T) {
	d := Default()
	if d.Storage.Driver != DriverBadger || d.Storage.MinFree != 256<<20 || d.Log.Access || d.Log.Format != "text" || d.Registration != RegistrationClosed {
		t.Fatalf("defaults %+v", d)
	}
	cfg, err := Parse([]byte(`storage: {driver: postgres, dsn: "postgres:///dynamo", min_free: 1GiB}
log: {level: debug, format: json, access: true}
registration: open
node_id: n1
resources:
  - {id: forum, url: "https://example.org/forum/", date_format: "02.01.2006 15:04", timezone: Europe/Rome}
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Storage.MinFree != 1<<30 || !cfg.Log.Access || cfg.NodeID != "n1" || cfg.Registration != RegistrationOpen {
		t.Fatalf("%+v", cfg)
	}
	if loc := cfg.Resources[0].Location(); loc.String() != "Europe/Rome" {
		t.Fatalf("location %v", loc)
	}
	if _, err := Parse([]byte("storage: {driver: postgres}\n")); err == nil || !strings.Contains(err.Error(), "storage.dsn") {
		t.Fatalf("postgres without dsn: %v", err)
	}
}

func TestSecretFilesKeepEveryByteButOneNewline(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, content, want string }{
		{"lf", "abc\n", "abc"},
		{"crlf", "abc\r\n", "abc"},
		{"no newline", "abc", "abc"},
		{"inner space kept", " abc\u00a0\n", " abc\u00a0"},
		{"only one newline", "abc\n\n", "abc\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := filepath.Join(dir, tc.name+".token")
			if err := os.WriteFile(tok, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, tc.name+".yaml")
			y := "admin: {token_file: '" + tok + "'}\nstorage: {driver: postgres, dsn_file: '" + tok + "'}\n"
			if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Admin.Token != tc.want || cfg.Storage.DSN != tc.want {
				t.Fatalf("token %q dsn %q, want %q", cfg.Admin.Token, cfg.Storage.DSN, tc.want)
			}
		})
	}
}

func TestParseResource(t *testing.T) {
	p := Default().Poller
	r, err := ParseResource([]byte(`{"url": "https://example.org/a", "policy": {"kind": "flat", "interval": "15m"}, "timezone": "Europe/Rome"}`), "a", p)
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != "a" || p.ResolvePolicy(r.Policy).Interval.String() != "15m0s" {
		t.Fatalf("%+v", r)
	}
	for _, tc := range []struct{ name, body, field string }{
		{"unknown field", `{"url": "https://x/", "colour": 1}`, "colour"},
		{"bad url", `{"url": "ftp://x/"}`, "url"},
		{"bad policy", `{"url": "https://x/", "policy": {"kind": "eager"}}`, "policy.kind"},
		{"bad interval", `{"url": "https://x/", "policy": {"kind": "flat", "interval": "soon"}}`, "policy.interval"},
		{"other id", `{"id": "b", "url": "https://x/"}`, "id"},
		{"bad zone", `{"url": "https://x/", "timezone": "Nowhere/City"}`, "timezone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseResource([]byte(tc.body), "a", p)
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("err = %v, want it to name %q", err, tc.field)
			}
		})
	}
}

// A registered resource is stored as JSON and read back with DecodeResource.
func TestResourceJSONRoundTrip(t *testing.T) {
	in := ResourceEntry{ID: "forum", URL: "https://example.org/forum/",
		Policy:     PolicySpec{Kind: KindSmart, Alpha: Alpha{Auto: true, Set: true}, Initial: Duration(20 * time.Minute), Max: Duration(2 * time.Hour)},
		Retention:  RetentionConfig{MaxVersions: 50, MaxAge: Duration(720 * time.Hour)},
		DateFormat: "02.01.2006 15:04", Timezone: "Europe/Rome"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeResource(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip:\n in %+v\nout %+v\n%s", in, out, b)
	}
	var viaJSON ResourceEntry
	if err := json.Unmarshal(b, &viaJSON); err != nil || !reflect.DeepEqual(viaJSON, in) {
		t.Fatalf("encoding/json round trip: %+v %v", viaJSON, err)
	}
}

// TestTrustedProxies: addresses and CIDR prefixes are read (an IPv4 address
// in IPv6 form as the IPv4 one, a prefix with host bits as its network),
// anything else is reported with its place in the file.
func TestTrustedProxies(t *testing.T) {
	c, err := Parse([]byte("trusted_proxies: [10.0.0.0/8, 192.0.2.7, \"::ffff:198.51.100.3\", 2001:db8::/32, 172.16.5.9/12]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range c.TrustedProxyPrefixes() {
		got = append(got, p.String())
	}
	want := "10.0.0.0/8 192.0.2.7/32 198.51.100.3/32 2001:db8::/32 172.16.0.0/12"
	if strings.Join(got, " ") != want {
		t.Errorf("prefixes %v, want %s", got, want)
	}
	_, err = Parse([]byte("trusted_proxies: [10.0.0.0/8, proxy.local, 10.0.0.0/99]\n"))
	if err == nil {
		t.Fatal("accepted a name and a bad prefix")
	}
	for _, w := range []string{"trusted_proxies[1]", `"proxy.local" is neither`, "trusted_proxies[2]"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in:\n%v", w, err)
		}
	}
}
