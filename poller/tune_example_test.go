package poller

import (
	"fmt"
	"math"
	"time"
)

func ExampleTune() {
	// Minutes between the updates of a page.
	var iv []time.Duration
	for _, m := range []int{10, 12, 9, 11, 10, 30, 31, 29, 30} {
		iv = append(iv, time.Duration(m)*time.Minute)
	}
	alpha, mse := Tune(iv)
	rmse := time.Duration(math.Sqrt(mse) * float64(time.Second))
	fmt.Printf("α=%.2f rmse=%v next=%v\n", alpha, rmse.Round(time.Second), Forecast(iv, alpha).Round(time.Second))
	// Output: α=0.04 rmse=7m16s next=29m58s
}
