//go:build race

package sim

// raceEnabled shrinks the smoke test under the race detector, which slows
// the simulator about tenfold.
const raceEnabled = true
