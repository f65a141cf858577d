package fetch

import "errors"

// KillBrowser kills r's browser process, as a crash would.
func KillBrowser(r *Renderer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.browser == nil || r.browser.Process() == nil {
		return errors.New("no browser process running")
	}
	if err := r.browser.Process().Kill(); err != nil {
		return err
	}
	<-r.browser.LostConnection // chromedp reaps the process and notices
	return nil
}

// RendererOf is the renderer f has started for its rendered pages (nil
// before the first).
func RendererOf(f *Fetcher) *Renderer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.renderer
}

// LostConnection is closed once r's browser connection is lost (nil
// before a browser was started).
func LostConnection(r *Renderer) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.browser == nil {
		return nil
	}
	return r.browser.LostConnection
}
