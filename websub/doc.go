// Package websub is dynamo's WebSub hub (W3C Recommendation "WebSub", 23
// January 2018, https://www.w3.org/TR/websub/) for the feeds dynamo serves:
// readers subscribe to a feed URL at POST /websub and are pushed the feed
// whenever a new version of its resource changes it. Comments cite the
// Recommendation's sections (§).
//
// # Shape
//
// The hub knows nothing of feeds: a [Topics] (the api) says whether a URL is
// a feed of this service and renders its current body exactly as a GET
// would. Callbacks are called through an injected *http.Client, which cmd
// builds on the SSRF guard (fetch.NewGuardedClient), so a subscriber cannot make dynamo
// reach loopback, private or link-local addresses. Subscriptions and their
// pending deliveries live in a [Store] ([BadgerStore] on disk,
// [MemoryStore] for tests), so both survive restarts. Time comes from an
// injected [Clock].
//
// # Flow
//
//   - [Hub.Request] validates a subscription request (§5.1): hub.mode,
//     hub.topic (a feed of this service, any format and query), hub.callback
//     (absolute http(s), no fragment, no credentials), hub.lease_seconds (a
//     positive integer), hub.secret (less than 200 bytes). An invalid one is
//     refused at once (the api answers 4xx, §5.1.2); a valid one is queued
//     and answered 202, unless its callback host has had its share of
//     verification requests ([Options.CallbackEvery]: anyone may name any
//     public callback, and each request makes the hub send it a GET), in
//     which case it is refused with a [*LimitError] (the api answers 429).
//   - A worker verifies intent (§5.3): GET callback with hub.mode, hub.topic
//     (as the subscriber spelled it, not normalized), hub.challenge (random, single use) and, for subscribe,
//     hub.lease_seconds, appended to the callback's own query. Only a 2xx
//     whose body is exactly the challenge verifies (§5.3.1); redirects are
//     not followed and count as failures. Then the subscription is created or
//     renewed (lease measured from the verification request), or deleted for
//     unsubscribe; on failure nothing changes. Verification is tried once.
//     An unsubscribe from a topic that is no feed any more (its resource
//     was deleted) is accepted when its subscription is stored (until the
//     hub denies it, below).
//     The topic is checked again first: a subscription whose topic stopped
//     being a feed (its resource was deleted) after the request was accepted
//     is denied with a GET carrying hub.mode=denied, hub.topic and
//     hub.reason (§5.2), instead of being verified.
//   - [Hub.Notify](resource) (called when the store saves a new version)
//     never blocks: a goroutine renders every subscribed topic of that
//     resource, and of the list of resources, once each, and makes a
//     delivery pending for each subscription whose last delivered content
//     hashes differently. Workers POST the topic's current body (§7) with its
//     Content-Type, one Link header carrying rel="hub" and rel="self" (the
//     topic), and X-Hub-Signature: sha256=<hex HMAC> when the subscription
//     has a secret (§7.1). 2xx is success; 410 ends the subscription; any
//     other answer is retried with exponential backoff until
//     [Options.RetryFor] after the notification, then that notification is
//     given up (§7). A newer notification replaces a pending one (only the
//     latest content is ever sent) and restarts its window.
//   - A deleted resource (the notified resource's topics no longer render,
//     and [Topics.TopicResource] says [ErrTopicDeleted]): each subscription
//     to one of its topics is handed to a worker, which checks the topic
//     again (a resource registered again under the same id meanwhile keeps
//     its subscriptions), removes the subscription and sends the subscriber
//     a denial (§5.2: hub.mode=denied, hub.topic as it subscribed,
//     hub.reason), once. Until then its subscriber may still unsubscribe.
//     A deletion the hub missed (stopped, or the notification lost) is
//     found at its next start.
//   - Leases (§5.3.1, §8.2): default 10 days, bounds 1 hour to 30 days
//     (configurable); expired subscriptions are removed when met and by an
//     hourly sweep.
//
// # Choices where the Recommendation is silent
//
//   - Topic identity: the topic and callback URLs are normalized (percent-
//     encoded unreserved characters decoded as §5.1.1 requires, scheme and
//     host lower-cased); two spellings of one URL are one subscription. Query
//     order is significant: "?type=atom&max=5" and "?max=5&type=atom" are two
//     topics (both are feeds here).
//   - A new subscription does not receive the current content: only a change
//     after its verification began is delivered (one processed while the
//     subscriber was answering is delivered once the subscription is stored).
//   - A subscriber that keeps failing keeps its subscription until its lease
//     ends, as §7 requires, unless [Options.DropAfter] is set; a 410 ends it at
//     once.
//   - Several notifications may coalesce: each delivery carries the topic's
//     content at the time of the attempt.
//
// # Concurrency
//
// One goroutine processes notifications, one schedules due deliveries
// (bounded queue to a fixed set of workers), the workers make every callback
// request. All are owned by [Hub.Run] and stop when its context ends. A
// subscription is never delivered by two workers at once.
package websub
