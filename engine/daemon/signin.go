package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"keep/engine"
	"keep/engine/api"
)

// SignInOpts is how keep auth login talks to the person.
type SignInOpts struct {
	Out        io.Writer
	ReadSecret func(prompt string) (string, error)
	Device     bool // the device flow, for a machine without a browser
	// Force keeps a new secret the service refuses over a stored one that
	// works, or a sign-in as another user than the account's
	Force bool
}

// SignIn is keep auth login NAME: it asks for the secret (or runs the
// account's flow), checks it as keep auth test does before it says
// "signed in", and says which workflows that waited for the account
// resumed, on the running keep or on an engine of its own.
func (s *Site) SignIn(ctx context.Context, name string, o SignInOpts) error {
	accts, err := s.Accounts()
	if err != nil {
		return err
	}
	// what waits on a running keep is read (and its news listened to)
	// before the sign-in, so the answer says what did resume
	apiHost, attached := s.Attach()
	var waiting []string
	var news <-chan api.Notification
	if attached {
		wfs, err := apiHost.Workflows(ctx)
		if err != nil {
			return err
		}
		if waiting = engine.WaitingOn(wfs, name); len(waiting) > 0 {
			ch, cancel := apiHost.Subscribe()
			defer cancel()
			news = ch
		}
	}
	restore, had, err := accts.Saved(name)
	if err != nil {
		return err
	}
	if err := accts.Login(ctx, name, engine.LoginOpts{Out: o.Out, ReadSecret: o.ReadSecret, Device: o.Device, Force: o.Force}); err != nil {
		return err
	}
	if err := s.checkSignIn(ctx, o.Out, name, restore, had, o.Force); err != nil {
		return err
	}
	if attached {
		return awaitResumed(ctx, o.Out, apiHost, name, waiting, news)
	}
	return s.afterSignIn(ctx, o.Out, name)
}

// checkSignIn checks a secret keep auth login just stored, as keep auth
// test does, before saying "signed in": a secret the service refuses is
// said so; it does not replace a stored one that works (restore puts that
// back) unless force. Where nothing can check it, it says "stored, not
// checked".
func (s *Site) checkSignIn(ctx context.Context, out io.Writer, name string, restore func() error, had, force bool) error {
	accts, err := s.Accounts()
	if err != nil {
		return err
	}
	reg, cfg, err := s.Registry()
	if err != nil {
		return err
	}
	checked, err := engine.TestAccount(ctx, cfg, reg, accts, name)
	if err == nil {
		if len(checked) == 1 && strings.Contains(checked[0], "nothing logged in") {
			fmt.Fprintf(out, "stored, not checked: %s (secrets in %s)\n", checked[0], accts.Path())
			return nil
		}
		for _, line := range checked {
			fmt.Fprintf(out, "%s: %s\n", name, line)
		}
		fmt.Fprintf(out, "signed in to %s (checked; secrets in %s)\n", name, accts.Path())
		return nil
	}
	if engine.AccountOf(err) != name {
		// the check itself could not be made (a service down, no network)
		fmt.Fprintf(out, "stored, not checked: %v (secrets in %s; keep auth test %s checks it later)\n", err, accts.Path(), name)
		return nil
	}
	if had && !force {
		keepNew, _, serr := accts.Saved(name)
		if serr != nil {
			return serr
		}
		if rerr := restore(); rerr != nil {
			return rerr
		}
		if _, oerr := engine.TestAccount(ctx, cfg, reg, accts, name); oerr == nil {
			return fmt.Errorf("%w; the secret stored before works and is kept (keep auth login %s --force stores the new one anyway)", err, name)
		}
		// the old one is refused too: the new one, as the person gave it
		if rerr := keepNew(); rerr != nil {
			return rerr
		}
	}
	return fmt.Errorf("stored, but refused: %w", err)
}

// awaitResumed says which of the workflows that waited for the account
// the running keep resumed once it saw the sign-in (its watch on the
// credentials file does it), and which still wait after a while.
func awaitResumed(ctx context.Context, out io.Writer, api api.API, name string, waiting []string, news <-chan api.Notification) error {
	if len(waiting) == 0 {
		return nil
	}
	left := map[string]bool{}
	for _, w := range waiting {
		left[w] = true
	}
	limit := time.NewTimer(15 * time.Second)
	defer limit.Stop()
	for len(left) > 0 {
		wfs, err := api.Workflows(ctx)
		if err != nil {
			return err
		}
		still := map[string]bool{}
		for _, w := range engine.WaitingOn(wfs, name) {
			still[w] = true
		}
		for _, w := range waiting {
			if left[w] && !still[w] {
				fmt.Fprintf(out, "resumed %s\n", w)
				delete(left, w)
			}
		}
		if len(left) == 0 {
			break
		}
		select {
		case <-news:
			continue
		case <-limit.C:
		case <-ctx.Done():
		}
		break
	}
	for _, w := range waiting {
		if left[w] {
			fmt.Fprintf(out, "%s still waits: the running keep has not resumed it yet (see keep attention)\n", w)
		}
	}
	return nil
}

// afterSignIn resumes what waited for the account through this process's
// own engine. When another keep holds the database, its watch on the
// credentials file resumes what waited.
func (s *Site) afterSignIn(ctx context.Context, out io.Writer, name string) error {
	got, err := s.Get(ctx, OpenHere)
	var le *engine.LockedError
	if errors.As(err, &le) {
		fmt.Fprintf(out, "the keep holding the database takes up the sign-in to %s (keep attention shows what still waits)\n", name)
		return nil
	}
	if err != nil {
		return err
	}
	resumed, err := got.Engine.SignedIn(ctx, name)
	if err != nil {
		return err
	}
	for _, w := range resumed {
		fmt.Fprintf(out, "resumed %s\n", w)
	}
	return nil
}
