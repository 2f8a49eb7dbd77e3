package tui

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"keep/engine"
	"keep/engine/api"
)

// evil is what the planted engine puts in every string and error: a screen
// clear, a window title, and a Hangul filler that hides as a blank.
const evil = "\x1b[2J\x1b]0;owned\x07\u3164"

// plantedAPI answers every engine.API method with a value whose every
// string (and error text) is evil. Written out method by method: a method
// added to engine.API fails to compile here and in printableAPI alike.
type plantedAPI struct{}

var _ api.API = plantedAPI{}

var errPlanted = errors.New("failed: " + evil)

func planted[T any]() (T, error) {
	var v T
	fill(reflect.ValueOf(&v).Elem(), 0)
	return v, errPlanted
}

func fill(v reflect.Value, depth int) {
	if depth > 8 || !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(evil)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.Type() == rawJSON {
			b, _ := json.Marshal(map[string]string{evil: evil})
			v.SetBytes(b)
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMapWithSize(v.Type(), 1)
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	}
}

var rawJSON = reflect.TypeFor[json.RawMessage]()

func (plantedAPI) Workflows(context.Context) ([]api.WorkflowView, error) {
	return planted[[]api.WorkflowView]()
}
func (plantedAPI) Workflow(context.Context, string) (*api.WorkflowDetail, error) {
	return planted[*api.WorkflowDetail]()
}
func (plantedAPI) Inputs(context.Context, string, api.Page) ([]api.InputView, error) {
	return planted[[]api.InputView]()
}
func (plantedAPI) Events(context.Context, string, api.EventFilter) ([]api.EventView, error) {
	return planted[[]api.EventView]()
}
func (plantedAPI) Runs(context.Context, string, api.Page) ([]api.RunView, error) {
	return planted[[]api.RunView]()
}
func (plantedAPI) Mutations(context.Context, string, string) ([]api.MutationView, error) {
	return planted[[]api.MutationView]()
}
func (plantedAPI) Trace(context.Context, string) ([]api.TraceLine, error) {
	return planted[[]api.TraceLine]()
}
func (plantedAPI) Attention(context.Context) ([]api.AttentionItem, error) {
	return planted[[]api.AttentionItem]()
}
func (plantedAPI) Grants(context.Context, string) ([]api.GrantView, error) {
	return planted[[]api.GrantView]()
}
func (plantedAPI) Deploy(context.Context, string, []byte, string) (*api.DeployResult, error) {
	return planted[*api.DeployResult]()
}
func (plantedAPI) RunNow(context.Context, string) error               { return errPlanted }
func (plantedAPI) Pause(context.Context, string) error                { return errPlanted }
func (plantedAPI) Resume(context.Context, string) error               { return errPlanted }
func (plantedAPI) Retry(context.Context, string) error                { return errPlanted }
func (plantedAPI) Approve(context.Context, string, bool) error        { return errPlanted }
func (plantedAPI) ApproveWide(context.Context, string) error          { return errPlanted }
func (plantedAPI) Reject(context.Context, string) error               { return errPlanted }
func (plantedAPI) Resolve(context.Context, string, api.Answer) error  { return errPlanted }
func (plantedAPI) SkipEvents(context.Context, []string) error         { return errPlanted }
func (plantedAPI) SkipInput(context.Context, string) error            { return errPlanted }
func (plantedAPI) Grant(context.Context, string, api.GrantView) error { return errPlanted }
func (plantedAPI) GrantReleasing(context.Context, string, api.GrantView) (int, error) {
	return 0, errPlanted
}
func (plantedAPI) RejectProposal(context.Context, string) error { return errPlanted }
func (plantedAPI) Accounts(context.Context) ([]engine.AccountView, error) {
	return planted[[]engine.AccountView]()
}
func (plantedAPI) DryRun(context.Context, string, api.TryOptions) (*api.TryReport, error) {
	return planted[*api.TryReport]()
}
func (plantedAPI) Script(context.Context, string) (*api.ScriptView, error) {
	return planted[*api.ScriptView]()
}
func (plantedAPI) Propose(context.Context, api.ProposalRequest) (*api.ProposalView, error) {
	return planted[*api.ProposalView]()
}
func (plantedAPI) AcceptProposal(context.Context, string) (*api.DeployResult, error) {
	return planted[*api.DeployResult]()
}
func (plantedAPI) Subscribe() (<-chan api.Notification, func()) {
	ch := make(chan api.Notification, 1)
	n, _ := planted[api.Notification]()
	ch <- n
	close(ch)
	return ch, func() {}
}
func (p plantedAPI) SubscribeScreen() (<-chan api.Notification, func()) { return p.Subscribe() }
func (plantedAPI) Info() api.Info {
	info, _ := planted[api.Info]()
	return info
}

// rawIn lists the strings reachable from v that still hold a character
// printable escapes; json.RawMessage is decoded and its strings checked.
func rawIn(v reflect.Value, path string, found *[]string) {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); PrintableString(s) != s {
			*found = append(*found, path)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			rawIn(v.Elem(), path, found)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				rawIn(v.Field(i), path+"."+v.Type().Field(i).Name, found)
			}
		}
	case reflect.Slice:
		if v.Type() == rawJSON {
			// shown as JSON text (a card's arguments, a payload): the text
			// is what must be printable, and it must stay JSON
			if s := string(v.Bytes()); PrintableString(s) != s || !json.Valid(v.Bytes()) {
				*found = append(*found, path+"(json)")
			}
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := 0; i < v.Len(); i++ {
			rawIn(v.Index(i), path+"[]", found)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			rawIn(it.Key(), path+"{key}", found)
			rawIn(it.Value(), path+"{}", found)
		}
	}
}

func TestEveryEngineMethodReachesTheTUIEscaped(t *testing.T) {
	t.Parallel()
	// every method of the wrapper: engine.API's (the compiler holds the
	// wrapper to all of them) and the optional ones it answers (Accounts)
	apiHost := reflect.TypeFor[printableAPI]()
	if !apiHost.Implements(reflect.TypeFor[api.API]()) || !apiHost.Implements(reflect.TypeFor[engine.AccountLister]()) {
		t.Fatal("printableAPI is not an engine.API and an AccountLister")
	}
	w := reflect.ValueOf(printableAPI{api: plantedAPI{}})
	for i := 0; i < apiHost.NumMethod(); i++ {
		m := apiHost.Method(i)
		t.Run(m.Name, func(t *testing.T) {
			fn := w.MethodByName(m.Name)
			if !fn.IsValid() {
				t.Fatalf("printableAPI has no %s", m.Name)
			}
			args := make([]reflect.Value, fn.Type().NumIn())
			for j := range args {
				args[j] = reflect.New(fn.Type().In(j)).Elem()
				if fn.Type().In(j) == reflect.TypeFor[context.Context]() {
					args[j] = reflect.ValueOf(context.Background())
				}
			}
			outs := fn.Call(args)
			if m.Name == "Subscribe" || m.Name == "SubscribeScreen" {
				ch := outs[0].Interface().(<-chan api.Notification)
				defer outs[1].Interface().(func())()
				outs = []reflect.Value{reflect.ValueOf(<-ch)}
			}
			var found []string
			for _, o := range outs {
				if err, ok := o.Interface().(error); ok {
					if s := err.Error(); PrintableString(s) != s {
						found = append(found, "error")
					}
					continue
				}
				rawIn(o, m.Name, &found)
			}
			if len(found) > 0 {
				t.Errorf("%s passes raw text through: %s", m.Name, strings.Join(found, ", "))
			}
		})
	}
}
