package schema_test

import (
	"testing"

	"github.com/dynamo-rss/dynamo/schema"
)

func TestParseDate(t *testing.T) {
	for in, want := range map[string]string{
		"December 08, 2005 @ 08:25 AM":    "2005-12-08T08:25:00Z",
		"December 8, 2005 at 8:25 PM.":    "2005-12-08T20:25:00Z",
		"Thu, 08 Dec 2005 08:25:00 GMT":   "2005-12-08T08:25:00Z",
		"Thu, 08 Dec 2005 08:25:00 PDT":   "2005-12-08T15:25:00Z",
		"2005-12-08T08:25:00Z":            "2005-12-08T08:25:00Z",
		"2005-12-08 08:25":                "2005-12-08T08:25:00Z",
		"12/08/2005":                      "2005-12-08T00:00:00Z",
		"yesterday":                       "",
		"":                                "",
		"@@@":                             "",
		"Thu,  08 Dec 2005\t08:25:00 EST": "2005-12-08T13:25:00Z",
		"Thu, 08 Dec 2005 08:25:00 EST":   "2005-12-08T13:25:00Z",
		"EST":                             "",
	} {
		tm, ok := schema.ParseDate(in)
		got := ""
		if ok {
			got = tm.Format("2006-01-02T15:04:05Z07:00")
		}
		if got != want {
			t.Errorf("ParseDate(%q) = %q, want %q", in, got, want)
		}
	}
}
