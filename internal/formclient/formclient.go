package formclient

import (
	"cmp"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Client is an HTTP client that keeps cookies, follows redirects and
// reads forms from the HTML, as a browser without JavaScript does.
type Client struct {
	t    testing.TB
	base string
	// C is the underlying client (its CheckRedirect may be changed).
	C *http.Client
	// Last is the last answer, after redirects; its body is read into Body.
	Last *http.Response
	Body string
}

// New returns a client of the server at base (e.g. an httptest URL).
func New(t testing.TB, base string) *Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Client{t: t, base: base, C: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
}

// Get opens a path and returns the status after redirects.
func (b *Client) Get(path string) int {
	b.t.Helper()
	return b.Do(http.MethodGet, path, nil)
}

// Do sends a request (a form when form is not nil) with header pairs, as
// a browser would (Accept prefers HTML), and returns the status.
func (b *Client) Do(method, path string, form url.Values, header ...string) int {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.C.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	b.Last, b.Body = resp, string(data)
	return resp.StatusCode
}

// Form is a form of the last page: its action and its fields with the
// values a browser would send unchanged.
type Form struct {
	Action, Method string
	Values         url.Values
	ID, Class      string
}

// Forms reads the forms of the last page.
func (b *Client) Forms() []Form {
	b.t.Helper()
	doc, err := html.Parse(strings.NewReader(b.Body))
	if err != nil {
		b.t.Fatal(err)
	}
	var out []Form
	var walk func(n *html.Node, f *Form)
	walk = func(n *html.Node, f *Form) {
		if n.Type == html.ElementNode {
			attr := func(k string) string {
				for _, a := range n.Attr {
					if a.Key == k {
						return a.Val
					}
				}
				return ""
			}
			switch n.DataAtom {
			case atom.Form:
				out = append(out, Form{Action: attr("action"), Method: strings.ToUpper(attr("method")), Values: url.Values{}, ID: attr("id"), Class: attr("class")})
				f = &out[len(out)-1]
			case atom.Input:
				checkable := attr("type") == "checkbox" || attr("type") == "radio"
				checked := false
				for _, a := range n.Attr {
					checked = checked || a.Key == "checked"
				}
				// A box not ticked is not sent, as a browser does not send it.
				if f != nil && attr("name") != "" && attr("type") != "submit" && attr("type") != "file" && (!checkable || checked) {
					f.Values.Add(attr("name"), attr("value"))
				}
			case atom.Textarea:
				if f != nil {
					var text strings.Builder
					for c := n.FirstChild; c != nil; c = c.NextSibling {
						text.WriteString(c.Data)
					}
					f.Values.Add(attr("name"), text.String())
				}
			case atom.Select:
				if f != nil {
					val := ""
					for o := n.FirstChild; o != nil; o = o.NextSibling {
						if o.DataAtom != atom.Option {
							continue
						}
						for _, a := range o.Attr {
							if a.Key == "selected" || val == "" {
								for _, v := range o.Attr {
									if v.Key == "value" {
										val = v.Val
									}
								}
							}
						}
					}
					f.Values.Add(attr("name"), val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, f)
		}
	}
	walk(doc, nil)
	return out
}

// Form is the first form of the last page whose action is action and
// whose field names include every name in having.
func (b *Client) Form(action string, having ...string) Form {
	b.t.Helper()
	for _, f := range b.Forms() {
		ok := f.Action == action
		for _, h := range having {
			ok = ok && f.Values.Has(h)
		}
		if ok {
			return f
		}
	}
	b.t.Fatalf("no form with action %s and fields %v on the page:\n%s", action, having, b.Body)
	return Form{}
}

// Submit sends a form with some fields changed (name, value pairs).
func (b *Client) Submit(f Form, set ...string) int {
	b.t.Helper()
	v := url.Values{}
	for k, vs := range f.Values {
		v[k] = append([]string(nil), vs...)
	}
	for i := 0; i+1 < len(set); i += 2 {
		v.Set(set[i], set[i+1])
	}
	return b.Do(cmp.Or(f.Method, http.MethodGet), f.Action, v)
}

// SetCookie is the Set-Cookie of name in resp, nil when none.
func SetCookie(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}
