package api

import "github.com/dynamo-rss/dynamo/internal/apitest"

// The fakes of the api's tests are internal/apitest's, shared with the
// tests of package ui; here they keep the short names the tests use.
type (
	fdStore      = apitest.FDStore
	svcStore     = apitest.SvcStore
	svcPoller    = apitest.SvcPoller
	fakeRegistry = apitest.FakeRegistry
	testClock    = apitest.Clock
)

var (
	newFDStore      = apitest.NewFDStore
	fdFixture       = apitest.FDFixture
	fdItem          = apitest.FDItem
	fdT0            = apitest.FDT0
	svcFixture      = apitest.SvcFixture
	svcNow          = apitest.SvcNow
	newFakeRegistry = apitest.NewFakeRegistry
	openDB          = apitest.OpenDB
	openFixtureDB   = apitest.OpenFixtureDB
	parseFeed       = apitest.ParseFeed
)

// The HTML helpers and browsers' Accept headers of the pages' tests.
var (
	parseHTML        = apitest.ParseHTML
	findAll          = apitest.FindAll
	attr             = apitest.Attr
	text             = apitest.Text
	checkPageHeaders = apitest.CheckPageHeaders
)

const (
	previewPageHTML  = apitest.PreviewPageHTML
	notAnnotatedHTML = apitest.NotAnnotatedHTML
	acceptChrome     = apitest.AcceptChrome
	acceptFirefox    = apitest.AcceptFirefox
	acceptSafari     = apitest.AcceptSafari
)

// A store whose history moves while a request reads it.
type movingStore = apitest.MovingStore

var (
	newMovingStore = apitest.NewMovingStore
	newsVersion4   = apitest.NewsVersion4
)
