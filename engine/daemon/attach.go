package daemon

// SocketPath is where the daemon holding dbPath listens: next to the
// database, so whoever can find the database finds its daemon, and one
// socket belongs to one database.
func SocketPath(dbPath string) string { return dbPath + ".sock" }

// Attach returns a client of the daemon holding dbPath, if one answers on
// its socket. false (no socket file, a stale one, a daemon that does not
// answer) means the caller may open the database itself; the database lock
// still refuses it if a daemon holds the file without answering.
func Attach(dbPath string) (*Client, bool) {
	c, err := Dial(SocketPath(dbPath))
	if err != nil {
		return nil, false
	}
	return c, true
}
