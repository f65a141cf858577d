package poller

import (
	"math"
	"time"
)

// tuneTolerance is the width of the final golden-section bracket on α.
const tuneTolerance = 1e-4

// SmoothingMSE returns the mean squared error, in squared seconds, of the
// one-step-ahead estimates τ_i of single exponential smoothing with factor
// alpha over intervals: τ_1 = t_1, τ_{i+1} = α·τ_i + (1−α)·t_i, and the error
// of step i ≥ 2 is τ_i − t_i. Fewer than two intervals give 0.
func SmoothingMSE(intervals []time.Duration, alpha float64) float64 {
	if len(intervals) < 2 {
		return 0
	}
	tau := intervals[0].Seconds()
	var sum float64
	for _, d := range intervals[1:] {
		t := d.Seconds()
		e := tau - t
		sum += e * e
		tau = alpha*tau + (1-alpha)*t
	}
	return sum / float64(len(intervals)-1)
}

// Forecast returns the smoothed estimate of the next interval after
// intervals with factor alpha (τ_{n+1}); 0 for no intervals.
func Forecast(intervals []time.Duration, alpha float64) time.Duration {
	if len(intervals) == 0 {
		return 0
	}
	tau := intervals[0].Seconds()
	for _, d := range intervals[1:] {
		tau = alpha*tau + (1-alpha)*d.Seconds()
	}
	return time.Duration(tau * float64(time.Second))
}

// Tune chooses α ∈ [0,1] minimising [SmoothingMSE] over intervals by
// golden-section search, and returns it with its MSE (squared seconds). The
// search assumes MSE(α) unimodal, as the Dynamo paper does; the ends 0 and 1
// are also tried, so a monotone MSE is handled exactly. With fewer than two
// intervals there is nothing to fit: it returns 0.5 and 0. Ties (a constant
// series has MSE 0 for every α) resolve to the smallest α found.
func Tune(intervals []time.Duration) (alpha, mse float64) {
	if len(intervals) < 2 {
		return 0.5, 0
	}
	f := func(a float64) float64 { return SmoothingMSE(intervals, a) }
	invPhi := (math.Sqrt(5) - 1) / 2
	lo, hi := 0.0, 1.0
	x1 := hi - invPhi*(hi-lo)
	x2 := lo + invPhi*(hi-lo)
	f1, f2 := f(x1), f(x2)
	for hi-lo > tuneTolerance {
		if f1 <= f2 {
			hi, x2, f2 = x2, x1, f1
			x1 = hi - invPhi*(hi-lo)
			f1 = f(x1)
		} else {
			lo, x1, f1 = x1, x2, f2
			x2 = lo + invPhi*(hi-lo)
			f2 = f(x2)
		}
	}
	best, bestF := (lo+hi)/2, f((lo+hi)/2)
	for _, a := range []float64{0, 1} {
		if v := f(a); v < bestF || (v == bestF && a < best) {
			best, bestF = a, v
		}
	}
	return best, bestF
}
