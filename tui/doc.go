// Package tui is keep's terminal front end: five panes (Workflows, Inputs →
// Outputs, Attention, Run log, Accounts) over an engine.API, so it runs the same whether
// the engine is in this process or a daemon it is attached to.
//
// The engine never calls into the UI: Run bridges api.SubscribeScreen() into the
// program, and each notification makes the panes re-read what they show in a
// tea.Cmd. Nothing here polls.
package tui
