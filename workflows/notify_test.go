package workflows

import (
	"strings"
	"sync"
	"testing"

	"keep/connectors"
	filesconn "keep/connectors/files"
	"keep/connectors/notify"
	"keep/engine/api"
	"keep/engine/config"
)

// notifications collects what the notify connector shows. There is no
// notify-send: the sink (the TUI's toast in keep) receives it, so a test
// never pops a real desktop notification.
type notifications struct {
	mu   sync.Mutex
	told []string // "title | body"
}

func (n *notifications) register(t *testing.T, reg *connectors.Registry) {
	nc, err := notify.New(notify.Config{Command: "keep-test-no-such-notifier", Sink: func(title, body string) bool {
		n.mu.Lock()
		n.told = append(n.told, title+" | "+body)
		n.mu.Unlock()
		return true
	}})
	if err != nil {
		t.Fatal(err)
	}
	reg.Register(nc)
}

func (n *notifications) list() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.told...)
}

func TestBigFilesNotify(t *testing.T) {
	t.Parallel()
	var n notifications
	h := newHost(t, hostOpt{edit: allowAll, registry: func(cfg config.Config, _ *clock) *connectors.Registry {
		reg := connectors.NewRegistry()
		fc, err := filesconn.New(filesconn.Config{Roots: cfg.Connectors.Files.Roots})
		if err != nil {
			t.Fatal(err)
		}
		reg.Register(fc)
		n.register(t, reg)
		return reg
	}})
	h.Write("downloads/big.iso", strings.Repeat("x", 11<<20))
	h.Write("downloads/small.txt", "hello")
	h.Deploy("big-files-notify", source(t, "big-files-notify.js"))
	h.Drain()

	told := n.list()
	if len(told) != 1 || !strings.Contains(told[0], "Large download: big.iso") || !strings.Contains(told[0], "11 MB") {
		t.Fatalf("notifications = %q, want one about big.iso", told)
	}
	ins := h.Inputs("big-files-notify")
	if len(ins) != 2 {
		t.Fatalf("inputs = %v", titles(ins))
	}
	for _, in := range ins {
		if in.Status != api.InputDone {
			t.Errorf("%s is %s, want done", in.Title, in.Status)
		}
		switch {
		case strings.HasPrefix(in.Title, "File big.iso (11 MB)"):
			if len(in.Outputs) != 1 || in.Outputs[0].Method != "send" || in.Outputs[0].Status != "applied" {
				t.Errorf("big.iso outputs = %+v", in.Outputs)
			}
		case strings.HasPrefix(in.Title, "File small.txt"):
			if len(in.Outputs) != 0 {
				t.Errorf("small.txt caused %+v, want no change", in.Outputs)
			}
		default:
			t.Errorf("unexpected input %q", in.Title)
		}
	}
}
