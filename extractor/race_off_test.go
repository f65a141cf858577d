//go:build !race

package extractor_test

const raceEnabled = false
