package main

// state says whether the process is running or how it exited, for the
// failure messages of the tests that drive it.
func (p *attackServe) state() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.gone:
		return "running"
	case p.exit == nil:
		return "exited with status 0"
	}
	return "exited: " + p.exit.Error()
}
