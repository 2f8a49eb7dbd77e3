package sandbox

import "slices"

// Operation is one ctx operation that is not a connector method, as the
// reference (`keep help api`, keep.d.ts) documents it. The phases come from
// the same rules the facade enforces, so the reference cannot drift from
// what a script may do.
type Operation struct {
	Name      string  // "publish"
	Signature string  // TypeScript, without the name: "(topic: string | string[], event: { ... }): Promise<void>"
	Phases    []Phase // where it may be called
	Refused   string  // why it is refused elsewhere
	Doc       string
	Example   string
}

// Phases lists the handler phases in the order a consumer runs them, the
// producer first.
func Phases() []Phase { return []Phase{PhaseProducer, PhasePrepare, PhaseMutate, PhaseNext} }

// Operations lists ctx's own operations (console included) and where each
// may run.
func Operations() []Operation {
	return []Operation{
		{Name: "registerInput", Phases: ruleRegisterInput.phases, Refused: ruleRegisterInput.reason,
			Signature: "(input: { source: string, type: string, id: string | number, title: string }): string",
			Doc: "Registers what a producer found as an input of the workflow and returns its inputId, \"source:type:id\"; the same source, type and id " +
				"always give the same input, so a producer may see the same thing again, and an inputId kept from an earlier run still names it. " +
				"source and type must be known (see Input sources).",
			Example: `const inputId = ctx.registerInput({ source: "files", type: "file", id: f.path, title: "Note " + f.name })`},
		{Name: "publish", Phases: rulePublish.phases, Refused: rulePublish.reason,
			Signature: "(topic: string | string[], event: { messageId: string | number, inputId?: string, payload?: any }): Promise<void>",
			Doc: "Publishes an event on topics the handler lists in publishes. The messageId is the event's identity on the topic: " +
				"publishing it again replaces the payload and keeps its status, so an item seen twice is still handled once. Producers pass the inputId that registerInput returned; next passes none (its events are caused by the reserved events' inputs).",
			Example: `await ctx.publish("note.found", { messageId: f.path, inputId, payload: { name: f.name } })`},
		{Name: "peek", Phases: ruleTopicRead.phases, Refused: ruleTopicRead.reason,
			Signature: "(topic: string, options?: { limit?: number }): Promise<Keep.Event[]>",
			Doc:       "Lists the pending events of a subscribed topic, oldest first (limit: default 100, at most 1000).",
			Example:   `const [e] = await ctx.peek("note.found", { limit: 1 })`},
		{Name: "getByIds", Phases: ruleTopicRead.phases, Refused: ruleTopicRead.reason,
			Signature: "(topic: string, ids: string[]): Promise<Keep.Event[]>",
			Doc:       "Fetches events of a subscribed topic by messageId, whatever their status.",
			Example:   `const seen = await ctx.getByIds("note.found", ["inbox/a.txt"])`},
		{Name: "console", Phases: Phases(),
			Signature: "(...values: any[]): void",
			Doc:       "Writes a line to the run's trace (keep logs WORKFLOW); not a ctx member but a global.",
			Example:   `console.log("found", files.length, "notes")`},
	}
}

// PhaseOfKind lists the phases in which a connector method of the kind may
// be called: reads in producers and prepare, mutations only in mutate.
func PhaseOfKind(kind MethodKind) []Phase {
	return slices.Clone(kindRule(kind, PhaseProducer).phases)
}

// PhaseDoc says what a phase is for, what its handler is given and what it
// returns.
type PhaseDoc struct {
	Phase   Phase
	Doc     string
	Args    string // TypeScript parameters after ctx
	Returns string
}

// PhaseDocs documents every phase, in order.
func PhaseDocs() []PhaseDoc {
	return []PhaseDoc{
		{Phase: PhaseProducer, Args: "state", Returns: "the new state (undefined: none)",
			Doc: "Runs on its schedule. Reads the outside world, registers what it finds as inputs and publishes one event per thing."},
		{Phase: PhasePrepare, Args: "state", Returns: "{ reservations: [{ topic, ids }], data, ui?: { title }, wakeAt? }",
			Doc: "Runs when events are pending (or at wakeAt). Peeks at events, may read, and decides: it reserves the events it " +
				"will handle and puts in data everything mutate needs. The ui title is what an approval shows. wakeAt (an ISO time) asks to run again then."},
		{Phase: PhaseMutate, Args: "prepared", Returns: "nothing",
			Doc: "Makes at most one mutator call from prepared.data, and nothing else: no reads, no publishing. The call is terminal: " +
				"the host takes over, records it in the ledger, asks for approval where the grants say so, and performs it exactly once."},
		{Phase: PhaseNext, Args: "prepared, mutationResult", Returns: "the new state (undefined: keep it)",
			Doc: `Always runs after mutate. mutationResult.status is "applied" (with .result), "none" (mutate called nothing) or ` +
				`"skipped" (rejected or skipped by you). May publish follow-up events; the reserved events are then done.`},
	}
}
