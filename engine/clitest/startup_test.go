package clitest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/enginetest/kit"
)

// lines collects a process's stderr as it comes, so a test can wait for
// the line that says the process has reached a point.
type lines struct {
	mu   sync.Mutex
	all  strings.Builder
	more chan struct{} // closed, and replaced, when a line arrives or the output ends
	eof  bool
	done chan struct{} // closed when the output ends
}

// startWithStderr starts cmd and returns its stderr's lines and its exit.
func startWithStderr(t *testing.T, cmd *exec.Cmd) (*lines, chan error) {
	t.Helper()
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	l := &lines{more: make(chan struct{}), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			l.mu.Lock()
			l.all.WriteString(sc.Text() + "\n")
			close(l.more)
			l.more = make(chan struct{})
			l.mu.Unlock()
		}
		l.mu.Lock()
		l.eof = true
		close(l.more)
		l.mu.Unlock()
		close(l.done)
	}()
	exited := make(chan error, 1)
	go func() {
		<-l.done // Wait closes the pipe: read it to the end first
		exited <- cmd.Wait()
	}()
	return l, exited
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all.String()
}

// await returns once a line containing want has come; the output ending
// first fails the test (the deadline only keeps a broken build from hanging).
func (l *lines) await(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		l.mu.Lock()
		text, more, eof := l.all.String(), l.more, l.eof
		l.mu.Unlock()
		if strings.Contains(text, want) {
			return
		}
		if eof {
			t.Fatalf("output ended without %q:\n%s", want, text)
		}
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("no %q in a minute:\n%s", want, text)
		}
	}
}

// TestDaemonWaitsForACommand: a daemon that starts while a command holds the
// database waits for it instead of exiting 3, and a command that starts
// while the daemon waits, waits for the daemon's socket and acts through it.
// Each step waits for the other side to say it is waiting: no sleeps.
func TestDaemonWaitsForACommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.deployLines()

	// this test process is the command holding the database
	ctx := context.Background()
	db, err := engine.OpenDB(ctx, engine.DBOpts{Path: e.db})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	d := &daemonProc{cmd: e.command(ctx, "--daemon")}
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dlines, dexited := startWithStderr(t, d.cmd)
	defer func() { _ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL) }()
	dlines.await(t, fmt.Sprintf("waiting for a keep command (pid %d) to let go of", os.Getpid()))

	cmd := e.command(ctx, "workflows", "--json")
	var stdout strings.Builder
	cmd.Stdout = &stdout
	clines, cexited := startWithStderr(t, cmd)
	clines.await(t, fmt.Sprintf("waiting for the keep daemon (pid %d) starting on", d.cmd.Process.Pid))

	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := kit.Wait(t, cexited, time.Minute); err != nil {
		t.Fatalf("the command waiting for the daemon: %v\n%s", err, clines)
	}
	var wfs []api.WorkflowView
	if err := json.Unmarshal([]byte(stdout.String()), &wfs); err != nil || len(wfs) != 1 || wfs[0].Name != "lines" {
		t.Fatalf("workflows through the daemon that was starting: %v %q", err, stdout.String())
	}
	if strings.Contains(clines.String(), "no keep engine") {
		t.Errorf("the command ran the engine itself instead of going through the daemon:\n%s", clines)
	}

	d.exited = dexited
	awaitSocket(t, e, d, time.Minute)
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := kit.Wait(t, d.exited, time.Minute); err != nil {
		t.Fatalf("daemon exit after SIGTERM: %v", err)
	}
}

// TestDaemonAndCommandRace starts a command and a daemon at the same moment,
// again and again, in both orders: neither is ever refused.
func TestDaemonAndCommandRace(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.deployLines()
	wf := e.file(e.dir, "lines.js", filesWorkflow)

	const tries = 25
	for i := range tries {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		args := []string{"deploy", wf}
		if i%2 == 1 {
			args = []string{"workflows"}
		}
		cmd := e.command(ctx, args...)
		var cout, cerr strings.Builder
		cmd.Stdout, cmd.Stderr = &cout, &cerr
		d := &daemonProc{exited: make(chan error, 1)}
		d.cmd = e.command(ctx, "--daemon")
		d.cmd.Stdout, d.cmd.Stderr = &d.stdout, &d.errb
		d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		first, second := cmd, d.cmd
		if i%4 >= 2 {
			first, second = d.cmd, cmd
		}
		if err := first.Start(); err != nil {
			t.Fatal(err)
		}
		if err := second.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { d.exited <- d.cmd.Wait() }()
		if err := cmd.Wait(); err != nil {
			d.kill(t)
			t.Fatalf("try %d: keep %s beside a starting daemon: %v\nstdout: %s\nstderr: %s\ndaemon stderr: %s",
				i, strings.Join(args, " "), err, cout.String(), cerr.String(), d.errb.String())
		}
		awaitSocket(t, e, d, time.Minute)
		if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := kit.Wait(t, d.exited, time.Minute); err != nil {
			t.Fatalf("try %d: daemon beside keep %s: %v\nstderr: %s", i, strings.Join(args, " "), err, d.errb.String())
		}
		cancel()
	}
}
