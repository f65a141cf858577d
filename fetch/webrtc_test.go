package fetch_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/fetch"
)

// escapePage tries every way out of a render but guarded HTTP: WebRTC
// (an RTCPeerConnection with a STUN server on a loopback UDP port, a data
// channel, an offer) in the main frame, in fresh about:blank and srcdoc
// iframes (read through contentWindow and frames[i] before and after
// they load), in a same-origin, a data: and a sandboxed iframe (which
// report by postMessage), in a popup, and WebTransport in a worker;
// a WebSocket and an EventSource to loopback servers. It writes what it
// could do as JSON into #report, then adds #done.
const escapePage = `<!doctype html><html><body><pre id="report"></pre>
<iframe id="child" src="/child"></iframe>
<script>
const STUN = 'stun:127.0.0.1:%[1]d', WS = '%[2]s', report = {};
const names = ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'RTCRtpSender', 'RTCRtpReceiver',
  'RTCRtpTransceiver', 'RTCIceCandidate', 'RTCIceTransport', 'RTCDtlsTransport', 'RTCSctpTransport', 'RTCSessionDescription',
  'RTCCertificate', 'RTCDTMFSender', 'RTCEncodedAudioFrame', 'RTCEncodedVideoFrame', 'RTCRtpScriptTransform', 'WebTransport'];
function probe(w) {
  try { return names.filter(n => typeof w[n] !== 'undefined'); } catch (e) { return ['probe threw ' + e]; }
}
async function rtc(w) {
  let PC;
  try { PC = w.RTCPeerConnection || w.webkitRTCPeerConnection; } catch (e) { return 'no access'; }
  if (!PC) return 'unavailable';
  try {
    const pc = new PC({iceServers: [{urls: STUN}]});
    pc.createDataChannel('x');
    await pc.setLocalDescription(await pc.createOffer());
    await new Promise(r => setTimeout(r, 1000));
    return 'worked';
  } catch (e) { return 'threw ' + e; }
}
async function frame(label, w) { report[label] = {apis: probe(w), rtc: await rtc(w)}; }
const selfTest = 'const n = ' + JSON.stringify(names) + ';' +
  'const apis = n.filter(x => typeof self[x] !== "undefined");' +
  'let rtc = "unavailable";' +
  'try { if (self.RTCPeerConnection) { const pc = new RTCPeerConnection({iceServers: [{urls: ' + JSON.stringify(STUN) + '}]});' +
  '  pc.createDataChannel("x"); pc.createOffer().then(o => pc.setLocalDescription(o)); rtc = "worked"; } } catch (e) { rtc = "threw " + e; }';
function messages(n) {
  return new Promise(resolve => {
    const got = {};
    addEventListener('message', e => { got[e.data.label] = e.data.result; if (Object.keys(got).length === n) resolve(got); });
    setTimeout(() => resolve(got), 5000);
  });
}
function loaded(f) { return new Promise(r => f.addEventListener('load', r, {once: true})); }
async function main() {
  await frame('main', window);
  const blank = document.createElement('iframe');
  document.body.appendChild(blank);
  await frame('fresh about:blank iframe', blank.contentWindow);
  await frame('fresh iframe as frames[i]', window.frames[window.frames.length - 1]);
  const src = document.createElement('iframe');
  src.src = 'about:blank';
  document.body.appendChild(src);
  await frame('about:blank iframe', src.contentWindow);
  const sd = document.createElement('iframe');
  sd.srcdoc = '<p>srcdoc</p>';
  const sdLoaded = loaded(sd);
  document.body.appendChild(sd);
  await frame('srcdoc iframe before load', sd.contentWindow);
  await sdLoaded;
  await frame('srcdoc iframe after load', sd.contentWindow);
  await frame('srcdoc iframe contentDocument', sd.contentDocument.defaultView);
  const child = document.getElementById('child');
  if (child.contentDocument.readyState !== 'complete') await loaded(child);
  await frame('same-origin iframe', child.contentWindow);
  const nested = child.contentDocument.createElement('iframe');
  child.contentDocument.body.appendChild(nested);
  await frame('iframe in an iframe', nested.contentWindow);
  const posted = messages(3);
  const cross = document.createElement('iframe'); // localhost is another site than 127.0.0.1
  cross.src = 'http://localhost:' + location.port + '/cross';
  document.body.appendChild(cross);
  const data = document.createElement('iframe');
  data.src = 'data:text/html,' + encodeURIComponent('<script>' + selfTest + 'parent.postMessage({label: "data: iframe", result: {apis, rtc}}, "*")<' + '/script>');
  document.body.appendChild(data);
  const sandboxed = document.createElement('iframe');
  sandboxed.sandbox = 'allow-scripts';
  sandboxed.srcdoc = '<script>' + selfTest + 'parent.postMessage({label: "sandboxed iframe", result: {apis, rtc}}, "*")<' + '/script>';
  document.body.appendChild(sandboxed);
  Object.assign(report, await posted);
  const popup = window.open('about:blank');
  if (popup) await frame('popup', popup); else report['popup'] = {apis: [], rtc: 'blocked'};
  report.worker = await new Promise(resolve => {
    try {
      const w = new Worker('/worker.js');
      w.onmessage = e => resolve(e.data);
      w.onerror = () => resolve({apis: [], rtc: 'worker failed'});
      setTimeout(() => resolve({apis: [], rtc: 'worker silent'}), 3000);
    } catch (e) { resolve({apis: [], rtc: 'no worker: ' + e}); }
  });
  report.websocket = await new Promise(resolve => {
    try {
      const ws = new WebSocket(WS);
      ws.onopen = () => resolve('open');
      ws.onerror = () => resolve('failed');
      setTimeout(() => resolve('silent'), 3000);
    } catch (e) { resolve('threw ' + e); }
  });
  report.eventsource = await new Promise(resolve => {
    try {
      const es = new EventSource('/events');
      es.onmessage = e => { es.close(); resolve('message ' + e.data); };
      es.onerror = () => { es.close(); resolve('failed'); };
      setTimeout(() => resolve('silent'), 3000);
    } catch (e) { resolve('threw ' + e); }
  });
}
let finished = false;
function finish() {
  if (finished) return;
  finished = true;
  document.getElementById('report').textContent = JSON.stringify(report);
  document.body.appendChild(document.createElement('i')).id = 'done';
}
setTimeout(() => { report.error = 'still going after 20 s'; finish(); }, 20000);
main().catch(e => { report.error = String(e); }).finally(finish);
</script></body></html>`

