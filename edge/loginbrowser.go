package edge

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode"

	"github.com/mssola/useragent"
	"github.com/oschwald/maxminddb-golang/v2"

	"github.com/sluicehq/sluice/internal/store"
)

// GeoIP locates clients' addresses in a MaxMind database (GeoIP2 or
// GeoLite2 City or Country, or any database of the same shape), for the
// browser sessions of logins. It is safe for concurrent use.
type GeoIP struct {
	db *maxminddb.Reader
}

// OpenGeoIP opens the MaxMind database at path (serve --edge-geoip).
func OpenGeoIP(path string) (*GeoIP, error) {
	db, err := maxminddb.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the GeoIP database %s: %w", path, err)
	}
	return &GeoIP{db: db}, nil
}

// Close releases the database.
func (g *GeoIP) Close() error { return g.db.Close() }

// geoRecord is what the edge reads of a database's record.
type geoRecord struct {
	Country struct {
		ISOCode string `maxminddb:"iso_code"`
	} `maxminddb:"country"`
	RegisteredCountry struct {
		ISOCode string `maxminddb:"iso_code"`
	} `maxminddb:"registered_country"`
	Location struct {
		Latitude       float64 `maxminddb:"latitude"`
		Longitude      float64 `maxminddb:"longitude"`
		AccuracyRadius uint64  `maxminddb:"accuracy_radius"`
	} `maxminddb:"location"`
}

// locate returns where addr is, zero when the database does not know or
// g is nil.
func (g *GeoIP) locate(addr netip.Addr) store.Location {
	if g == nil {
		return store.Location{}
	}
	var rec geoRecord
	if err := g.db.Lookup(addr.Unmap()).Decode(&rec); err != nil {
		return store.Location{}
	}
	loc := store.Location{
		CountryCode:     strings.ToUpper(rec.Country.ISOCode),
		Latitude:        rec.Location.Latitude,
		Longitude:       rec.Location.Longitude,
		LatLongRadiusKm: min(rec.Location.AccuracyRadius, store.MaxLocationRadiusKm),
	}
	if loc.CountryCode == "" {
		loc.CountryCode = strings.ToUpper(rec.RegisteredCountry.ISOCode)
	}
	if len(loc.CountryCode) != 2 || loc.Latitude < -90 || loc.Latitude > 90 || loc.Longitude < -180 || loc.Longitude > 180 {
		return store.Location{} // a database of another shape: nothing rather than nonsense
	}
	return loc
}

// Device types of a browser session.
const (
	deviceDesktop = "desktop"
	deviceMobile  = "mobile"
	deviceTablet  = "tablet"
	deviceBot     = "bot"
)

// parseUserAgent returns what the edge makes of a User-Agent header, each
// field within the store's bounds (the raw header cut to
// store.MaxUserAgent bytes).
func parseUserAgent(raw string) store.UserAgent {
	raw = plainText(raw, store.MaxUserAgent)
	if raw == "" {
		return store.UserAgent{}
	}
	ua := useragent.New(raw)
	name, version := ua.Browser()
	os := ua.OSInfo()
	device := deviceDesktop
	switch model := strings.ToLower(ua.Model()); {
	case ua.Bot():
		device = deviceBot
	case strings.Contains(model, "ipad") || strings.Contains(strings.ToLower(raw), "tablet") ||
		os.Name == "Android" && !strings.Contains(raw, "Mobile"):
		device = deviceTablet
	case ua.Mobile():
		device = deviceMobile
	}
	if os.Name == "iPhone OS" || os.Name == "OS" && strings.Contains(raw, "like Mac OS X") {
		// The parser names iOS by the words of the header: "CPU iPhone
		// OS 17_5", "CPU OS 17_5" (an iPad).
		os.Name = "iOS"
	}
	return store.UserAgent{
		Raw:            raw,
		BrowserName:    plainText(name, store.MaxUserAgentPart),
		BrowserVersion: plainText(version, store.MaxUserAgentPart),
		DeviceType:     device,
		OSName:         plainText(os.Name, store.MaxUserAgentPart),
		OSVersion:      plainText(os.Version, store.MaxUserAgentPart),
	}
}

// plainText returns s without control characters and invalid UTF-8, cut
// to at most n bytes.
func plainText(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	return clip(s, n)
}

// browserSession returns the browser session of a request from addr
// (its client's address) with its User-Agent.
func (g *GeoIP) browserSession(addr netip.Addr, userAgent string) store.BrowserSession {
	return store.BrowserSession{
		UserAgent: parseUserAgent(userAgent),
		IPAddress: addr.Unmap().String(),
		Location:  g.locate(addr),
	}
}
