// Package sim is the freshness benchmark: a trace-driven simulator that runs
// the project's real polling policies ([poller.NewPolicy]) and scheduler queue
// ([poller.Queue]) on a virtual clock, and compares them at equal budgets.
//
// # Usage
//
// From the command line (see BENCHMARKS.md, section Freshness):
//
//	dynamo simulate --feeds 1000 --seed 1 --k 20 --dates --csv out.csv --plots bench/
//	dynamo simulate --trace log.csv --start 2026-01-05T00:00:00Z --end 2026-04-06T00:00:00Z
//
// From Go: build or read a [Trace], then call [Benchmark] for the whole
// comparison or [Simulate] for one policy at one scale; [WriteTable],
// [WriteReportCSV] and [PlotDelay] render a [Report], [PlotWatch] its
// watched page.
//
// # Traces
//
// [Generate] builds a seeded synthetic trace that follows what Sia, Cho & Cho
// ("Efficient Monitoring Algorithm for Fast News Alerts", TKDE 2007) report for
// ~9,600 real feeds over 13 weeks: postings per feed power-law distributed,
// count ∝ x^-0.78 on [1, 4900]; a daily cycle peaking at 13:00 ± 2.5 h (UTC)
// with a feed-specific width over a 10 % night floor; weekends at 0.4–0.9 of
// weekdays; and bursts, each posting triggering on average 0.3 follow-ups
// about 30 minutes later (a branching process, so the drawn count stays the
// expected total). Feed i depends only on (seed, i). [ReadCSV] replays a
// recorded trace (`feed_id,RFC3339 time` per line); [WriteCSV] writes one.
//
// # Page model
//
// Each feed is an annotated page showing its latest K items (K = 0: all), with
// or without publication dates; the origin answers 304 when nothing changed
// (200 with the same page under [PageConfig].NoConditional). A poll yields the
// [poller.Observation] the engine would build: changed or not-modified (or
// unchanged), the detection time, NewItems (the items on the page that the
// previous version lacked; 0 on the first fetch, which has no previous
// version), and, when dates are shown, Dates (the new items' publication
// times; all the page's on the first fetch) and Published (the newest). A
// posting pushed off a K-item page before any poll saw it is missed for good,
// and the policy is not told about it.
//
// # Simulation and budgets
//
// [Simulate] pops the earliest page from one [poller.Queue] over all pages,
// polls it at that virtual instant, feeds the observation to the page's
// policy, and pushes the page back after the wait the policy chose — never
// less than 10 minutes. The first 2 weeks learn; only the rest is measured.
// Each contender gets the same budget M = n × measured time / Ī for Ī = 6, 8,
// 12 and 24 h: flat polls every Ī; the policies that choose their own waits
// have all of them multiplied by one global factor, found by bisection
// (secant then Illinois false position on log scale), until they make M polls
// within 0.5 %. [Benchmark] also searches, per contender, the polls needed to
// match flat's mean delay: the value of a policy both ways.
//
// # Metrics
//
// The delay of a posting is the time from its publication to the first poll
// that sees it (Sia & Cho's Definition 1). Per contender and budget: mean
// delay per posting (and its ratio to flat), p50, p95 and max, polls made, the
// share of polls that found nothing new, postings missed (off the page before
// any poll saw them) and postings still unseen when the trace ends. Every
// measured posting is exactly one of seen, unseen or missed. An unseen
// posting's delay runs to the poll its page's policy had already scheduled
// after the end (that poll is not charged to the budget): dropping these
// would flatter policies that starve quiet pages. Missed postings have no
// delay and are reported apart. A breakdown by feed activity (postings per
// day) shows where each policy spends its polls.
//
// The simulator is checked against closed forms on homogeneous Poisson
// traces (see TestTheory): flat gives Ī/2; polling ∝ λ equals flat; polling
// ∝ √λ gives (Σ√λ)²/(nΣλ) of flat (Sia & Cho's Theorem 1).
//
// # Contenders
//
// flat, smart α=0.5 and smart α=auto are the project's policies, built by
// [poller.NewPolicy] (smart with the poller's default min 1 min, initial
// 10 min and max 6 h, before scaling). budget is the project's budget policy
// ([poller.Budget]): every page a member of one allocator of 24 h ÷ Ī polls
// per page and day, max_interval max(28 h, 2·Ī); it spends the budget by
// itself, so it is not scaled (and has no equal-delay search). Two references
// live here, not in the product: "rate (scaled clamps)", rate-proportional in
// the style of Miniflux's entry_frequency (7 days ÷ postings seen in the last
// week, clamped to 5 min – 24 h, then scaled like every scaled contender, so
// its clamps scale too: not Miniflux's order) and Sia & Cho's resource
// allocation (uniform waits ∝ 1/√λ, λ counted since the first poll).
//
// # Concurrency
//
// A [Trace] is read-only and shared. Each simulation owns its pages, policies
// and queue on one goroutine; [Benchmark] runs simulations on a bounded
// errgroup and joins them all before returning. Cancelling ctx stops it.
package sim
