package sim

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"
)

// WriteTable writes one table per budget, for people.
func WriteTable(w io.Writer, rep *Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	kind := "all items"
	if rep.Page.K > 0 {
		kind = fmt.Sprintf("latest %d items", rep.Page.K)
	}
	dates := "without dates"
	if rep.Page.Dates {
		dates = "with dates"
	}
	fmt.Fprintf(tw, "%d feeds, %d postings; pages show %s %s; %d simulations in %v\n",
		rep.Feeds, rep.Postings, kind, dates, rep.Simulations, rep.Elapsed.Round(time.Millisecond))
	for _, b := range rep.Budgets {
		fmt.Fprintf(tw, "\nbudget Ī = %s: M = %d polls over the measured weeks, %d postings to deliver\n",
			formatHours(b.Interval), b.Budget, b.Rows[0].Postings)
		fmt.Fprint(tw, "policy\tscale\tpolls\tvs M\tmean delay\t÷ flat\tp50\tp95\tmax\tempty polls\tmissed\tunseen\tpolls at flat's delay\t\n")
		for _, r := range b.Rows {
			eq := "-"
			if r.EqualDelayPolls > 0 {
				eq = fmt.Sprintf("%d (%.2f M)", r.EqualDelayPolls, float64(r.EqualDelayPolls)/float64(b.Budget))
			}
			fmt.Fprintf(tw, "%s\t%.3g\t%d\t%+.2f%%\t%s\t%.3f\t%s\t%s\t%s\t%.1f%%\t%d\t%d\t%s\t\n",
				r.Policy, r.Scale, r.Polls, 100*(float64(r.Polls)/float64(b.Budget)-1),
				minutes(r.Mean), r.Ratio, minutes(r.P50), minutes(r.P95), minutes(r.Max),
				100*float64(r.Empty)/float64(max(r.Polls, 1)), r.Missed, r.Unseen, eq)
		}
	}
	for _, b := range rep.Budgets {
		if b.Interval != rep.ClassInterval {
			continue
		}
		fmt.Fprintf(tw, "\nby feed activity at Ī = %s: polls per feed / mean delay\n", formatHours(b.Interval))
		fmt.Fprint(tw, "policy\t")
		for c, name := range ClassNames() {
			fmt.Fprintf(tw, "%s (%d feeds)\t", name, b.Rows[0].Classes[c].Feeds)
		}
		fmt.Fprint(tw, "\n")
		for _, r := range b.Rows {
			fmt.Fprintf(tw, "%s\t", r.Policy)
			for _, cs := range r.Classes {
				fmt.Fprintf(tw, "%.0f / %s\t", float64(cs.Polls)/float64(max(cs.Feeds, 1)), minutes(cs.Mean()))
			}
			fmt.Fprint(tw, "\n")
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// csvHeader names the columns of [WriteReportCSV]; delays are in minutes.
func csvHeader() []string {
	return []string{
		"interval_h", "budget", "policy", "scale", "polls", "empty_polls",
		"postings", "seen", "missed", "unseen",
		"mean_delay_min", "ratio_to_flat", "p50_delay_min", "p95_delay_min", "max_delay_min",
		"equal_delay_polls", "equal_delay_scale",
	}
}

// WriteReportCSV writes one line per budget and contender.
func WriteReportCSV(w io.Writer, rep *Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader()); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	m := func(d time.Duration) string { return strconv.FormatFloat(d.Minutes(), 'f', 2, 64) }
	for _, b := range rep.Budgets {
		for _, r := range b.Rows {
			rec := []string{
				f(b.Interval.Hours()), strconv.Itoa(b.Budget), r.Policy, f(r.Scale),
				strconv.Itoa(r.Polls), strconv.Itoa(r.Empty),
				strconv.Itoa(r.Postings), strconv.Itoa(r.Seen), strconv.Itoa(r.Missed), strconv.Itoa(r.Unseen),
				m(r.Mean), strconv.FormatFloat(r.Ratio, 'f', 4, 64), m(r.P50), m(r.P95), m(r.Max),
				strconv.Itoa(r.EqualDelayPolls), f(r.EqualDelayScale),
			}
			if err := cw.Write(rec); err != nil {
				return fmt.Errorf("write csv: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// minutes renders a delay as whole minutes ("181 min").
func minutes(d time.Duration) string {
	return strconv.FormatFloat(d.Minutes(), 'f', 0, 64) + " min"
}

// formatHours renders a duration as hours for tables ("6h", "1.5h").
func formatHours(d time.Duration) string {
	return strconv.FormatFloat(d.Hours(), 'f', -1, 64) + "h"
}
