package sim

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/poller"
)

func TestExp(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("EXP_N"))
	tr, _ := Generate(GenConfig{Feeds: n, Seed: 1})
	mi, _ := time.ParseDuration(os.Getenv("EXP_MAX"))
	for _, iv := range []time.Duration{6 * time.Hour, 12 * time.Hour, 24 * time.Hour} {
		cfg := Config{Page: PageConfig{Dates: os.Getenv("EXP_DATES") != ""}}
		fl, _ := Simulate(context.Background(), tr, cfg, Flat(), iv, 1)
		c := Contender{Name: "b", New: func(iv time.Duration) (func(int) PagePolicy, error) {
			m := BudgetMaxInterval(iv)
			if mi > 0 {
				m = mi
			}
			b := poller.NewBudget(poller.BudgetSettings{PerResource: float64(24*time.Hour) / float64(iv), MaxInterval: m}, nil)
			cc := poller.PolicyConfig{Kind: poller.KindBudget, Weight: 1}
			return func(f int) PagePolicy { p, _ := b.Policy(strconv.Itoa(f), cc); return &project{p: p} }, nil
		}}
		r, _ := Simulate(context.Background(), tr, cfg, c, iv, 1)
		fmt.Printf("%v: ratio %.3f polls %+.2f%% max %v empty %.2f\n", iv, float64(r.Mean)/float64(fl.Mean), 100*(float64(r.Polls)/float64(r.Budget)-1), r.Max, float64(r.Empty)/float64(r.Polls)/(float64(fl.Empty)/float64(fl.Polls)))
	}
}
