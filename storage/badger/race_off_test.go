//go:build !race

package badger

const raceEnabled = false
