package extractor

// DescriptionCacheSize is the bytes a cache holds, for tests.
func DescriptionCacheSize(c *DescriptionCache) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

// CachedRegions is the number of regions a cache holds, for tests.
func CachedRegions(c *DescriptionCache) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.regions)
}

// SanitizeWithFeedPolicy runs bluemonday with the feed policy over h, for
// benchmarks that price the sanitizer apart from the extraction.
func SanitizeWithFeedPolicy(h []byte) string {
	return string(feedPolicy().SanitizeBytes(h))
}
