package localapi

import (
	"embed"
	"net/http"
	"path"
)

// inspectorFiles are the inspector page and its script and style sheet:
// separate files, so that the page's Content-Security-Policy allows no
// inline script or style.
//
//go:embed inspector/index.html inspector/inspector.js inspector/inspector.css
var inspectorFiles embed.FS

// inspectorCSP is the inspector's Content-Security-Policy: its own
// script, style and API only. What it shows of captures is
// attacker-controlled; it inserts it as text.
const inspectorCSP = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; " +
	"frame-ancestors 'none'"

// inspectorPage answers GET / and GET /inspect/http.
func (s *Server) inspectorPage(w http.ResponseWriter, r *http.Request) {
	s.serveInspectorFile(w, r, "index.html", "text/html; charset=utf-8")
}

// inspectorAsset answers GET /static/{file}.
func (s *Server) inspectorAsset(w http.ResponseWriter, r *http.Request) {
	types := map[string]string{
		"inspector.js":  "text/javascript; charset=utf-8",
		"inspector.css": "text/css; charset=utf-8",
	}
	file := r.PathValue("file")
	contentType, ok := types[file]
	if !ok {
		writeError(w, http.StatusNotFound, CodeNotFound, "not found", "no route for "+r.URL.Path)
		return
	}
	s.serveInspectorFile(w, r, file, contentType)
}

func (s *Server) serveInspectorFile(w http.ResponseWriter, r *http.Request, name, contentType string) {
	body, err := inspectorFiles.ReadFile(path.Join("inspector", name))
	if err != nil {
		s.writeBackendError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Security-Policy", inspectorCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
