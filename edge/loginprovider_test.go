package edge

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestProvidersRefusePrivateAddresses: unless told, the edge does not
// reach an issuer on its own networks, whoever wrote the issuer URL; and
// it reads at most maxProviderBody of a provider's answer.
func TestProvidersRefusePrivateAddresses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"issuer": "` + strings.Repeat("x", 2*maxProviderBody) + `"}`))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	issuer := "http://" + ln.Addr().String()

	_, err = newProviders(time.Now, false).get(t.Context(), issuer)
	if !errors.Is(err, errPrivateAddress) {
		t.Fatalf("discovering %s on loopback: %v, want errPrivateAddress", issuer, err)
	}
	_, err = newProviders(time.Now, true).get(t.Context(), issuer)
	if err == nil || errors.Is(err, errPrivateAddress) || !strings.Contains(err.Error(), "decode") {
		t.Fatalf("discovering a provider answering 2 MiB: %v, want its answer cut and refused", err)
	}
}
