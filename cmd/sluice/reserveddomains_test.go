package main

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/check"
)

// TestReservedDomainsCommands runs every verb of `sluice reserved-domains`
// against the API.
func TestReservedDomainsCommands(t *testing.T) {
	e := newCLIEnv(t)
	out := e.must("reserved-domains", "create", "--domain", "*.Sub.Example.com", "--certificate-key-type", "rsa", "--region", "eu")
	id := field(out, "ID")
	if !strings.HasPrefix(id, "rd_") || field(out, "DOMAIN") != "*.sub.example.com" || field(out, "CERTIFICATE_KEY_TYPE") != "rsa" ||
		field(out, "REGION") != "eu" || !strings.Contains(field(out, "PROVISIONING"), "in progress") || field(out, "ACME_CHALLENGE_CNAME_TARGET") == "" {
		t.Fatalf("create printed:\n%s", out)
	}
	if quiet := e.must("reserved-domains", "create", "--domain", "app.example.com", "-q"); !strings.HasPrefix(quiet, "rd_") {
		t.Errorf("create -q printed %q", quiet)
	}
	rows := tableRows(t, e.must("reserved-domains", "list"), "ID", "CREATED_AT", "DOMAIN", "CNAME_TARGET", "DESCRIPTION")
	if len(rows) != 2 || rows[1][0] != id || rows[1][2] != "*.sub.example.com" || !strings.HasSuffix(rows[1][3], ".cname.sluice.app") {
		t.Errorf("list: %v", rows)
	}
	if updated := e.mustJSON("reserved-domains", "update", id, "--description", "prod"); updated["description"] != "prod" || updated["domain"] != "*.sub.example.com" {
		t.Errorf("update --description printed %v", updated)
	}
	_, errOut, err := e.run("reserved-domains", "delete-certificate-policy", id)
	check.ErrorContains(t, err, "")
	if errOut != "stopped managing the certificate of "+id+"\n" {
		t.Errorf("delete-certificate-policy printed %q", errOut)
	}
	if got := e.mustJSON("reserved-domains", "get", id); got["certificate_management_policy"] != nil {
		t.Errorf("get after delete-certificate-policy: %v", got)
	}

	_, _, err = e.run("reserved-domains", "create", "--domain", "*.SUB.example.com")
	check.ErrorContains(t, err, "(409): ")
	_, _, err = e.run("reserved-domains", "create", "--domain", "*.co.uk")
	check.ErrorContains(t, err, "public suffix")
	_, _, err = e.run("reserved-domains", "update", id, "--domain", "x.example.com")
	check.ErrorContains(t, err, "unknown flag: --domain")
	_, _, err = e.run("reserved-domains", "update", id)
	check.ErrorContains(t, err, "--description, --metadata, --region or --certificate-key-type")

	_, errOut, err = e.run("reserved-domains", "delete", id)
	check.ErrorContains(t, err, "")
	if errOut != "deleted "+id+"\n" {
		t.Errorf("delete printed %q on stderr", errOut)
	}
	_, _, err = e.run("reserved-domains", "get", id)
	check.ErrorContains(t, err, "(404): ")
}

// TestServiceDomainsFlag lower-cases --service-domains and refuses a
// value that is not a plain fully qualified name.
func TestServiceDomainsFlag(t *testing.T) {
	f := domainFlags{serviceDomains: []string{"Sluice.APP", "edge.example.com"}}
	if err := f.validate(); err != nil || f.serviceDomains[0] != "sluice.app" {
		t.Fatalf("validate: %v, %v", err, f.serviceDomains)
	}
	for _, bad := range []string{"*.sluice.app", "localhost", "a_b.example.com", "127.0.0.1"} {
		f := domainFlags{serviceDomains: []string{bad}}
		check.ErrorContains(t, f.validate(), "--service-domains")
	}
	out, _, err := runSluice(t, "", "serve", "--help")
	if err != nil || !strings.Contains(out, "--service-domains") || !strings.Contains(out, "sluice.app") || !strings.Contains(out, "--max-reserved-domains") {
		t.Fatalf("serve --help: %v\n%s", err, out)
	}
}
