package schema

// ArticleNamespace is dynamo's own mark on an item of a resource with
// content: full: an extension dynamo:article whose value says what became
// of the item's article. [ArticleFull]: its content:encoded is the article
// fetched from its link; [ArticleFailed]: the article could not be had,
// and the item keeps its summary. An item that carries the mark is never
// fetched again: later versions carry its mark and content over. Feeds do
// not show the mark.
const ArticleNamespace = "urn:dynamo-rss:article"

// Values of the dynamo:article mark.
const (
	ArticleFull   = "full"
	ArticleFailed = "failed"
)

// ArticleMark returns the item's dynamo:article mark, if it has one.
func (e Extensions) ArticleMark() (string, bool) { return e.Lookup(ArticleNamespace, "article") }
