//go:build race

package badger

// raceEnabled: the race detector allocates on its own account, so the
// allocation counts are not checked under it.
const raceEnabled = true