// frameReport is what escapePage found in one frame (or worker).
type frameReport struct {
	APIs []string `json:"apis"`
	RTC  string   `json:"rtc"`
}

// escapeOrigin serves escapePage (its STUN server the UDP port given, its
// WebSocket the ws server given), the same-origin child frame, the
// worker and an event stream.
func escapeOrigin(t *testing.T, udpPort int, ws string) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, escapePage, udpPort, ws)
	})
	mux.HandleFunc("/child", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><body><p>child</p></body>")
	})
	mux.HandleFunc("/cross", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><script>
const n = ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel'];
const apis = n.filter(x => typeof self[x] !== 'undefined');
let rtc = 'unavailable';
try { if (self.RTCPeerConnection) { const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.1:%d'}]});
  pc.createDataChannel('x'); pc.createOffer().then(o => pc.setLocalDescription(o)); rtc = 'worked'; } } catch (e) { rtc = 'threw ' + e; }
parent.postMessage({label: 'cross-site iframe', result: {apis, rtc}}, '*');
</script>`, udpPort)
	})
	mux.HandleFunc("/worker.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprintf(w, `const apis = ['WebTransport', 'RTCPeerConnection', 'RTCDataChannel'].filter(x => typeof self[x] !== 'undefined');
let rtc = 'unavailable';
const wt = self.WebTransport ? new WebTransport('https://127.0.0.1:%d/').ready.then(() => 'webtransport ready', () => 'webtransport failed') : Promise.resolve('unavailable');
wt.then(rtc => postMessage({apis, rtc}));`, udpPort)
	})
	mux.HandleFunc("/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: hello\n\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestRenderCannotEscape: a rendered page can send nothing but guarded
// HTTP, with a browser the renderer starts and with a remote one (which
// has none of the renderer's launch flags): WebRTC is unavailable in the
// main frame and in every kind of frame, no UDP packet reaches a STUN
// server on loopback, a WebSocket to loopback never connects, and an
// EventSource is a request made by the guarded client.
func TestRenderCannotEscape(t *testing.T) {
	chromium(t)
	for _, remote := range []bool{false, true} {
		name := map[bool]string{false: "local browser", true: "remote browser"}[remote]
		t.Run(name, func(t *testing.T) {
			udp, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { udp.Close() })
			var wsConns atomic.Int32
			wsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "no", http.StatusBadRequest)
			}))
			wsSrv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					wsConns.Add(1)
				}
			}
			wsSrv.Start()
			t.Cleanup(wsSrv.Close)
			srv := escapeOrigin(t, udp.LocalAddr().(*net.UDPAddr).Port, "ws"+strings.TrimPrefix(wsSrv.URL, "http")+"/ws")
			o := fetch.BrowserOptions{Timeout: 60 * time.Second}
			if remote {
				ws, _, _ := startRemoteBrowser(t, fetch.RemoteBrowserFlags...)
				o.URL = ws
			}
			r, rec := newRenderer(t, o)
			out, err := r.Render(t.Context(), fetch.RenderRequest{URL: srv.URL + "/", WaitFor: "#done"})
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			// The render waited for the network's quiet: a packet sent is here.
			_ = udp.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			buf := make([]byte, 1500)
			if n, from, err := udp.ReadFrom(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("the STUN server on loopback got a %d-byte packet from %v (%v)", n, from, err)
			}
			dom := string(out.HTML)
			i, j := strings.Index(dom, `<pre id="report">`), strings.Index(dom, "</pre>")
			if i < 0 || j < i {
				t.Fatalf("no report in the DOM:\n%s", dom)
			}
			raw := strings.NewReplacer("&quot;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(dom[i+len(`<pre id="report">`) : j])
			var report map[string]json.RawMessage
			if err := json.Unmarshal([]byte(raw), &report); err != nil {
				t.Fatalf("report %s: %v", raw, err)
			}
			t.Logf("report: %s", raw)
			if e, ok := report["error"]; ok {
				t.Errorf("the page's script failed: %s", e)
			}
			for _, label := range []string{"main", "fresh about:blank iframe", "fresh iframe as frames[i]", "about:blank iframe",
				"srcdoc iframe before load", "srcdoc iframe after load", "srcdoc iframe contentDocument", "same-origin iframe",
				"iframe in an iframe", "data: iframe", "sandboxed iframe", "cross-site iframe", "popup", "worker"} {
				var fr frameReport
				if label == "cross-site iframe" && report[label] == nil {
					continue // not loaded: refused, which is fine
				}
				if err := json.Unmarshal(report[label], &fr); err != nil {
					t.Errorf("%s: no report (%s)", label, report[label])
					continue
				}
				if label == "worker" { // no WebRTC in workers; WebTransport there fails at the proxy, sending nothing
					if slices.Contains(fr.APIs, "RTCPeerConnection") || fr.RTC == "webtransport ready" {
						t.Errorf("worker: %v, %s", fr.APIs, fr.RTC)
					}
					continue
				}
				if len(fr.APIs) > 0 || (fr.RTC != "unavailable" && fr.RTC != "blocked" && fr.RTC != "no access") {
					t.Errorf("%s: WebRTC or WebTransport available: %v, %s", label, fr.APIs, fr.RTC)
				}
			}
			var ws, es string
			_ = json.Unmarshal(report["websocket"], &ws)
			_ = json.Unmarshal(report["eventsource"], &es)
			if ws == "open" || wsConns.Load() != 0 {
				t.Errorf("the WebSocket to loopback %s, %d connections reached its server", ws, wsConns.Load())
			}
			if !rec.saw("/events") {
				t.Errorf("the EventSource (%s) did not go through the guarded client", es)
			}
			t.Logf("websocket %s, eventsource %s", ws, es)
		})
	}
}
