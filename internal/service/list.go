package service

import (
	"cmp"
	"github.com/dynamo-rss/dynamo/internal/redact"
	"slices"

	"github.com/dynamo-rss/dynamo/storage"
)

// Listed is a resource as the poller and the store know it, before
// anything is formatted: GET / (package ui) and the OPML list (package api) are made of these.
type Listed struct {
	ID     string
	Status *ResourceStatus       // nil: not configured
	Info   *storage.ResourceInfo // nil: nothing stored
}

// ListResources merges the configured resources (the poller's statuses)
// with the stored ones, sorted by id.
func ListResources(statuses []ResourceStatus, stored []storage.ResourceInfo) []Listed {
	byID := make(map[string]int, len(statuses)+len(stored))
	out := make([]Listed, 0, max(len(statuses), len(stored)))
	get := func(id string) *Listed {
		i, ok := byID[id]
		if !ok {
			i = len(out)
			byID[id] = i
			out = append(out, Listed{ID: id})
		}
		return &out[i]
	}
	for i := range statuses {
		get(statuses[i].ID).Status = &statuses[i]
	}
	for i := range stored {
		get(stored[i].ID).Info = &stored[i]
	}
	slices.SortFunc(out, func(a, b Listed) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// URL is the page's URL as people see it (without credentials): the
// poller's, else the store's.
func (l *Listed) URL() string {
	switch {
	case l.Status != nil && l.Status.URL != "":
		return redact.URL(l.Status.URL)
	case l.Info != nil:
		return redact.URL(l.Info.URL)
	}
	return ""
}
