package ui

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind (a
// server, a render, a watcher) that nothing owns.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
