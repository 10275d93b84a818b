package tail_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/tail"
)

// TestNewCredentials checks that New says "no AWS credentials found" only
// when the default chain finds none, and reports any other failure to get
// them (here a profile's credential_process that fails, as an expired SSO
// token or a refused AssumeRole would) as it is.
func TestNewCredentials(t *testing.T) {
	const arn = "arn:aws:kinesis:us-east-1:123456789012:stream/edge"
	for _, name := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ENDPOINT_URL"} {
		t.Setenv(name, "")
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "config")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_CONFIG_FILE", config)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")

	_, err := tail.New(t.Context(), tail.Config{ARN: arn})
	if !errors.Is(err, tail.ErrNoCredentials) {
		t.Fatalf("New with no credentials anywhere: %v, want ErrNoCredentials", err)
	}

	if err := os.WriteFile(config, []byte("[profile broken]\ncredential_process = /bin/false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_PROFILE", "broken")
	_, err = tail.New(t.Context(), tail.Config{ARN: arn})
	if err == nil || errors.Is(err, tail.ErrNoCredentials) || !strings.Contains(err.Error(), "loading AWS credentials") {
		t.Fatalf("New with a profile whose credential_process fails: %v, want the error as it is, not ErrNoCredentials", err)
	}
}
