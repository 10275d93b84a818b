package main

import (
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/internal/api"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
)

func TestLimitFlagsValidate(t *testing.T) {
	tests := []struct {
		name    string
		f       limitFlags
		wantErr string
	}{
		{name: "defaults", f: limitFlags{maxInFlight: 64, minBodyRate: "1KiB"}},
		{name: "sizes", f: limitFlags{maxBytesInFlight: "64MiB", maxAccountBytesInFlight: "16MiB", minBodyRate: "512B"}},
		{name: "negative destinations", f: limitFlags{destinations: -1}, wantErr: "--max-destinations -1 is negative"},
		{name: "negative account share", f: limitFlags{maxAccountInFlight: -4}, wantErr: "--max-account-in-flight -4 is negative"},
		{name: "negative management share", f: limitFlags{maxAccountManagement: -1}, wantErr: "--max-account-management-in-flight -1 is negative"},
		{name: "bytes not a size", f: limitFlags{maxBytesInFlight: "lots"}, wantErr: `--max-bytes-in-flight "lots": give a size such as 512MiB`},
		{name: "write rate unbounded", f: limitFlags{accountWriteRate: -1}},
		{name: "write rate negative", f: limitFlags{accountWriteRate: -2}, wantErr: "--account-write-rate -2 is negative"},
		{name: "negative write burst", f: limitFlags{accountWriteBurst: -1}, wantErr: "--account-write-burst -1 is negative"},
		{name: "rate not a size", f: limitFlags{minBodyRate: "1KiB/s"}, wantErr: `--min-body-rate "1KiB/s"`},
		{name: "routes at their most", f: limitFlags{httpsEdgeRoutes: 450}},
		{name: "routes past one batch", f: limitFlags{httpsEdgeRoutes: 451}, wantErr: "--max-https-edge-routes 451 is over 450"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if errs := tt.f.validate(); len(errs) > 0 {
				err = errs[0]
			}
			check.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// TestBytesInFlightFromMemoryLimit: the budget of body bytes in flight is
// half the memory limit over 4 bytes of memory per body byte; without a
// limit, the API's default.
func TestBytesInFlightFromMemoryLimit(t *testing.T) {
	if got, _ := bytesInFlightFor(460 << 20); got != 460<<20/8 {
		t.Fatalf("budget for 460 MiB: %d, want %d", got, 460<<20/8)
	}
	if got, _ := bytesInFlightFor(math.MaxInt64); got != apiconv.DefaultMaxBytesInFlight {
		t.Fatalf("budget without a limit: %d, want %d", got, apiconv.DefaultMaxBytesInFlight)
	}
	f := limitFlags{maxInFlight: 10, maxBytesInFlight: "32MiB", minBodyRate: "2KiB", destinations: 3, apiKeys: 7}
	cfg := f.apiConfig(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if cfg.MaxInFlight != 10 || cfg.MaxBytesInFlight != 32<<20 || cfg.MinBodyRate != 2<<10 {
		t.Fatalf("api config %+v", cfg)
	}
	if l := f.storeLimits(); l != (store.Limits{Destinations: 3, APIKeys: 7}) {
		t.Fatalf("store limits %+v", l)
	}
}

// TestManagementShareFlag: --max-account-management-in-flight, or
// SLUICE_MAX_ACCOUNT_MANAGEMENT_IN_FLIGHT, sets the API's share of
// management requests of one account, by default the API's default.
func TestManagementShareFlag(t *testing.T) {
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	parse := func(t *testing.T, args ...string) api.Config {
		t.Helper()
		var f limitFlags
		fl := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		f.register(fl)
		if err := fl.Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := flagsFromEnv(fl); err != nil {
			t.Fatal(err)
		}
		return f.apiConfig(discard)
	}
	if cfg := parse(t); cfg.MaxAccountManagementInFlight != apiconv.DefaultMaxAccountManagementInFlight {
		t.Fatalf("default share: %d, want %d", cfg.MaxAccountManagementInFlight, apiconv.DefaultMaxAccountManagementInFlight)
	}
	if cfg := parse(t, "--max-account-management-in-flight", "3"); cfg.MaxAccountManagementInFlight != 3 {
		t.Fatalf("share from the flag: %d, want 3", cfg.MaxAccountManagementInFlight)
	}
	t.Setenv("SLUICE_MAX_ACCOUNT_MANAGEMENT_IN_FLIGHT", "5")
	if cfg := parse(t); cfg.MaxAccountManagementInFlight != 5 {
		t.Fatalf("share from the environment: %d, want 5", cfg.MaxAccountManagementInFlight)
	}
}

// TestBotUsersLimitFlag: --max-bot-users, or SLUICE_MAX_BOT_USERS, sets the
// store's limit of bot users per account, by default the store's default;
// a negative one is refused.
func TestBotUsersLimitFlag(t *testing.T) {
	parse := func(t *testing.T, args ...string) limitFlags {
		t.Helper()
		var f limitFlags
		fl := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		f.register(fl)
		if err := fl.Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := flagsFromEnv(fl); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if l := parse(t).storeLimits(); l.BotUsers != store.DefaultMaxBotUsers {
		t.Fatalf("default limit: %d, want %d", l.BotUsers, store.DefaultMaxBotUsers)
	}
	if l := parse(t, "--max-bot-users", "3").storeLimits(); l.BotUsers != 3 {
		t.Fatalf("limit from the flag: %d, want 3", l.BotUsers)
	}
	errs := parse(t, "--max-bot-users", "-1").validate()
	if len(errs) != 1 {
		t.Fatalf("--max-bot-users -1: errors %v, want one", errs)
	}
	check.ErrorContains(t, errs[0], "--max-bot-users -1 is negative")
	t.Setenv("SLUICE_MAX_BOT_USERS", "5")
	if l := parse(t).storeLimits(); l.BotUsers != 5 {
		t.Fatalf("limit from the environment: %d, want 5", l.BotUsers)
	}
}

// TestServeBotUsers: serve's API role serves /bot_users from its store,
// with the limit of --max-bot-users.
func TestServeBotUsers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sluice serve")
	}
	clearSluiceEnv(t)
	const token = "sk_test_bot_users_token_0123456789"
	t.Setenv(bootstrapKeyEnv, token)
	p := startServeInProcess(t, "--roles", "api", "--nats-listen", "127.0.0.1:0", "--max-bot-users", "1")
	if code, body := request(t, http.MethodPost, p.url+"/bot_users", token, `{"name":"deploy"}`); code != http.StatusCreated || !strings.Contains(body, `"uri":"`+p.url+`/bot_users/bot_`) {
		t.Fatalf("creating a bot user: %d %s", code, body)
	}
	if code, body := request(t, http.MethodPost, p.url+"/bot_users", token, `{"name":"ci"}`); code != http.StatusConflict || !strings.Contains(body, "ERR_SLUICE_445") {
		t.Fatalf("a bot user past --max-bot-users 1: %d %s, want 409 ERR_SLUICE_445", code, body)
	}
}

// TestRoutesLimitFlag: --max-routes sets the store's limit of routes, by
// default store.DefaultMaxRoutes.
func TestRoutesLimitFlag(t *testing.T) {
	parse := func(t *testing.T, args ...string) limitFlags {
		t.Helper()
		var f limitFlags
		fl := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		f.register(fl)
		if err := fl.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if l := parse(t).storeLimits(); l.Routes != store.DefaultMaxRoutes {
		t.Fatalf("default limit: %d, want %d", l.Routes, store.DefaultMaxRoutes)
	}
	if l := parse(t, "--max-routes", "7").storeLimits(); l.Routes != 7 {
		t.Fatalf("limit from the flag: %d, want 7", l.Routes)
	}
	if errs := parse(t, "--max-routes", "-1").validate(); len(errs) != 1 {
		t.Fatalf("--max-routes -1: errors %v, want one", errs)
	}
}
