// Package reference generates keep's scripting reference — `keep help api`
// as text or JSON, and the TypeScript declarations of keep.d.ts — from the
// two declarations the host itself runs on: the sandbox's phase rules and the
// connectors registry. A method the sandbox exposes is therefore documented,
// and Problems says when its documentation is incomplete.
package reference

import (
	"fmt"
	"slices"
	"strings"

	"keep/connectors"
	"keep/sandbox"
)

// Ref is the whole reference.
type Ref struct {
	// File is a whole workflow file (FileExample).
	File       string         `json:"file"`
	Schedules  []ScheduleForm `json:"schedules"`
	Phases     []Phase        `json:"phases"`
	Operations []Operation    `json:"operations"`
	Sources    []Source       `json:"input_sources"`
	Connectors []Connector    `json:"connectors"`
}

// Phase is one handler phase and what it may call.
type Phase struct {
	Name    string   `json:"name"`
	Doc     string   `json:"doc"`
	Args    string   `json:"args"` // after ctx
	Returns string   `json:"returns"`
	Allows  []string `json:"allows"` // "ctx.publish", "reads", "mutations"
}

// Operation is one of ctx's own operations.
type Operation struct {
	Name      string   `json:"name"`
	Signature string   `json:"signature"`
	Phases    []string `json:"phases"`
	Refused   string   `json:"refused_elsewhere,omitempty"`
	Doc       string   `json:"doc"`
	Example   string   `json:"example"`
}

// Source is an input source of ctx.registerInput.
type Source struct {
	Name  string   `json:"name"`
	Types []string `json:"types"`
}

// Connector is one name under which ctx offers a connector.
type Connector struct {
	Name string `json:"name"`
	// AliasOf names the connector this one is another name of (gmail → mail).
	AliasOf string   `json:"alias_of,omitempty"`
	Methods []Method `json:"methods"`
}

// Method is one connector method.
type Method struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"` // read, read_by_id, mutate
	Phases    []string `json:"phases"`
	Doc       string   `json:"doc"`
	Args      []Arg    `json:"args"`
	Result    string   `json:"result"`
	Reconcile string   `json:"reconcile,omitempty"`
	Example   string   `json:"example"`
}

// Arg is one field of a method's argument object.
type Arg struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	Doc      string `json:"doc,omitempty"`
}

// Build reads the reference off the sandbox and the registry.
func Build(reg *connectors.Registry) Ref {
	r := Ref{File: FileExample, Schedules: ScheduleForms}
	ops := sandbox.Operations()
	for _, pd := range sandbox.PhaseDocs() {
		p := Phase{Name: string(pd.Phase), Doc: pd.Doc, Args: pd.Args, Returns: pd.Returns}
		for _, op := range ops {
			if slices.Contains(op.Phases, pd.Phase) && op.Name != "console" {
				p.Allows = append(p.Allows, "ctx."+op.Name)
			}
		}
		for _, k := range []struct {
			kind sandbox.MethodKind
			what string
		}{{sandbox.KindRead, "connector reads"}, {sandbox.KindMutate, "one connector mutation (terminal)"}} {
			if slices.Contains(sandbox.PhaseOfKind(k.kind), pd.Phase) {
				p.Allows = append(p.Allows, k.what)
			}
		}
		p.Allows = append(p.Allows, "console")
		r.Phases = append(r.Phases, p)
	}
	for _, op := range ops {
		r.Operations = append(r.Operations, Operation{Name: op.Name, Signature: op.Signature, Phases: phaseNames(op.Phases),
			Refused: op.Refused, Doc: op.Doc, Example: op.Example})
	}
	for _, s := range reg.Sources() {
		r.Sources = append(r.Sources, Source{Name: s.Name, Types: s.Types})
	}
	for _, name := range reg.Names() {
		c, _ := reg.Get(name)
		rc := Connector{Name: name}
		if c.Name() != name {
			rc.AliasOf = c.Name()
		}
		for _, m := range c.Methods() {
			// An MCP server writes these (its tools' names, descriptions
			// and schemas): shown escaped, here where every output of the
			// reference (text, keep.d.ts, MCP) is read from.
			rm := Method{Name: shown(m.Name), Kind: string(m.Kind), Phases: phaseNames(sandbox.PhaseOfKind(sandbox.MethodKind(m.Kind))),
				Doc: shown(m.Doc), Result: shown(m.Result), Reconcile: shown(m.Reconcile), Example: shown(m.Example), Args: []Arg{}}
			for _, a := range m.Args {
				rm.Args = append(rm.Args, Arg{Name: shown(a.Name), Type: shown(a.TS()), Required: a.Required, Doc: shown(a.Doc)})
			}
			rc.Methods = append(rc.Methods, rm)
		}
		r.Connectors = append(r.Connectors, rc)
	}
	return r
}

// Only narrows the reference to one connector (by any of its names); the
// phases and operations stay, as every method is read in their light.
func (r Ref) Only(name string) (Ref, error) {
	var names []string
	var grouped []Connector
	for _, c := range r.Connectors {
		if c.Name == name {
			r.Connectors = []Connector{c}
			return r, nil
		}
		if strings.HasPrefix(c.Name, name+".") { // "mcp": every mcp.NAME
			grouped = append(grouped, c)
		}
		names = append(names, c.Name)
	}
	if len(grouped) > 0 {
		r.Connectors = grouped
		return r, nil
	}
	return r, fmt.Errorf("no connector %q (known: %s)", name, strings.Join(names, ", "))
}

func phaseNames(ps []sandbox.Phase) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}
