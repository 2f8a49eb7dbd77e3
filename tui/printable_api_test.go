package tui

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"keep/engine"
)

// evil is what the planted engine puts in every string and error: a screen
// clear, a window title, and a Hangul filler that hides as a blank.
const evil = "\x1b[2J\x1b]0;owned\x07\u3164"

// plantedAPI answers every engine.API method with a value whose every
// string (and error text) is evil. Written out method by method: a method
// added to engine.API fails to compile here and in printableAPI alike.
type plantedAPI struct{}

var _ engine.API = plantedAPI{}

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

func (plantedAPI) Workflows(context.Context) ([]engine.WorkflowView, error) {
	return planted[[]engine.WorkflowView]()
}
func (plantedAPI) Workflow(context.Context, string) (*engine.WorkflowDetail, error) {
	return planted[*engine.WorkflowDetail]()
}
func (plantedAPI) Inputs(context.Context, string, engine.Page) ([]engine.InputView, error) {
	return planted[[]engine.InputView]()
}
func (plantedAPI) Events(context.Context, string, engine.EventFilter) ([]engine.EventView, error) {
	return planted[[]engine.EventView]()
}
func (plantedAPI) Runs(context.Context, string, engine.Page) ([]engine.RunView, error) {
	return planted[[]engine.RunView]()
}
func (plantedAPI) Mutations(context.Context, string, string) ([]engine.MutationView, error) {
	return planted[[]engine.MutationView]()
}
func (plantedAPI) Trace(context.Context, string) ([]engine.TraceLine, error) {
	return planted[[]engine.TraceLine]()
}
func (plantedAPI) Attention(context.Context) ([]engine.AttentionItem, error) {
	return planted[[]engine.AttentionItem]()
}
func (plantedAPI) Grants(context.Context, string) ([]engine.GrantView, error) {
	return planted[[]engine.GrantView]()
}
func (plantedAPI) Deploy(context.Context, string, []byte, string) (*engine.DeployResult, error) {
	return planted[*engine.DeployResult]()
}
func (plantedAPI) RunNow(context.Context, string) error                  { return errPlanted }
func (plantedAPI) Pause(context.Context, string) error                   { return errPlanted }
func (plantedAPI) Resume(context.Context, string) error                  { return errPlanted }
func (plantedAPI) Retry(context.Context, string) error                   { return errPlanted }
func (plantedAPI) Approve(context.Context, string, bool) error           { return errPlanted }
func (plantedAPI) ApproveWide(context.Context, string) error             { return errPlanted }
func (plantedAPI) Reject(context.Context, string) error                  { return errPlanted }
func (plantedAPI) Resolve(context.Context, string, engine.Answer) error  { return errPlanted }
func (plantedAPI) SkipEvents(context.Context, []string) error            { return errPlanted }
func (plantedAPI) SkipInput(context.Context, string) error               { return errPlanted }
func (plantedAPI) Grant(context.Context, string, engine.GrantView) error { return errPlanted }
func (plantedAPI) GrantReleasing(context.Context, string, engine.GrantView) (int, error) {
	return 0, errPlanted
}
func (plantedAPI) RejectProposal(context.Context, string) error { return errPlanted }
func (plantedAPI) Accounts(context.Context) ([]engine.AccountView, error) {
	return planted[[]engine.AccountView]()
}
func (plantedAPI) DryRun(context.Context, string, engine.TryOptions) (*engine.TryReport, error) {
	return planted[*engine.TryReport]()
}
func (plantedAPI) Script(context.Context, string) (*engine.ScriptView, error) {
	return planted[*engine.ScriptView]()
}
func (plantedAPI) Propose(context.Context, engine.ProposalRequest) (*engine.ProposalView, error) {
	return planted[*engine.ProposalView]()
}
func (plantedAPI) AcceptProposal(context.Context, string) (*engine.DeployResult, error) {
	return planted[*engine.DeployResult]()
}
func (plantedAPI) Subscribe() (<-chan engine.Notification, func()) {
	ch := make(chan engine.Notification, 1)
	n, _ := planted[engine.Notification]()
	ch <- n
	close(ch)
	return ch, func() {}
}
func (plantedAPI) Info() engine.Info {
	info, _ := planted[engine.Info]()
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
			var x any
			if json.Unmarshal(v.Bytes(), &x) == nil {
				rawIn(reflect.ValueOf(&x).Elem(), path+"(json)", found)
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
	api := reflect.TypeFor[printableAPI]()
	if !api.Implements(reflect.TypeFor[engine.API]()) || !api.Implements(reflect.TypeFor[engine.AccountLister]()) {
		t.Fatal("printableAPI is not an engine.API and an AccountLister")
	}
	w := reflect.ValueOf(printableAPI{api: plantedAPI{}})
	for i := 0; i < api.NumMethod(); i++ {
		m := api.Method(i)
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
			if m.Name == "Subscribe" {
				ch := outs[0].Interface().(<-chan engine.Notification)
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
