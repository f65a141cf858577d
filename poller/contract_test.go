package poller_test

import (
	"testing"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/poller"
)

// The api shows poller statuses with a plain struct conversion: this stops
// compiling if Status and api.ResourceStatus drift apart.
func TestStatusConvertsToAPI(t *testing.T) {
	s := poller.Status{ID: "news", Polls: 3}
	if a := api.ResourceStatus(s); a.ID != "news" || a.Polls != 3 {
		t.Fatalf("%+v", a)
	}
}
