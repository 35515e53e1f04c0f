package examples

import "time"

// seedNow is the tracker's clock at start: a Monday morning, twenty minutes
// into an incident.
var seedNow = time.Date(2026, time.March, 2, 9, 0, 0, 0, time.UTC)

// seedIssues is the checkout team's backlog on that morning: a live incident
// reported twice, a few ordinary bugs, a feature, chores, and three closed
// incidents that an investigation can learn from.
func seedIssues() []Issue {
	return []Issue{
		{ID: "CHK-101", Title: "Card payments time out at checkout for EU customers", State: "open", Priority: 1,
			Labels: []string{"incident", "payments"}, Updated: "2026-03-02T08:50:00Z"},
		{ID: "CHK-102", Title: "Gateway latency alarm fires every night at 02:00", State: "open", Priority: 2,
			Labels: []string{"alerting", "payments"}, Assignee: "priya", Updated: "2026-03-01T02:14:00Z"},
		{ID: "CHK-103", Title: "Refund button does nothing on Safari", State: "open", Priority: 2,
			Labels: []string{"bug", "frontend"}, Updated: "2026-03-01T17:05:00Z"},
		{ID: "CHK-104", Title: "Checkout timeouts after deploy 2026.03.1", State: "open", Priority: 1,
			Labels: []string{"incident", "payments"}, Updated: "2026-03-02T08:55:00Z"},
		{ID: "CHK-105", Title: "Typo in the order confirmation email", State: "open", Priority: 4,
			Labels: []string{"bug", "email"}, Updated: "2026-02-27T10:12:00Z"},
		{ID: "CHK-106", Title: "Add Apple Pay to mobile checkout", State: "open", Priority: 3,
			Labels: []string{"feature", "mobile"}, Assignee: "marco", Updated: "2026-02-25T15:40:00Z"},
		{ID: "CHK-107", Title: "Retry storm against the card gateway during partner outage", State: "closed", Priority: 1,
			Labels: []string{"incident", "payments"}, Assignee: "priya", Updated: "2026-02-11T09:30:00Z"},
		{ID: "CHK-108", Title: "JPY amounts rounded off by one yen", State: "in_progress", Priority: 2,
			Labels: []string{"bug", "payments"}, Assignee: "lena", Updated: "2026-02-28T13:25:00Z"},
		{ID: "CHK-109", Title: "Flaky test: TestCaptureIdempotency", State: "open", Priority: 3,
			Labels: []string{"ci", "payments"}, Updated: "2026-02-26T16:03:00Z"},
		{ID: "CHK-110", Title: "Checkout page blank when the coupon service is down", State: "closed", Priority: 1,
			Labels: []string{"incident", "frontend"}, Assignee: "marco", Updated: "2026-01-20T18:45:00Z"},
		{ID: "CHK-111", Title: "Document the on-call handover", State: "open", Priority: 4,
			Labels: []string{"docs"}, Assignee: "lena", Updated: "2026-02-20T09:00:00Z"},
		{ID: "CHK-112", Title: "Connection pool exhausted on payments-db", State: "closed", Priority: 2,
			Labels: []string{"incident", "payments"}, Assignee: "priya", Updated: "2026-02-12T11:00:00Z"},
	}
}

// seedComments are the comments on that morning, oldest first.
func seedComments() []Comment {
	return []Comment{
		{ID: "C-1", IssueID: "CHK-110", Author: "marco", Created: "2026-01-20T17:10:00Z",
			Body: "The coupon service timed out and the checkout page rendered nothing instead of skipping coupons."},
		{ID: "C-2", IssueID: "CHK-110", Author: "marco", Created: "2026-01-20T18:45:00Z",
			Body: "Fixed: checkout renders without coupons when the coupon service is slow (PR 4102). Closing."},
		{ID: "C-3", IssueID: "CHK-107", Author: "priya", Created: "2026-02-10T14:02:00Z",
			Body: "The partner gateway returned 503s; our client retried at once, without backoff, and tripped their rate limit."},
		{ID: "C-4", IssueID: "CHK-107", Author: "priya", Created: "2026-02-11T09:30:00Z",
			Body: "Fixed: exponential backoff with jitter on gateway retries, at most 3 attempts (PR 4411). Closing."},
		{ID: "C-5", IssueID: "CHK-112", Author: "lena", Created: "2026-02-12T11:00:00Z",
			Body: "The pool of 20 was too small once the worker count doubled; raised it to 60 and added an alert at 80% use."},
		{ID: "C-6", IssueID: "CHK-109", Author: "ci-bot", Created: "2026-02-26T16:03:00Z",
			Body: "Failed 3 of the last 50 runs on main, each time on the second capture attempt."},
		{ID: "C-7", IssueID: "CHK-103", Author: "support-bot", Created: "2026-03-01T17:05:00Z",
			Body: "A customer on Safari 17 says the refund button shows a spinner and then nothing happens; the same order refunds fine in Chrome."},
		{ID: "C-8", IssueID: "CHK-101", Author: "support-bot", Created: "2026-03-02T08:41:00Z",
			Body: "Three merchants in Germany and France report card payments hanging for about 30 seconds and then failing, since about 08:20 UTC."},
		{ID: "C-9", IssueID: "CHK-101", Author: "priya", Created: "2026-03-02T08:50:00Z",
			Body: "Gateway p99 latency went from 300 ms to 28 s at 08:17, the minute deploy 2026.03.1 reached eu-west."},
		{ID: "C-10", IssueID: "CHK-104", Author: "marco", Created: "2026-03-02T08:55:00Z",
			Body: "Synthetic checkouts time out on the confirm call since the 2026.03.1 deploy. Possibly the same as the EU report."},
	}
}
