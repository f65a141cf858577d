//go:build race

package extractor_test

// raceEnabled: the race detector makes streaming 50 MB take minutes, so the
// size tests use a smaller page under it.
const raceEnabled = true
