// Package poller is Dynamo's Engine and Poller: it decides when to look at
// each annotated page, has it fetched (package fetch decides how: politely
// and safely), hands it to the extractor and stores the versions whose
// content changed.
//
// # Configuration
//
// The engine is configured by a [config.Config] (package config reads and
// validates the file and owns reloads); [Engine.Apply] takes a new one at
// run time. A resource's policy is a [config.Policy] ([PolicyConfig]),
// resolved over the poller default by [config.PollerConfig.ResolvePolicy].
//
// # Engine
//
// [Engine] keeps one min-heap ([Queue]) of next-poll times and a bounded pool
// of poller.workers goroutines, both owned by [Engine.Run], which returns once
// ctx is done and the workers have finished. Time comes from an injected
// [Clock]. A resource is never polled by two goroutines at once (a per-resource
// token, also taken by [Engine.PollNow]). New resources get their first poll
// at a stable hashed offset of their id within the first minute (or their
// first interval, when shorter), so a start-up does not hit every origin at
// once yet a newly configured page shows its first version quickly; after a
// restart the persisted next-poll time is resumed (an overdue one spread over
// the next minute the same way), unless the resource's policy differs from
// the one the state records its next poll was placed under (changed in the
// file meanwhile): then it is placed again from its last poll, as
// [Engine.Apply] places it for a changed policy (with a [Leaser], in the
// store too). Every poll ends in one outcome: changed, unchanged, not-modified,
// not-annotated, robots-denied or error (its cause in Status.LastError).
// Errors back off exponentially (30 s·2^(n−1), capped at 1 h, ±10 % jitter
// derived from the id, so it is stable) without touching what the policy has
// learned; the first success resumes the policy where it was. The poll state
// (policy state τ/α/intervals, ETag/Last-Modified of the last 200, outcome,
// next poll, counters, and the history of the last 200 polls, which is not
// kept in memory) is stored after every poll as versioned JSON through
// [StateStore]; with Badger each poll's history record is a key of its own,
// written with the state, so that a poll never reads its history back, and
// the state is stored in two parts: its progress (times, outcome, counters,
// validators, next poll: ≈ 50–110 bytes, binary), written by every poll, and
// the rest, written only when it differs from what was last stored (a budget
// policy's rate state only when the poll added postings; progress.go). A
// changed version is pruned with the resource's retention.
// [Engine.Apply] switches configuration live: added resources are scheduled,
// removed ones unscheduled (their history stays), a changed policy recomputes
// the next poll at once from the last poll, and the learned state survives
// flat → smart → flat.
//
// # Parts
//
// The Engine is a coordinator of parts, each a type with its own state and
// tests, given what it needs (values, funcs, small interfaces) and never
// the Engine: the Engine calls down into them, never the reverse.
//
//   - The queue and the policies: [Queue] (queue.go) holds next-poll
//     times, a [Policy] (policy.go, budget.go) decides waits; when a
//     resource is placed besides its policy (first polls, a new policy,
//     the error back-off) is schedule.go's.
//   - The registry follower (registryFollower, registry.go) holds the
//     registrations this node applies, makes Register and Unregister, and
//     reads the [Registry] again when another node changed it (follow).
//     It changes resources only through the apply func the Engine gives
//     it; its lock serialises every change of the resource set (Apply
//     takes it too).
//   - The lease keeper (leases, lease.go) speaks to the [Leaser]: it asks
//     for a lease and says what the answer means (adopt the store's state,
//     ask again at), commits a poll under it and moves due times in the
//     store with the replan func the Engine gives it.
//   - The poll history (histories, history.go) reads and writes a
//     resource's history where the store keeps it; the state reader
//     (stateReader, state.go) reads stored poll states, all in one pass
//     when the store can.
//   - The article step (articles, article.go) gives the items of a
//     content: full page their articles, through the fetcher.
//
// The Engine itself (engine.go) owns the resources, their busy tokens and
// the lock over them, Run's workers and the poll: fetch, extract, filter,
// store, decide.
//
// A resource's filter (config's filter, compiled once per definition into
// an [filter.Filter]) takes items out of the extracted document before
// anything else reads it: the relative dates, the article step (an item
// filtered out is never fetched), the comparison with the last version and
// the store, so filtered-out items are never stored, whichever front end
// found them. A filter is part of how a page is read ([sameExtraction],
// the state's extraction key): changing it makes the next poll fetch and
// extract the page again, and its version reflects the new filter even
// when the page's bytes are the same.
//
// Credentials in a resource's URL (https://user:pass@host/) never reach a
// log line or a status the poller writes: URLs and the errors of a poll go
// through [config.RedactURL] (redact.go).
//
// # Policies
//
// A [Policy] is a pure function of a [PolicyState] and an [Observation]: no
// I/O and no clock, so the simulator (poller/sim) runs the very same code.
// [Policy.Start] prepares the state (first τ) and [Policy.Observe] folds in a
// poll and returns the wait before the next one. Server hints are floors:
// Observation.Floor (Cache-Control max-age of a 200/304, Retry-After of a
// 429/503) is never undercut, up to [MaxHintFloor].
//
// flat waits its interval after every poll.
//
// smart is the Dynamo paper's single exponential smoothing,
// τ_{n+1} = α·τ_n + (1−α)·t_n, where t_n is the observed time between
// updates. The engine builds each [Observation] from the extracted document
// and what it remembers of the previous version (the ids of its first 500
// items, as 64-bit hashes, and its newest item date, persisted with the poll
// state): the publication dates of the items newer than that newest date
// (Dates), and how many items have ids the previous version lacked
// (NewItems). A changed poll that reveals k updates since the last reference
// time gives one t_n, their mean gap (newest − last reference) / k:
//
//   - with item dates (date/pubDate extensions, schema.Extensions.Published):
//     the newest new date is the reference and k the number of new dates;
//     a first page gives the mean gap between its own dates;
//   - else the reference is the page's newest date if it is newer (a channel
//     date), else the detection time, and k = NewItems, at least 1 (a
//     channel-only change, or no previous version known, gives the plain
//     interval between detections).
//
// One t_n per poll rather than one per update: the freshness simulator
// (BENCHMARKS.md, Freshness) measured feeding every gap (or every new id) as
// its own t_n up to 39 % worse in mean delay: single gaps of bursty pages are
// too noisy for the EWMA.
// A page that shows fewer items than were posted since the last poll
// undercounts k, so t_n is then an upper bound. The rules:
//
//   - First τ: Initial (a τ already learned, e.g. under flat or before a
//     restart, is kept). The first wait is τ clamped to [Min, Max]; a state
//     that was already smart (a restart, new smart parameters) keeps its
//     current wait, clamped to the new bounds.
//   - After a changed poll: τ is updated (once there is a reference to
//     measure from) and the wait is τ clamped to [Min, Max].
//   - After an unchanged or not-modified poll: τ stays (no update was seen),
//     the wait grows by [Growth] (×1.5), clamped to Max, so quiet nights and
//     weekends cost fewer polls. The simulator chose the factor: without
//     growth smart's mean delay is 1.4–1.8× that with ×1.5; ×1.25 and ×2 are
//     within a few per cent of ×1.5. There is no shrink: a changed poll waits τ.
//   - alpha: auto: α is re-tuned with [Tune] over the recent observed
//     intervals (the last [HistoryWindow] = 50) at every update once three
//     intervals are known; 0.5 before.
//
// flat records the same intervals (so a switch to smart starts from them) but
// leaves τ alone.
//
// budget (Sia & Cho 2007, advaRSS): the resources of kind budget share one
// [Budget] of poller.budget.polls_per_day (0: 24 per budget resource). Each
// learns a [RateState] at every poll — its posting rate λ and a 168-hour
// profile of the week (UTC), decayed with a 14-day time constant, from the
// new items' dates when the page dates them, else from the new-item count
// spread over the time since the last poll by the current profile — and gets
// c·√(weight·λ) polls a day, c one normaliser kept incrementally (members
// below one poll per max_interval are raised to it; members with less than a
// day of evidence get the mean share). A member places its polls with density
// ∝ √(profile) (the continuous form of Sia & Cho's equal-area rule), at least
// 10 minutes and at most max_interval apart. weight_readers multiplies the
// weight by [Readers] (Options.Readers). A new poller.budget re-places every
// budget resource at once. The rate survives restarts and policy switches in
// the poll state; flat and smart leave it alone.
//
// [Tune] chooses α ∈ [0,1] by golden-section search minimising the mean
// squared error of the one-step-ahead estimates ([SmoothingMSE]); `dynamo
// tune` uses the same code.
//
// # Fetching
//
// The engine fetches through one [fetch.Fetcher] for its life: one guarded
// http.Client (built again by [Engine.Apply] only when the fetch settings
// change), one robots.txt cache and one per-host politeness gate, shared
// by the polls, the renders, the articles and [Engine.FetchPage]; its
// clock is the engine's. What is the poller's is when: a poll asks the
// fetcher's robots.txt cache first (a disallowed URL ends in
// robots-denied, nothing fetched; robots.txt not cached is fetched in the
// host's slot), then takes the host's slot with [fetch.Fetcher.Reserve],
// which does not wait: a resource whose host is busy is requeued at the
// host's next slot instead of holding a worker (PollNow and FirstPoll
// wait instead). The page's validators (ETag, Last-Modified of its last
// 200) are kept in its poll state and sent back; a 304 is not extracted
// and writes nothing but the poll state. Cache-Control max-age and
// Retry-After come back as the next poll's floor. How a page is fetched
// (timeouts, max_redirects, max_body, the guard, the browser) is package
// fetch's documentation.
//
// # Relative dates
//
// A page's dates written relative to the poll's time ("2 hours ago") are
// read by the extractor against the poll's time; the text ages on the
// page while the date must not. When an extraction reports such dates
// (extractor.Result.RelativeDates), the engine reads the newest stored
// version and gives each such date of an item it already has (same id)
// the value stored at its first reading (dates.go), before the document
// is compared and saved: an ageing text neither moves the date nor makes a
// new version. Only pages with relative dates pay that read.
//
// fetch: browser: the page is rendered by the fetcher's browser instead of
// the GET, after the same robots.txt check and politeness slot; its browser
// ends with Run or [Engine.Close]. A render is never conditional: the DOM's
// hash tells an unchanged page.
//
// content: full (the article step, article.go): before a version is stored, its items that
// the newest stored version did not mark (dynamo:article, see
// [schema.ArticleNamespace]) get their link fetched, as a page is
// ([fetch.Fetcher.Article]: robots, politeness, guard, limits), at most
// poller.full_per_poll a poll, and their main text as content:encoded;
// marked ones carry their mark and article over, so nothing is fetched
// twice across polls, restarts and nodes. Nothing is fetched for a document with the
// stored version's content (it will not be stored).
//
// SSRF guard: every request dials through package fetch's [fetch.Dialer]
// (private, loopback and link-local addresses refused after DNS unless
// allow_private); see package fetch.
package poller
