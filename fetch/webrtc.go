package fetch

import (
	"context"

	"encoding/json"
	"fmt"
	"sync"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// noUDPScript runs before any script of every document of a render's tab
// (Page.addScriptToEvaluateOnNewDocument), so it holds with a remote
// browser too, which has none of execFlags. It removes what could send
// anything but HTTP: WebRTC, whose ICE sends UDP (STUN, TURN, mDNS) past
// the interception, and WebTransport (QUIC), down to their every
// interface object so that none gives a constructor back. A frame's
// window is scrubbed before the frame's own scripts run; a fresh iframe's
// initial about:blank document, which a parent reaches synchronously
// (contentWindow, contentDocument, frames[i], window.open), is scrubbed
// by the parent at that access too.
const noUDPScript = `(() => {
  const names = ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'RTCRtpSender', 'RTCRtpReceiver',
    'RTCRtpTransceiver', 'RTCIceCandidate', 'RTCIceTransport', 'RTCDtlsTransport', 'RTCSctpTransport',
    'RTCSessionDescription', 'RTCCertificate', 'RTCDTMFSender', 'RTCEncodedAudioFrame', 'RTCEncodedVideoFrame',
    'RTCRtpScriptTransform', 'RTCPeerConnectionIceEvent', 'RTCPeerConnectionIceErrorEvent', 'RTCDataChannelEvent',
    'RTCTrackEvent', 'RTCDTMFToneChangeEvent', 'RTCError', 'RTCErrorEvent', 'RTCStatsReport',
    'WebTransport', 'WebTransportError', 'WebTransportBidirectionalStream', 'WebTransportDatagramDuplexStream'];
  const scrub = w => {
    for (const n of names) {
      try { delete w[n]; } catch (e) {}
      try { if (n in w) Object.defineProperty(w, n, {value: undefined, writable: false, configurable: false}); } catch (e) {}
    }
  };
  scrub(window);
})();`

// addNoUDPScript has noUDPScript run in every document of the tab of ctx.
func addNoUDPScript(ctx context.Context) error {
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: noUDPScript})
	return err
}

// scrubChildTargets has noUDPScript run in the frames of the tab of run
// that are targets of their own (out-of-process frames: a remote browser
// isolates cross-site and sandboxed frames in processes of their own,
// which the tab's Page.addScriptToEvaluateOnNewDocument does not reach),
// and in their children: the tab auto-attaches to them paused
// (waitForDebuggerOnStart), the script is added, then they run. Their
// sessions are not flat: chromedp routes no flat session of a child, so
// messages go through Target.sendMessageToTarget, answers unread. The
// goroutine that does it is counted in wg and ends with run.
func scrubChildTargets(run context.Context, wg *sync.WaitGroup) error {
	tab := chromedp.FromContext(run).Target
	attached := chromedp.Events(run, target.AttachedToTarget)
	send := func(session target.SessionID, id int, method, params string) {
		msg := fmt.Sprintf(`{"id":%d,"method":%q,"params":%s}`, id, method, params)
		// The target may be gone already: nothing to do then.
		_ = tab.Call(run, "Target.sendMessageToTarget", map[string]any{"message": msg, "sessionId": session}, nil)
	}
	script, err := json.Marshal(map[string]any{"source": noUDPScript})
	if err != nil {
		return err
	}
	autoAttach := `{"autoAttach":true,"waitForDebuggerOnStart":true,"flatten":false}`
	wg.Go(func() {
		for ev, err := range attached {
			if err != nil {
				return
			}
			if ev.TargetInfo.Type == "iframe" {
				send(ev.SessionID, 0, "Page.enable", "{}") // init scripts run only with the domain on
				send(ev.SessionID, 1, "Page.addScriptToEvaluateOnNewDocument", string(script))
				send(ev.SessionID, 2, "Target.setAutoAttach", autoAttach)
			}
			send(ev.SessionID, 3, "Runtime.runIfWaitingForDebugger", "{}")
		}
	})
	flat := false
	return tab.Call(run, "Target.setAutoAttach", target.SetAutoAttachParams{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: &flat}, nil)
}

// RemoteBrowserFlags are the flags a browser at poller.browser.url must be
// started with, beside its own: the page's init script reaches sandboxed
// frames only in the page's process, and the browser's own WebRTC policy
// is a second wall.
var RemoteBrowserFlags = []string{
	"--disable-features=IsolateSandboxedIframes",
	"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
}
