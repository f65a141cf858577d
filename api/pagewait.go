package api

import "github.com/dynamo-rss/dynamo/internal/service"

// PageWaiter is a PageFetcher that tells how long a fetch would wait for
// its host's politeness slot (optional).
type PageWaiter = service.PageWaiter
