package acme

import (
	"fmt"
	"slices"
	"time"
)

// A name under the service domain is ordered with no proof from its
// tenant: signing up is enough to reserve *.a1.<service domain>, which
// gets its policy on creation, and deleting and reserving it again
// orders again. All orders go through sluice's one ACME account, whose
// limits at Let's Encrypt (300 new orders an account in any 3 hours; 50
// certificates a registered domain a week, which the service domain is
// unless it is on the Public Suffix List) are every tenant's: a stranger
// spending them would stop the custom domains' certificates and the
// renewals of all. So the orders of names under the service domain,
// renewals included, have a budget: Config.ServiceDomainOrders in any
// orderWindow for all accounts, and accountOrders for each. Custom
// domains need the tenant's CNAME, and agent ingresses their NS records,
// before an order: they are not counted.
//
// The budget is the lease holder's, in memory: a process that takes the
// lease starts with it whole, so that a takeover may let up to twice the
// budget be spent in a window. Takeovers are rare (a holder that stops
// for minutes), and Let's Encrypt's limit is three times the default.

// orderWindow is the window of the budget: Let's Encrypt's of its limit
// of new orders an account.
const orderWindow = 3 * time.Hour

// accountOrders is how many orders the names under the service domain
// of one account may have in any orderWindow.
const accountOrders = 5

// orderBudget is the budget of the orders of names under the service
// domain. It decides, and knows no timer nor clock: the tick asks it, with the
// Manager's clock, before each job that would order, and the job takes
// its slot just before ordering. It holds at most total orders.
type orderBudget struct {
	total, perAccount int
	window            time.Duration
	placed            []placedOrder // in the window, oldest first
}

// placedOrder is an order counted in the budget.
type placedOrder struct {
	at      time.Time
	account string
}

func newOrderBudget(total int) *orderBudget {
	return &orderBudget{total: total, perAccount: accountOrders, window: orderWindow}
}

// check returns nil if the account may order at now, or a *budgetError
// saying when it may.
func (b *orderBudget) check(account string, now time.Time) *budgetError {
	b.forget(now)
	var full budgetError
	if len(b.placed) >= b.total {
		// A slot frees when the order total places back leaves the
		// window, and with it every order before.
		full.Service, full.Next = true, b.placed[len(b.placed)-b.total].at.Add(b.window)
	}
	var own []time.Time
	for _, o := range b.placed {
		if o.account == account {
			own = append(own, o.at)
		}
	}
	if len(own) >= b.perAccount {
		full.Account = true
		if next := own[len(own)-b.perAccount].Add(b.window); next.After(full.Next) {
			full.Next = next
		}
	}
	if !full.Service && !full.Account {
		return nil
	}
	full.Total, full.PerAccount, full.Window = b.total, b.perAccount, b.window
	return &full
}

// take counts an order of the account at now, or returns check's error.
func (b *orderBudget) take(account string, now time.Time) *budgetError {
	if full := b.check(account, now); full != nil {
		return full
	}
	b.placed = append(b.placed, placedOrder{at: now, account: account})
	return nil
}

// forget drops the orders that have left the window at now.
func (b *orderBudget) forget(now time.Time) {
	gone := 0
	for gone < len(b.placed) && !b.placed[gone].at.Add(b.window).After(now) {
		gone++
	}
	b.placed = slices.Delete(b.placed, 0, gone)
}

// budgetError is an order the budget refuses for now: the job waits, in
// progress, and is tried again once Next has come.
type budgetError struct {
	// Service is set when the budget of all accounts is spent, Account
	// when the account's is.
	Service, Account  bool
	Total, PerAccount int
	Window            time.Duration
	Next              time.Time
}

func (e *budgetError) Error() string {
	spent := fmt.Sprintf("the %d orders of all its tenants in any %s are placed", e.Total, hours(e.Window))
	if e.Account {
		spent = fmt.Sprintf("your account's %d orders in any %s are placed", e.PerAccount, hours(e.Window))
	}
	return fmt.Sprintf("certificate provisioning is in progress: waiting for the service's budget of certificate orders for names under its domain, which keeps the certificate authority's rate limits for every tenant: %s; tried again at %s",
		spent, e.Next.UTC().Format(time.RFC3339))
}

// hours is a window such as 3 hours, for messages.
func hours(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%d hours", d/time.Hour)
	}
	return d.String()
}
