package benchmark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"keep/engine"
	"keep/engine/daemon"
)

// keepDaemon is the keep binary running as a daemon on a database of its
// own, as a person runs keep: its own process, with main.go's GC settings
// and its script workers as its children, measured by its pid the way
// Node-RED's process is (round.go). The bench talks to it only through its
// socket.
type keepDaemon struct {
	cmd    *exec.Cmd
	pid    int
	dir    string
	db     string
	out    string // its stdout and stderr
	exited chan error
	done   bool // exited has been received from
	client *daemon.Client
}

// daemonConfig is a config rooted in dir's root folder: the files
// connector's root, mutations allowed without asking, http allowed to
// 127.0.0.1 (the sinks in this process).
func daemonConfig(dir, root string) (string, error) {
	path := filepath.Join(dir, "config.toml")
	text := fmt.Sprintf("[policy]\ndefault_mutation_mode = %q\n\n[connectors.files]\nroots = [%q]\n\n[connectors.http]\nallow_hosts = [\"127.0.0.1\"]\n",
		engine.GrantAllow, root)
	return path, os.WriteFile(path, []byte(text), 0o600)
}

// startDaemon starts bin as a daemon on db with the config at cfg, in an
// environment that points at nothing of the user's, and returns once it
// answers on its socket.
func startDaemon(ctx context.Context, bin, dir, db, cfg string) (*keepDaemon, error) {
	if bin == "" {
		return nil, errors.New("no keep binary to run as a daemon (Options.DaemonBinary)")
	}
	out := filepath.Join(dir, "daemon.out")
	f, err := os.Create(out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(bin, "--db", db, "--config", cfg, "--daemon")
	cmd.Env = isolatedEnv(dir)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &keepDaemon{cmd: cmd, pid: cmd.Process.Pid, dir: dir, db: db, out: out, exited: make(chan error, 1)}
	go func() { d.exited <- cmd.Wait() }()
	sock := daemon.SocketPath(db)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			if c, err := daemon.Dial(sock); err == nil {
				d.client = c
				return d, nil
			}
		}
		select {
		case err := <-d.exited:
			d.done = true
			return nil, fmt.Errorf("the keep daemon exited early: %v: %s", err, d.why())
		case <-ctx.Done():
			d.kill()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			d.kill()
			return nil, fmt.Errorf("the keep daemon did not answer on %s within 30s: %s", sock, d.why())
		}
	}
}

// failed is nil while the daemon runs and nothing in it asks for a person:
// otherwise what went wrong, its attention items or its exit, with its
// output and log. A run that fails shows as a failed_run (or a blocked
// workflow) among them.
func (d *keepDaemon) failed(ctx context.Context) error {
	select {
	case err := <-d.exited:
		d.done = true
		return fmt.Errorf("the keep daemon exited: %v: %s", err, d.why())
	default:
	}
	items, err := d.client.Attention(ctx)
	if err != nil {
		return fmt.Errorf("the keep daemon's attention list: %w: %s", err, d.why())
	}
	if len(items) == 0 {
		return nil
	}
	var b strings.Builder
	for _, it := range items[:min(len(items), 5)] {
		fmt.Fprintf(&b, "; %s %s %s: %s", it.Kind, it.Workflow, it.Title, it.Reason)
	}
	return fmt.Errorf("the keep daemon has %d item(s) for a person%s", len(items), b.String())
}

// stop ends the daemon with SIGTERM, as a service manager does, and waits
// for it: the runs under way commit first.
func (d *keepDaemon) stop() error {
	if d.done {
		return nil
	}
	d.client.Close()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-d.exited:
		d.done = true
		if err != nil {
			return fmt.Errorf("the keep daemon's exit after SIGTERM: %v: %s", err, d.why())
		}
		return nil
	case <-time.After(60 * time.Second):
		d.kill()
		return errors.New("the keep daemon did not exit within 60s of SIGTERM")
	}
}

// kill ends the daemon at once, if it still runs.
func (d *keepDaemon) kill() {
	if d.done {
		return
	}
	if d.client != nil {
		d.client.Close()
	}
	d.cmd.Process.Kill()
	<-d.exited
	d.done = true
}

// why is the daemon's output and the end of its log, for an error.
func (d *keepDaemon) why() string {
	out, _ := os.ReadFile(d.out)
	log, _ := os.ReadFile(filepath.Join(filepath.Dir(d.db), "keep.log"))
	if len(log) > 2000 {
		log = log[len(log)-2000:]
	}
	return fmt.Sprintf("output %q, keep.log %q", strings.TrimSpace(string(out)), strings.TrimSpace(string(log)))
}
